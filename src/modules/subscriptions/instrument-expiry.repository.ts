import { sql } from 'kysely'
import type { Executor } from '../../db/database.ts'
import { storeBillsOf, storeClockOf } from '../stores/index.ts'

export interface ExpiringInstrument {
  subscription_id: string
  store_id: string
  payment_instrument_id: string
  next_charge_at: Date
  expiry_month: number
  expiry_year: number
}

/**
 * Active subscriptions whose card on file expires before their next renewal (the card works through
 * the last day of its expiry month, UTC), found from `noticeDays` before the card's end on the
 * store's clock (an already expired card at once). Only platform cards have a known expiry (the test gateway keeps none).
 * For the notifications module's daily check (src/modules/notifications/expiry-check.ts).
 */
export function findInstrumentsExpiringBeforeRenewal(
  db: Executor,
  now: Date,
  { noticeDays, limit, storeId, afterId }: { noticeDays: number; limit: number; storeId?: string; afterId?: string },
): Promise<ExpiringInstrument[]> {
  const cardEnds = sql<Date>`make_timestamptz(s.payment_instrument_expiry_year, s.payment_instrument_expiry_month, 1, 0, 0, 0, 'UTC') + interval '1 month'`
  let query = db
    .selectFrom('subscriptions as s')
    .select([
      's.id as subscription_id',
      's.store_id',
      's.payment_instrument_id',
      's.next_charge_at',
      's.payment_instrument_expiry_month',
      's.payment_instrument_expiry_year',
    ])
    .where('s.status', '=', 'active')
    .where('s.cancel_at_period_end', '=', false)
    .where('s.next_charge_at', 'is not', null)
    .where('s.payment_instrument_expiry_month', '>=', 1)
    .where('s.payment_instrument_expiry_month', '<=', 12)
    .where('s.payment_instrument_expiry_year', '>=', 2000)
    .where('s.payment_instrument_expiry_year', '<=', 2999)
    .where(storeBillsOf('s.store_id'))
    .where(sql<boolean>`${cardEnds} <= s.next_charge_at`)
    .where(sql<boolean>`${cardEnds} - make_interval(days => ${noticeDays}) <= ${storeClockOf('s.store_id', now)}`)
  if (storeId) query = query.where('s.store_id', '=', storeId)
  // Paged by id: a caller walks them all, `afterId` the last id of the previous page.
  if (afterId) query = query.where('s.id', '>', afterId)
  return query
    .orderBy('s.id')
    .limit(limit)
    .execute()
    .then((rows) =>
      rows.map((row) => ({
        subscription_id: row.subscription_id,
        store_id: row.store_id,
        payment_instrument_id: row.payment_instrument_id,
        next_charge_at: row.next_charge_at!,
        expiry_month: row.payment_instrument_expiry_month!,
        expiry_year: row.payment_instrument_expiry_year!,
      })),
    )
}
