export { portalRoutes } from './portal.routes.ts'
