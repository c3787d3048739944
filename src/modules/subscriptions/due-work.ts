import { sql } from 'kysely'
import type { Db, StoreRow, SubscriptionRow } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import type { EventType } from '../events/index.ts'
import { storeNow } from '../stores/index.ts'
import { applyMutation, type Mutation } from './subscription-mutation.ts'
import { scheduleAtActivation } from './subscription-schedule.ts'
import { transition } from './subscription-state.ts'

export type DueKind = 'activation' | 'resumption' | 'cancellation'

export interface DueCounts {
  activations: number
  resumptions: number
  cancellations: number
}

interface DueItem {
  kind: DueKind
  subscriptionId: string
  storeId: string
  dueAt: Date
}

/** What becomes true when a piece of due work runs, computed from the row alone. */
export function dueMutation(kind: DueKind, subscription: SubscriptionRow, store: StoreRow, dueAt: Date): Mutation {
  switch (kind) {
    case 'activation': {
      const afterTrial = subscription.trial_days > 0
      const cadence = { interval: subscription.interval, interval_count: subscription.interval_count, prepaid_cycles: subscription.prepaid_cycles_total }
      const schedule = scheduleAtActivation(dueAt, cadence, afterTrial, store.timezone)
      const events: EventType[] = ['subscription.activated']
      // After a trial nothing is paid yet: the renewal charge opens the first prepaid block.
      if (!afterTrial && subscription.prepaid_cycles_total !== null) events.push('prepaid.order_created')
      return { set: { status: transition(subscription.status, 'activate'), ...schedule }, events, at: dueAt }
    }
    case 'resumption':
      return { set: { status: transition(subscription.status, 'resume'), paused_at: null, resume_at: null }, events: ['subscription.resumed'], at: dueAt }
    case 'cancellation':
      return {
        set: { status: transition(subscription.status, 'cancel'), cancelled_at: dueAt, cancel_at_period_end: false, next_charge_at: null, resume_at: null },
        events: ['subscription.cancelled'],
        at: dueAt,
      }
  }
}

function stillDue(kind: DueKind, row: SubscriptionRow, dueAt: Date): boolean {
  switch (kind) {
    case 'activation':
      return row.status === 'pending' && row.start_at.getTime() === dueAt.getTime()
    case 'resumption':
      return row.status === 'paused' && row.resume_at?.getTime() === dueAt.getTime()
    case 'cancellation':
      return row.cancel_at_period_end && ['active', 'paused', 'past_due'].includes(row.status) && row.current_period_end?.getTime() === dueAt.getTime()
  }
}

/**
 * Finds work that is due on each store's own clock: pending subscriptions whose start has come,
 * paused ones whose resume date has come, and those set to cancel whose period has ended.
 */
async function findDue(db: Db, now: Date, limit: number, storeId?: string): Promise<DueItem[]> {
  const storeClock = sql<Date>`coalesce(st.test_clock_now, ${now})`
  const base = () => {
    let query = db.selectFrom('subscriptions as s').innerJoin('stores as st', 'st.id', 's.store_id').select(['s.id', 's.store_id'])
    if (storeId) query = query.where('s.store_id', '=', storeId)
    return query
  }
  const [activations, resumptions, cancellations] = await Promise.all([
    base().select('s.start_at as due_at').where('s.status', '=', 'pending').where('s.start_at', '<=', storeClock).orderBy('s.start_at').limit(limit).execute(),
    base().select('s.resume_at as due_at').where('s.status', '=', 'paused').where('s.resume_at', '<=', storeClock).orderBy('s.resume_at').limit(limit).execute(),
    base()
      .select('s.current_period_end as due_at')
      .where('s.cancel_at_period_end', '=', true)
      .where('s.status', 'in', ['active', 'paused', 'past_due'])
      .where('s.current_period_end', '<=', storeClock)
      .orderBy('s.current_period_end')
      .limit(limit)
      .execute(),
  ])
  const items: DueItem[] = [
    ...activations.map((row) => ({ kind: 'activation' as const, subscriptionId: row.id, storeId: row.store_id, dueAt: row.due_at as Date })),
    ...resumptions.map((row) => ({ kind: 'resumption' as const, subscriptionId: row.id, storeId: row.store_id, dueAt: row.due_at as Date })),
    ...cancellations.map((row) => ({ kind: 'cancellation' as const, subscriptionId: row.id, storeId: row.store_id, dueAt: row.due_at as Date })),
  ]
  return items.sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime())
}

/**
 * Runs due lifecycle work in due-time order, each piece in its own transaction under the row lock.
 * Rows another worker holds are skipped (SKIP LOCKED) and rows already handled are re-checked, so
 * any number of workers may run this at once.
 */
export async function processDueWork(db: Db, clock: Clock, options: { limit?: number; storeId?: string } = {}): Promise<DueCounts> {
  const counts: DueCounts = { activations: 0, resumptions: 0, cancellations: 0 }
  const items = await findDue(db, clock.now(), options.limit ?? 200, options.storeId)
  for (const item of items) {
    const done = await db.transaction().execute(async (trx) => {
      const store = await trx.selectFrom('stores').selectAll().where('id', '=', item.storeId).executeTakeFirstOrThrow()
      const row = await trx.selectFrom('subscriptions').selectAll().where('id', '=', item.subscriptionId).forUpdate().skipLocked().executeTakeFirst()
      if (!row || !stillDue(item.kind, row, item.dueAt) || item.dueAt > storeNow(store, clock)) return false
      await applyMutation(trx, store, row, dueMutation(item.kind, row, store, item.dueAt), storeNow(store, clock))
      return true
    })
    if (done) {
      if (item.kind === 'activation') counts.activations++
      else if (item.kind === 'resumption') counts.resumptions++
      else counts.cancellations++
    }
  }
  return counts
}
