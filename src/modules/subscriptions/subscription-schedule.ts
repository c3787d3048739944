import type { PlanInterval, SubscriptionRow } from '../../db/database.ts'
import { addDays, periodAt } from '../../lib/calendar.ts'

/**
 * Billing dates as data. The invariant every function keeps: the next charge pays period
 * `period_index + 1` counted from `billing_anchor_at`, and starts it (prepaid plans pay a block of
 * periods at once, so their next charge comes at the end of the block).
 */
export interface Schedule {
  billing_anchor_at: Date | null
  period_index: number
  current_period_start: Date | null
  current_period_end: Date | null
  next_charge_at: Date | null
  prepaid_cycles_remaining: number | null
}

export interface Cadence {
  interval: PlanInterval
  interval_count: number
  prepaid_cycles: number | null
}

/** When a new subscription becomes active: after its trial, counted from its start. */
export function activationTime(start: Date, trialDays: number, timeZone: string): Date {
  return trialDays > 0 ? addDays(start, trialDays, timeZone) : start
}

/**
 * The schedule from the moment a subscription becomes active. The checkout's own order paid the first
 * period (or prepaid block) unless a trial preceded it: then the first charge is due at activation.
 */
export function scheduleAtActivation(at: Date, cadence: Cadence, afterTrial: boolean, timeZone: string): Schedule {
  if (afterTrial) {
    return {
      billing_anchor_at: at,
      period_index: -1,
      current_period_start: null,
      current_period_end: null,
      next_charge_at: at,
      prepaid_cycles_remaining: cadence.prepaid_cycles,
    }
  }
  const first = periodAt(at, cadence.interval, cadence.interval_count, 0, timeZone)
  const block = cadence.prepaid_cycles ?? 1
  return {
    billing_anchor_at: at,
    period_index: 0,
    current_period_start: first.start,
    current_period_end: first.end,
    next_charge_at: periodAt(at, cadence.interval, cadence.interval_count, block, timeZone).start,
    prepaid_cycles_remaining: cadence.prepaid_cycles === null ? null : cadence.prepaid_cycles - 1,
  }
}

/** A new cadence takes effect at the next charge: the paid current period is left as it is. */
export function reanchorAtNextCharge(subscription: Pick<SubscriptionRow, 'next_charge_at'>): Pick<Schedule, 'billing_anchor_at' | 'period_index'> | undefined {
  if (!subscription.next_charge_at) return undefined
  return { billing_anchor_at: subscription.next_charge_at, period_index: -1 }
}

/**
 * Order now and reschedule move the billing anchor to the new renewal (docs/contract.md, Order now
 * and reschedule): the renewal at `at` pays period 0 counted from `at`, and every later renewal
 * follows one interval (or prepaid block) after it. The current period ends where the next begins,
 * so a renewal moved later leaves no unpaid gap and one moved earlier shortens the current period.
 */
export function scheduleFrom(subscription: Pick<SubscriptionRow, 'current_period_end'>, at: Date): Pick<Schedule, 'billing_anchor_at' | 'period_index' | 'next_charge_at'> & { current_period_end?: Date; reminded_for: null } {
  return {
    billing_anchor_at: at,
    period_index: -1,
    next_charge_at: at,
    ...(subscription.current_period_end ? { current_period_end: at } : {}),
    reminded_for: null,
  }
}

/**
 * A renewal that fell due while the subscription was paused is not charged for the time it was
 * paused: the billing anchor moves to the resume, and a new period is charged at once. Dunning of a
 * period abandoned by the pause ends with it.
 */
export function scheduleAtResume(
  subscription: Pick<SubscriptionRow, 'next_charge_at'>,
  at: Date,
): Partial<Schedule> & { dunning_attempts?: number; dunning_started_at?: null; unpaid_period_start?: null; stock_attempts?: number; out_of_stock_since?: null; reminded_for?: null } {
  if (!subscription.next_charge_at || subscription.next_charge_at > at) return {}
  return { billing_anchor_at: at, period_index: -1, next_charge_at: at, dunning_attempts: 0, dunning_started_at: null, unpaid_period_start: null, stock_attempts: 0, out_of_stock_since: null, reminded_for: null }
}
