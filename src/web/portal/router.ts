import { createRouter } from '../shared/router.ts'

/** The portal's routes under /portal (src/web/shared/router.ts moves between them). */
export type Route =
  | { name: 'home'; store: string | null }
  | { name: 'login'; store: string | null }
  | { name: 'subscription'; id: string }
  | { name: 'change-requests' }
  | { name: 'not-found' }

export const ROOT = '/portal'

export const router = createRouter(ROOT)
export const { navigate, rewriteAddress } = router

export function parseRoute(location: Location | URL): Route {
  const path = location.pathname.replace(/\/+$/, '') || '/'
  const params = new URLSearchParams(location.search)
  const store = params.get('store')
  if (path === ROOT) return { name: 'home', store }
  if (path === `${ROOT}/login`) return { name: 'login', store }
  if (path === `${ROOT}/change-requests`) return { name: 'change-requests' }
  const detail = new RegExp(`^${ROOT}/subscriptions/([^/]+)$`).exec(path)
  if (detail) return { name: 'subscription', id: decodeURIComponent(detail[1]!) }
  return { name: 'not-found' }
}

export function subscriptionPath(id: string): string {
  return `${ROOT}/subscriptions/${encodeURIComponent(id)}`
}

export function signInPath(storeHash: string | null): string {
  return storeHash ? `${ROOT}?store=${encodeURIComponent(storeHash)}` : ROOT
}
