export { Onetime, type OnetimeView } from './onetime.schemas.ts'
export { createOnetimeService, markAddOnsCharged, pendingAddOns, presentOnetime, type OnetimeService } from './onetimes.service.ts'
export { onetimeAdminRoutes, onetimePortalRoutes, registerOnetimeRoutes } from './onetimes.routes.ts'
