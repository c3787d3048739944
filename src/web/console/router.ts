import { createRouter } from '../shared/router.ts'

/** The console's routes under /console (src/web/shared/router.ts moves between them). */
export type Route =
  | { name: 'overview' }
  | { name: 'subscriptions'; params: URLSearchParams }
  | { name: 'subscription'; id: string }
  | { name: 'subscriber'; id: string }
  | { name: 'attention' }
  | { name: 'webhooks' }
  | { name: 'webhook'; id: string }
  | { name: 'catalogue' }
  | { name: 'discounts' }
  | { name: 'settings' }
  | { name: 'import' }
  | { name: 'bulk-changes'; params: URLSearchParams }
  | { name: 'not-found' }

export const ROOT = '/console'

export const router = createRouter(ROOT)
export const { navigate } = router

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
    case 'subscribers':
      return second ? { name: 'subscriber', id: decodeURIComponent(second) } : { name: 'not-found' }
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
    case 'import':
      return second ? { name: 'not-found' } : { name: 'import' }
    case 'bulk-changes':
      return second ? { name: 'not-found' } : { name: 'bulk-changes', params: new URLSearchParams(location.search) }
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
  subscriber: (id: string) => `${ROOT}/subscribers/${encodeURIComponent(id)}`,
  attention: `${ROOT}/attention`,
  webhooks: `${ROOT}/webhooks`,
  webhook: (id: string) => `${ROOT}/webhooks/${encodeURIComponent(id)}`,
  catalogue: `${ROOT}/catalogue`,
  discounts: `${ROOT}/discounts`,
  settings: `${ROOT}/settings`,
  import: `${ROOT}/import`,
  bulkChanges: `${ROOT}/bulk-changes`,
}
