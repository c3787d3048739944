/** Routes under /console, kept in the address bar with the History API. */

export type Route =
  | { name: 'overview' }
  | { name: 'subscriptions'; params: URLSearchParams }
  | { name: 'subscription'; id: string }
  | { name: 'attention' }
  | { name: 'webhooks' }
  | { name: 'webhook'; id: string }
  | { name: 'catalogue' }
  | { name: 'discounts' }
  | { name: 'settings' }
  | { name: 'not-found' }

export const ROOT = '/console'

export function parseRoute(location: Location | URL): Route {
  const path = location.pathname.replace(/\/+$/, '') || '/'
  const rest = path === ROOT ? '' : path.startsWith(`${ROOT}/`) ? path.slice(ROOT.length + 1) : null
  if (rest === null) return { name: 'not-found' }
  const [first, second, ...more] = rest.split('/')
  if (more.length > 0) return { name: 'not-found' }
  switch (first) {
    case '':
      return { name: 'overview' }
    case 'subscriptions':
      return second ? { name: 'subscription', id: decodeURIComponent(second) } : { name: 'subscriptions', params: new URLSearchParams(location.search) }
    case 'attention':
      return second ? { name: 'not-found' } : { name: 'attention' }
    case 'webhooks':
      return second ? { name: 'webhook', id: decodeURIComponent(second) } : { name: 'webhooks' }
    case 'catalogue':
      return second ? { name: 'not-found' } : { name: 'catalogue' }
    case 'discounts':
      return second ? { name: 'not-found' } : { name: 'discounts' }
    case 'settings':
      return second ? { name: 'not-found' } : { name: 'settings' }
    default:
      return { name: 'not-found' }
  }
}

export const paths = {
  overview: ROOT,
  subscriptions: (params?: Record<string, string | null | undefined>) => {
    const search = new URLSearchParams()
    for (const [name, value] of Object.entries(params ?? {})) if (value) search.set(name, value)
    const text = search.toString()
    return `${ROOT}/subscriptions${text ? `?${text}` : ''}`
  },
  subscription: (id: string) => `${ROOT}/subscriptions/${encodeURIComponent(id)}`,
  attention: `${ROOT}/attention`,
  webhooks: `${ROOT}/webhooks`,
  webhook: (id: string) => `${ROOT}/webhooks/${encodeURIComponent(id)}`,
  catalogue: `${ROOT}/catalogue`,
  discounts: `${ROOT}/discounts`,
  settings: `${ROOT}/settings`,
}

let listener: () => void = () => {}

export function startRouter(onChange: () => void): void {
  listener = onChange
  window.addEventListener('popstate', () => listener())
}

export function navigate(path: string, { replace = false }: { replace?: boolean } = {}): void {
  if (replace) history.replaceState(null, '', path)
  else history.pushState(null, '', path)
  listener()
}

/** In-app links go through the router: no reload, and the focus lands on the new page's heading. */
export function onLinkClick(event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  const anchor = (event.target as Element | null)?.closest?.('a')
  if (!anchor || anchor.target || anchor.hasAttribute('download')) return
  const url = new URL(anchor.href, location.href)
  if (url.origin !== location.origin || !(url.pathname === ROOT || url.pathname.startsWith(`${ROOT}/`))) return
  event.preventDefault()
  if (url.pathname + url.search !== location.pathname + location.search) navigate(url.pathname + url.search)
  else listener()
}
