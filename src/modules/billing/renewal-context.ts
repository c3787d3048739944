import type { ChargeRow, Db, Executor, StoreRow } from '../../db/database.ts'
export { isRowDataError as isRowError } from '../../db/errors.ts'
import type { Clock } from '../../lib/clock.ts'
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
  /** The service clock; a test-mode store's own clock is read from its row. */
  clock: Clock
  gateways: GatewayResolver
  /** How long a holder owns a charge or refund before another worker may take it over. */
  leaseMs: number
  /** After this long with an unknown outcome a charge waits for a person. */
  unknownGraceMs: number
  log: BillingLog | undefined
}

/** One attempt to collect one period. */
export interface Attempt {
  charge: ChargeRow
  /** The period index the charge pays; -1 when rebuilt from the charge alone (recomputed at settle). */
  periodIndex: number
}

export const realNow = (): Date => new Date()

/** The time a piece of work happens on the store's clock: a test clock runs work at its due time. */
export function storeTime(clock: Clock, store: StoreRow, dueAt: Date): Date {
  if (store.test_clock_now !== null) return dueAt
  const now = clock.now()
  return now > dueAt ? now : dueAt
}

export async function loadStores(trx: Executor, ids: readonly string[]): Promise<Map<string, StoreRow>> {
  if (ids.length === 0) return new Map()
  const rows = await trx.selectFrom('stores').selectAll().where('id', 'in', [...new Set(ids)]).execute()
  return new Map(rows.map((row) => [row.id, row]))
}

/** The reason a person reads when a row is set aside: the error's text, bounded. */
export function describeFailure(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error)
  return text.length > 500 ? `${text.slice(0, 497)}...` : text
}
