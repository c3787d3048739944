import { monotonicFactory } from 'ulid'

/** Every resource's id prefix (docs/contract.md, Ids). */
export const ID_PREFIXES = {
  store: 'store',
  apiKey: 'key',
  product: 'prod',
  plan: 'plan',
  subscriber: 'cus',
  subscription: 'sub',
  charge: 'ch',
  refund: 're',
  changeRequest: 'cr',
  event: 'evt',
  webhookSubscription: 'wh',
  delivery: 'msg',
  retentionSave: 'rsv',
  notification: 'ntf',
  discount: 'disc',
  onetime: 'ot',
  priceChange: 'pc',
  import: 'imp',
  bulkOperation: 'bulk',
} as const

export type IdPrefix = (typeof ID_PREFIXES)[keyof typeof ID_PREFIXES]

// Monotonic: ids made in the same millisecond by this process still sort in creation order.
const nextUlid = monotonicFactory()

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid()}`
}

const ULID = '[0-9A-HJKMNP-TV-Z]{26}'

/** A pattern matching ids of one prefix, for route parameter schemas. */
export function idPattern(prefix: IdPrefix): string {
  return `^${prefix}_${ULID}$`
}
