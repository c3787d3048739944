import type { Db, StoreRow, SubscriptionRow } from '../../db/database.ts'
import { DUE_WORK } from '../../http/actors.ts'
import type { Clock } from '../../lib/clock.ts'
import type { EventType } from '../events/index.ts'
import { findStoreById, storeNow } from '../stores/index.ts'
import { isRowDataError } from '../../db/errors.ts'
import { RENEWAL_FAILED } from './billing-issues.ts'
import { findDue, lockForDueWork, type DueKind } from './due-work.repository.ts'

export type { DueKind }
import { setBillingIssue } from './subscription-batch.repository.ts'
import type { Mutation } from './subscription-mutation.ts'
import type { SubscriptionWrites } from './subscription-writes.ts'
import { scheduleAtActivation, scheduleAtResume } from './subscription-schedule.ts'
import { periodAt } from '../../lib/calendar.ts'
import { transition } from './subscription-state.ts'


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
        // In dunning (or waiting for stock) the block's last cycle has ended and the next block is unpaid: nothing to ship.
        row.dunning_attempts === 0 &&
        row.stock_attempts === 0 &&
        row.prepaid_cycles_total !== null &&
        row.period_index >= 0 &&
        row.billing_anchor_at !== null &&
        row.current_period_end?.getTime() === dueAt.getTime() &&
        row.next_charge_at !== null &&
        row.current_period_end < row.next_charge_at
      )
  }
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
  writes: SubscriptionWrites,
  options: {
    limit?: number
    storeId?: string
    kinds?: readonly DueKind[]
    /** Where the store's clock stood before a test-clock advance: see findDue. */
    catchUpFrom?: Date
    log?: { error(object: object, message: string): void }
  } = {},
): Promise<DueCounts> {
  const counts: DueCounts = { activations: 0, resumptions: 0, cancellations: 0, reminders: 0, prepaidCycles: 0 }
  const kinds = new Set(options.kinds ?? Object.keys(COUNTED_AS))
  const items = (await findDue(db, clock.now(), options.limit ?? 200, options.storeId, options.catchUpFrom)).filter((item) => kinds.has(item.kind))
  for (const item of items) {
    let done = false
    try {
      done = await db.transaction().execute(async (trx) => {
        const store = await findStoreById(trx, item.storeId)
        if (!store) return false
        const row = await lockForDueWork(trx, item.subscriptionId)
        if (!row || !stillDue(item.kind, row, item.dueAt, item.announces) || item.dueAt > storeNow(store, clock)) return false
        await writes.apply(trx, store, row, dueMutation(item.kind, row, store, item.dueAt), storeNow(store, clock), DUE_WORK)
        return true
      })
    } catch (error) {
      if (!isRowDataError(error)) throw error
      // One subscription's data must not hold back everyone else's due work, which would come after it forever.
      const message = `${item.kind} could not be applied: ${error instanceof Error ? error.message.slice(0, 400) : String(error)}`
      // Shown to the merchant: on the store's clock (a test store's test clock).
      const store = await findStoreById(db, item.storeId)
      await setBillingIssue(db, [item.subscriptionId], { code: RENEWAL_FAILED, message, since: storeNow(store ?? { test_clock_now: null }, clock).toISOString() })
      options.log?.error({ subscriptionId: item.subscriptionId, kind: item.kind, reason: message }, 'due work set aside: it failed on its own data')
    }
    if (done) counts[COUNTED_AS[item.kind]]++
  }
  return counts
}
