/** Routes under /portal, kept in the address bar with the History API. */

export type Route =
  | { name: 'home'; store: string | null }
  | { name: 'login'; store: string | null }
  | { name: 'subscription'; id: string }
  | { name: 'change-requests' }
  | { name: 'not-found' }

export const ROOT = '/portal'

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

type Listener = () => void
let listener: Listener = () => {}
let current = ''

/** Starts listening for back/forward; `onChange` renders the route of the address bar. */
export function startRouter(onChange: Listener): void {
  listener = onChange
  current = location.pathname + location.search
  window.addEventListener('popstate', () => {
    // A fragment jump (the skip link) is not a new page.
    const next = location.pathname + location.search
    if (next === current) return
    current = next
    listener()
  })
}

export function navigate(path: string, { replace = false }: { replace?: boolean } = {}): void {
  if (replace) history.replaceState(null, '', path)
  else history.pushState(null, '', path)
  current = location.pathname + location.search
  listener()
}

/** Changes the address without rendering (to drop the sign-in token from it). */
export function rewriteAddress(path: string): void {
  history.replaceState(null, '', path)
  current = location.pathname + location.search
}

/**
 * A real link (it works with middle click, copy address and the keyboard), whose plain activation
 * stays inside the app.
 */
export function onLinkClick(event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  const anchor = (event.target as Element | null)?.closest('a')
  if (!anchor || anchor.target || anchor.hasAttribute('download')) return
  const url = new URL(anchor.href, location.href)
  if (url.origin !== location.origin || !(url.pathname === ROOT || url.pathname.startsWith(`${ROOT}/`))) return
  if (url.pathname === location.pathname && url.search === location.search && url.hash) return
  event.preventDefault()
  navigate(url.pathname + url.search)
}
