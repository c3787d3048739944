import { sql } from 'kysely'
import type { Db, StoreRow, SubscriptionRow } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import type { EventType } from '../events/index.ts'
import { findStoreById, storeBillsOf, storeClockOf, storeDaysOf, storeNow } from '../stores/index.ts'
import { isRowDataError } from '../../db/errors.ts'
import { RENEWAL_FAILED, setBillingIssue } from './subscription-batch.ts'
import { applyMutation, type Mutation } from './subscription-mutation.ts'
import { scheduleAtActivation, scheduleAtResume } from './subscription-schedule.ts'
import { periodAt } from '../../lib/calendar.ts'
import { transition } from './subscription-state.ts'

export type DueKind = 'activation' | 'resumption' | 'cancellation' | 'reminder' | 'prepaid_cycle' | 'unpaid_cancellation'

export interface DueCounts {
  activations: number
  resumptions: number
  cancellations: number
  reminders: number
  /** Cycles of a prepaid block that began (each is an order for the merchant to ship). */
  prepaidCycles: number
}

/** Why a subscription that dunning could not recover was cancelled. */
export const UNPAID_CANCELLATION_REASON = 'unpaid: dunning exhausted and the subscription stayed past_due'

// A store may announce renewals at most this many days ahead (store schema); bounds the index scan.
const MAX_REMINDER_DAYS = 30

interface DueItem {
  kind: DueKind
  subscriptionId: string
  storeId: string
  dueAt: Date
  /** For a reminder: the renewal it announces, as found. */
  announces?: Date
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
      return { set: { status: transition(subscription.status, 'resume'), paused_at: null, resume_at: null, ...scheduleAtResume(subscription, dueAt) }, events: ['subscription.resumed'], at: dueAt }
    case 'cancellation':
      return {
        set: { status: transition(subscription.status, 'cancel'), cancelled_at: dueAt, cancel_at_period_end: false, next_charge_at: null, resume_at: null },
        events: ['subscription.cancelled'],
        at: dueAt,
      }
    case 'unpaid_cancellation':
      return {
        set: { status: transition(subscription.status, 'cancel'), cancelled_at: dueAt, cancellation_reason: UNPAID_CANCELLATION_REASON, next_charge_at: null },
        events: ['subscription.cancelled'],
        at: dueAt,
      }
    case 'reminder':
      return { set: { reminded_for: subscription.next_charge_at }, events: ['subscription.renewal_upcoming'], at: dueAt }
    case 'prepaid_cycle': {
      const index = subscription.period_index + 1
      const period = periodAt(subscription.billing_anchor_at!, subscription.interval, subscription.interval_count, index, store.timezone)
      return {
        set: { period_index: index, current_period_start: period.start, current_period_end: period.end, prepaid_cycles_remaining: Math.max(0, (subscription.prepaid_cycles_remaining ?? 1) - 1) },
        events: ['prepaid.order_created'],
        at: dueAt,
      }
    }
  }
}

function stillDue(kind: DueKind, row: SubscriptionRow, dueAt: Date, announces?: Date): boolean {
  switch (kind) {
    case 'activation':
      return row.status === 'pending' && row.start_at.getTime() === dueAt.getTime()
    case 'resumption':
      return row.status === 'paused' && row.resume_at?.getTime() === dueAt.getTime()
    case 'cancellation':
      return row.cancel_at_period_end && ['active', 'paused', 'past_due'].includes(row.status) && row.current_period_end?.getTime() === dueAt.getTime()
    case 'unpaid_cancellation':
      return row.status === 'past_due' && row.pending_charge_id === null && row.past_due_at !== null
    case 'reminder':
      // The renewal found must still be the next one: another worker may have charged it meanwhile.
      return (
        row.status === 'active' &&
        row.next_charge_at !== null &&
        row.next_charge_at.getTime() === announces?.getTime() &&
        row.reminded_for?.getTime() !== row.next_charge_at.getTime() &&
        row.pending_charge_id === null
      )
    case 'prepaid_cycle':
      return (
        row.status === 'active' &&
        !row.cancel_at_period_end &&
        // In dunning the block's last cycle has ended and the next block is unpaid: nothing to ship.
        row.dunning_attempts === 0 &&
        row.prepaid_cycles_total !== null &&
        row.period_index >= 0 &&
        row.billing_anchor_at !== null &&
        row.current_period_end?.getTime() === dueAt.getTime() &&
        row.next_charge_at !== null &&
        row.current_period_end < row.next_charge_at
      )
  }
}

