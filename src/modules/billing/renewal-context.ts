import type { Updateable } from 'kysely'
import type { ChargeRow, ChargesTable, Db, Executor, StoreRow } from '../../db/database.ts'
import { heldBy, LEASES } from '../../db/leases.ts'
export { isRowDataError as isRowError } from '../../db/errors.ts'
import type { Clock } from '../../lib/clock.ts'
import type { EventLog } from '../events/index.ts'
import type { SubscriptionWrites } from '../subscriptions/index.ts'
import type { PaymentGateway } from './gateways/index.ts'

/** What the renewal engine's parts (claim, collect, settle, refunds) share. */
export interface GatewayResolver {
  /** The gateway new charges of this store go through. */
  forStore(store: StoreRow): PaymentGateway
  /** The gateway an existing charge went through (its `gateway` column). */
  byName(name: string): PaymentGateway
}

export interface BillingLog {
  warn(object: object, message: string): void
  error(object: object, message: string): void
}

export interface BillingContext {
  db: Db
  /** Subscription rows change through the subscriptions module, with their events. */
  writes: SubscriptionWrites
  /** The event log, for charge events of their own (refunds). */
  events: EventLog
  /** The service clock; a test-mode store's own clock is read from its row. */
  clock: Clock
  /** Real time for leases, rechecks of unknown outcomes and their grace period (never a store's test clock): the system clock but in tests. */
  leaseClock: Clock
  gateways: GatewayResolver
  /** How long a holder owns a charge or refund before another worker may take it over. */
  leaseMs: number
  /** After this long with an unknown outcome a charge waits for a person. */
  unknownGraceMs: number
  /** What one platform renewal costs its store's API quota, as this process has measured it lately. */
  callsPerRenewal(): number
  /**
   * Whether claims spend the stores' platform budgets: only where this process's platform client feeds
   * them from the platform's headers. Spent with nothing to refill them, they would hold every store to
   * the default quota's worth.
   */
  budgeted: boolean
  log: BillingLog | undefined
}

/** One attempt to collect one period. */
export interface Attempt {
  charge: ChargeRow
  /** The period index the charge pays; -1 when rebuilt from the charge alone (recomputed at settle). */
  periodIndex: number
  /** Platform calls its claim reserved on the store's budget, given back when it ends. */
  reservedCalls?: number
}

export const realNow = (): Date => new Date()

/** The time a piece of work happens on the store's clock: a test clock runs work at its due time. */
export function storeTime(clock: Clock, store: StoreRow, dueAt: Date): Date {
  if (store.test_clock_now !== null) return dueAt
  const now = clock.now()
  return now > dueAt ? now : dueAt
}


/** The reason a person reads when a row is set aside: the error's text, bounded. */
export function describeFailure(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error)
  return text.length > 500 ? `${text.slice(0, 497)}...` : text
}

/**
 * Records that the request which can move money is about to leave, only while the lease is ours;
 * throws otherwise, and then nothing may be sent. Gateways without idempotency keys rely on it: once
 * submitted, a charge or refund is only ever looked up, never sent again.
 */
export async function markSubmitted(db: Executor, table: 'charges' | 'refunds', id: string, token: string): Promise<void> {
  const marked = await db
    .updateTable(table)
    .set({ submitted_at: realNow() })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where(heldBy(LEASES[table], token))
    .executeTakeFirst()
  if (Number(marked.numUpdatedRows) !== 1) throw new Error(`the ${table === 'charges' ? 'charge' : 'refund'} lease was lost before submitting; nothing was sent`)
}

/**
 * Writes `set` on a pending charge that has no platform order yet, only while its lease is `token`'s;
 * answers whether it did. Every step of raising a renewal's order records itself this way, so a worker
 * that stalled past its lease never writes over a charge another worker has taken over.
 */
export async function setOnOrderlessCharge(db: Executor, id: string, token: string, set: Updateable<ChargesTable>): Promise<boolean> {
  const written = await db
    .updateTable('charges')
    .set(set)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('platform_order_id', 'is', null)
    .where(heldBy(LEASES.charges, token))
    .executeTakeFirst()
  return Number(written.numUpdatedRows) === 1
}

/**
 * Records that a renewal's platform order is about to be asked for, only while the lease is ours;
 * throws otherwise, and then no order is requested. A worker that takes the charge over later waits
 * until this request can no longer be in flight before asking again (the platform takes no key).
 */
export async function markOrderRequested(db: Executor, id: string, token: string): Promise<void> {
  if (!(await setOnOrderlessCharge(db, id, token, { order_requested_at: realNow() }))) throw new Error('the charge lease was lost before its order was requested; nothing was sent')
}

/** Keeps a new platform cart on its charge while the lease is ours; throws when it is not (the cart is then left unused). */
export async function markCartKept(db: Executor, id: string, cartId: string, token: string): Promise<void> {
  if (!(await setOnOrderlessCharge(db, id, token, { platform_cart_id: cartId }))) throw new Error('the charge was taken over before its cart could be kept')
}

/**
 * Takes back the submission mark of a charge the gateway refused before doing anything (a 429,
 * a connection never opened): the next pass sends it again on the same charge and order. Only while
 * the lease is `token`'s, so a charge another worker has taken over keeps its mark.
 */
export async function unmarkSubmitted(db: Executor, id: string, token: string): Promise<void> {
  await db
    .updateTable('charges')
    .set({ submitted_at: null })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where(heldBy(LEASES.charges, token))
    .execute()
}
