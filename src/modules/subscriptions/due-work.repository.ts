import { sql } from 'kysely'
import type { Db, Executor, SubscriptionRow } from '../../db/database.ts'
import { storeBillsOf, storeClockOf, storeDaysOf } from '../stores/index.ts'
import { RENEWAL_FAILED } from './billing-issues.ts'

export type DueKind = 'activation' | 'resumption' | 'cancellation' | 'reminder' | 'prepaid_cycle' | 'unpaid_cancellation'

// A store may announce renewals at most this many days ahead (store schema); bounds the index scan.
const MAX_REMINDER_DAYS = 30

export interface DueItem {
  kind: DueKind
  subscriptionId: string
  storeId: string
  dueAt: Date
  /** For a reminder: the renewal it announces, as found. */
  announces?: Date
}

/**
 * Finds work that is due on each store's own clock: pending subscriptions whose start has come,
 * paused ones whose resume date has come, and those set to cancel whose period has ended.
 *
 * `catchUpFrom`: where the store's clock stood before the time being caught up began (a test-clock
 * advance replays the time it jumps over, each piece at its own due time). Without it, each store's
 * clock now: due work runs as time passes.
 */
export async function findDue(db: Db, now: Date, limit: number, storeId?: string, catchUpFrom?: Date): Promise<DueItem[]> {
  const storeClock = storeClockOf('s.store_id', now)
  // A reminder announces a renewal still ahead: one already due when the catching up began (billing was
  // switched off or stopped, the worker was down) is charged next, and announcing it would come too late.
  // Not `> storeClock` for a test clock's jump: a reminder due days before a renewal the same jump passes
  // goes out at its own due time, before that renewal, as it would have on real time.
  const renewalsAfter = catchUpFrom ? sql<Date>`${catchUpFrom}::timestamptz` : storeClock
  const reminderDays = storeDaysOf('s.store_id', 'renewal_reminder_days')
  const pastDueCancelDays = storeDaysOf('s.store_id', 'past_due_cancel_days')
  const base = () => {
    let query = db
      .selectFrom('subscriptions as s')
      .select(['s.id', 's.store_id'])
      // Work that failed on this subscription's own data is set aside until the subscription changes.
      .where(sql<boolean>`(s.billing_issue IS NULL OR s.billing_issue->>'code' <> ${RENEWAL_FAILED})`)
      // A store whose billing is stopped (app uninstalled) stands still: no activation, reminder or cancellation either.
      .where(storeBillsOf('s.store_id'))
    if (storeId) query = query.where('s.store_id', '=', storeId)
    return query
  }
  const [activations, resumptions, cancellations, reminders, prepaidCycles, unpaidCancellations] = await Promise.all([
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
    // Announced N days ahead, and only when that falls inside the current period: a daily plan
    // with a three-day notice would otherwise announce every renewal before the previous one.
    base()
      .select(sql<Date>`s.next_charge_at - make_interval(days => ${reminderDays})`.as('due_at'))
      .select('s.next_charge_at as announces')
      .where('s.status', '=', 'active')
      .where('s.pending_charge_id', 'is', null)
      .where('s.cancel_at_period_end', '=', false)
      .where('s.skip_next', '=', false)
      .where('s.dunning_attempts', '=', 0)
      .where('s.stock_attempts', '=', 0)
      .where(reminderDays, '>', 0)
      .where('s.next_charge_at', '<=', sql<Date>`${storeClock} + make_interval(days => ${MAX_REMINDER_DAYS})`)
      .where(sql<boolean>`s.next_charge_at - make_interval(days => ${reminderDays}) <= ${storeClock}`)
      .where(sql<boolean>`s.next_charge_at - make_interval(days => ${reminderDays}) >= coalesce(s.current_period_start, s.start_at)`)
      .where(sql<boolean>`s.reminded_for IS DISTINCT FROM s.next_charge_at`)
      .where(sql<boolean>`s.next_charge_at > ${renewalsAfter}`)
      // A resume after a missed renewal re-anchors and charges at once (period_index -1 behind a period
      // that already ended): its "N days before" fell while paused, so there is nothing to announce.
      .where(sql<boolean>`NOT (s.period_index = -1 AND s.current_period_end IS NOT NULL AND s.current_period_end < s.next_charge_at)`)
      .orderBy('s.next_charge_at')
      .limit(limit)
      .execute(),
    base()
      .select('s.current_period_end as due_at')
      .where('s.status', '=', 'active')
      .where('s.cancel_at_period_end', '=', false)
      .where('s.prepaid_cycles_total', 'is not', null)
      .where('s.dunning_attempts', '=', 0)
      .where('s.stock_attempts', '=', 0)
      .where('s.period_index', '>=', 0)
      .where('s.current_period_end', '<=', storeClock)
      .where(sql<boolean>`s.current_period_end < s.next_charge_at`)
      .orderBy('s.current_period_end')
      .limit(limit)
      .execute(),
    base()
      .select(sql<Date>`s.past_due_at + make_interval(days => ${pastDueCancelDays})`.as('due_at'))
      .where('s.status', '=', 'past_due')
      .where('s.pending_charge_id', 'is', null)
      .where(sql<boolean>`s.past_due_at + make_interval(days => ${pastDueCancelDays}) <= ${storeClock}`)
      .orderBy('s.past_due_at')
      .limit(limit)
      .execute(),
  ])
  const items: DueItem[] = [
    ...activations.map((row) => ({ kind: 'activation' as const, subscriptionId: row.id, storeId: row.store_id, dueAt: row.due_at as Date })),
    ...resumptions.map((row) => ({ kind: 'resumption' as const, subscriptionId: row.id, storeId: row.store_id, dueAt: row.due_at as Date })),
    ...cancellations.map((row) => ({ kind: 'cancellation' as const, subscriptionId: row.id, storeId: row.store_id, dueAt: row.due_at as Date })),
    ...prepaidCycles.map((row) => ({ kind: 'prepaid_cycle' as const, subscriptionId: row.id, storeId: row.store_id, dueAt: row.due_at as Date })),
    ...unpaidCancellations.map((row) => ({ kind: 'unpaid_cancellation' as const, subscriptionId: row.id, storeId: row.store_id, dueAt: new Date(row.due_at) })),
    ...reminders.map((row) => ({ kind: 'reminder' as const, subscriptionId: row.id, storeId: row.store_id, dueAt: new Date(row.due_at), announces: row.announces as Date })),
  ]
  return items.sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime())
}


/** Locks a subscription for due work, skipping it when another worker holds it. */
export function lockForDueWork(trx: Executor, id: string): Promise<SubscriptionRow | undefined> {
  return trx.selectFrom('subscriptions').selectAll().where('id', '=', id).forUpdate().skipLocked().executeTakeFirst()
}