/**
 * Finds work that is due on each store's own clock: pending subscriptions whose start has come,
 * paused ones whose resume date has come, and those set to cancel whose period has ended.
 */
async function findDue(db: Db, now: Date, limit: number, storeId?: string): Promise<DueItem[]> {
  const storeClock = storeClockOf('s.store_id', now)
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
      .where(reminderDays, '>', 0)
      .where('s.next_charge_at', '<=', sql<Date>`${storeClock} + make_interval(days => ${MAX_REMINDER_DAYS})`)
      .where(sql<boolean>`s.next_charge_at - make_interval(days => ${reminderDays}) <= ${storeClock}`)
      .where(sql<boolean>`s.next_charge_at - make_interval(days => ${reminderDays}) >= coalesce(s.current_period_start, s.start_at)`)
      .where(sql<boolean>`s.reminded_for IS DISTINCT FROM s.next_charge_at`)
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

const COUNTED_AS: Record<DueKind, keyof DueCounts> = {
  activation: 'activations',
  resumption: 'resumptions',
  cancellation: 'cancellations',
  unpaid_cancellation: 'cancellations',
  reminder: 'reminders',
  prepaid_cycle: 'prepaidCycles',
}

/**
 * Runs due lifecycle work in due-time order, each piece in its own transaction under the row lock.
 * Rows another worker holds are skipped (SKIP LOCKED) and rows already handled are re-checked, so
 * any number of workers may run this at once.
 */
export async function processDueWork(
  db: Db,
  clock: Clock,
  options: { limit?: number; storeId?: string; kinds?: readonly DueKind[]; log?: { error(object: object, message: string): void } } = {},
): Promise<DueCounts> {
  const counts: DueCounts = { activations: 0, resumptions: 0, cancellations: 0, reminders: 0, prepaidCycles: 0 }
  const kinds = new Set(options.kinds ?? Object.keys(COUNTED_AS))
  const items = (await findDue(db, clock.now(), options.limit ?? 200, options.storeId)).filter((item) => kinds.has(item.kind))
  for (const item of items) {
    let done = false
    try {
      done = await db.transaction().execute(async (trx) => {
        const store = await findStoreById(trx, item.storeId)
        if (!store) return false
        const row = await trx.selectFrom('subscriptions').selectAll().where('id', '=', item.subscriptionId).forUpdate().skipLocked().executeTakeFirst()
        if (!row || !stillDue(item.kind, row, item.dueAt, item.announces) || item.dueAt > storeNow(store, clock)) return false
        await applyMutation(trx, store, row, dueMutation(item.kind, row, store, item.dueAt), storeNow(store, clock))
        return true
      })
    } catch (error) {
      if (!isRowDataError(error)) throw error
      // One subscription's data must not hold back everyone else's due work, which would come after it forever.
      const message = `${item.kind} could not be applied: ${error instanceof Error ? error.message.slice(0, 400) : String(error)}`
      await setBillingIssue(db, [item.subscriptionId], { code: RENEWAL_FAILED, message, since: new Date().toISOString() })
      options.log?.error({ subscriptionId: item.subscriptionId, kind: item.kind, reason: message }, 'due work set aside: it failed on its own data')
    }
    if (done) counts[COUNTED_AS[item.kind]]++
  }
  return counts
}
