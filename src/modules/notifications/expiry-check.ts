import type { Db } from '../../db/database.ts'
import { enqueueMany, handleJob, type JobHandler } from '../../jobs/job-kinds.ts'
import { runAgainIn } from '../../jobs/runner.ts'
import type { Clock } from '../../lib/clock.ts'
import { sha256Hex } from '../../lib/secrets.ts'
import { findStoresByIds, isNotificationOn, storeNow } from '../stores/index.ts'
import { findInstrumentsExpiringBeforeRenewal, type ExpiringInstrument } from '../subscriptions/index.ts'
import { InstrumentExpiryCheck, sendEntry, SendNotification } from './notifications.jobs.ts'
import { loggedKeys } from './notifications.repository.ts'

const EVERY_MS = 24 * 3_600_000
/** How long before the card's end (or at once, when it has ended) the warning goes out. */
export const EXPIRY_NOTICE_DAYS = 30
const BATCH = 500

/** One warning per card and renewal: the key names both, so a new card or the next renewal warns again. */
export function expiryKey(subscriptionId: string, instrumentId: string, nextChargeAt: Date): string {
  return `instrument_expiring:${subscriptionId}:${sha256Hex(instrumentId).slice(0, 16)}:${nextChargeAt.toISOString()}`
}

/**
 * The daily check: subscriptions whose card on file expires before the next renewal get one
 * `payment_instrument_expiring` email per card and renewal. Keys already in the log (sent or tried)
 * or already queued are skipped; a store with the template off queues nothing.
 */
export async function queueExpiryWarnings(db: Db, clock: Clock, { storeId }: { storeId?: string } = {}): Promise<number> {
  let queued = 0
  let afterId: string | undefined
  for (;;) {
    const found = await findInstrumentsExpiringBeforeRenewal(db, clock.now(), { noticeDays: EXPIRY_NOTICE_DAYS, limit: BATCH, ...(storeId ? { storeId } : {}), ...(afterId ? { afterId } : {}) })
    queued += await queuePage(db, clock, found)
    if (found.length < BATCH) return queued
    afterId = found[found.length - 1]!.subscription_id
  }
}

async function queuePage(db: Db, clock: Clock, found: ExpiringInstrument[]): Promise<number> {
  if (found.length === 0) return 0
  const stores = await findStoresByIds(db, [...new Set(found.map((row) => row.store_id))])
  const candidates = found
    .filter((row) => isNotificationOn(stores.get(row.store_id)?.notifications, 'payment_instrument_expiring'))
    .map((row) => ({ row, key: expiryKey(row.subscription_id, row.payment_instrument_id, row.next_charge_at) }))
  if (candidates.length === 0) return 0
  const logged = await loggedKeys(db, candidates.map((c) => c.key))
  const due = candidates.filter((c) => !logged.has(c.key))
  await enqueueMany(
    db,
    SendNotification,
    due.map(({ row, key }) =>
      sendEntry({
        template: 'payment_instrument_expiring',
        store_id: row.store_id,
        subscription_id: row.subscription_id,
        dedupe_key: key,
        // On the store's clock, as every time a test store shows.
        occurred_at: storeNow(stores.get(row.store_id) ?? { test_clock_now: null }, clock).toISOString(),
        facts: { next_charge_at: row.next_charge_at.toISOString(), expiry_month: row.expiry_month, expiry_year: row.expiry_year },
      }),
    ),
  )
  return due.length
}

export function expiryCheckJob({ db, clock }: { db: Db; clock: Clock }): JobHandler {
  return handleJob(InstrumentExpiryCheck, async () => {
    await queueExpiryWarnings(db, clock)
    return runAgainIn(EVERY_MS)
  }, { recurring: { instances: 1 } })
}
