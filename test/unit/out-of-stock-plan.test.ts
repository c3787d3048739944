import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { StoreRow, SubscriptionRow } from '../../src/db/database.ts'
import { subscriptionRow } from '../helpers/subscription-row.ts'
import { afterOutOfStock, planRenewal, settleCharge, type RenewalPricing } from '../../src/modules/billing/renewal-plan.ts'

const d = (iso: string) => new Date(iso)
const iso = (date: unknown) => (date instanceof Date ? date.toISOString() : (date ?? null))

type Store = Pick<StoreRow, 'timezone' | 'dunning_retry_days' | 'out_of_stock' | 'out_of_stock_retry_days'> & RenewalPricing

/** A UTC store on the test gateway with no tax, shipping at the checkout's rate, the default dunning and stock policy. */
function store(overrides: Partial<Store> = {}): Store {
  return {
    timezone: 'UTC',
    gateway: 'test',
    currency: 'USD',
    renewal_shipping: 'checkout_rate',
    renewal_shipping_amount: null,
    test_tax_rate_bps: 0,
    dunning_retry_days: [1, 3, 5, 7],
    out_of_stock: 'skip',
    out_of_stock_retry_days: 3,
    ...overrides,
  } as Store
}

const skip = store()
const retry = store({ out_of_stock: 'retry', out_of_stock_retry_days: 3 })

/** The fixture row (test/helpers/subscription-row.ts): active, monthly, anchored 2026-01-10 09:00 UTC, renewing Feb 10. */
const subscription = subscriptionRow

/** Period 1 of the fixture: [Feb 10, Mar 10]. */
const FEB_10 = '2026-02-10T09:00:00.000Z'
const MAR_10 = '2026-03-10T09:00:00.000Z'
const APR_10 = '2026-04-10T09:00:00.000Z'
/** Whole UTC days after Feb 10 09:00. */
const plus = (days: number) => new Date(Date.parse(FEB_10) + days * 86_400_000).toISOString()

/** The dates of a change as ISO strings, so a whole `set` compares with deepEqual. */
function dated(set: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(set).map(([key, value]) => [key, value instanceof Date ? value.toISOString() : value]))
}

/** What a skip for stock leaves: period 1 current and unpaid, the next renewal at `next`, every retry count reset. */
const skipped = (next: string) => ({
  status: 'active',
  pending_charge_id: null,
  skip_reason: 'out_of_stock',
  period_index: 1,
  current_period_start: FEB_10,
  current_period_end: MAR_10,
  next_charge_at: next,
  dunning_attempts: 0,
  dunning_started_at: null,
  unpaid_period_start: null,
  stock_attempts: 0,
  out_of_stock_since: null,
  past_due_at: null,
  reminded_for: null,
})

/** Waiting for stock since Feb 10 after `attempts` stock failures. */
const waitingForStock = (attempts: number, overrides: Partial<SubscriptionRow> = {}) =>
  subscription({ stock_attempts: attempts, out_of_stock_since: d(FEB_10), unpaid_period_start: d(FEB_10), next_charge_at: d(plus(attempts)), ...overrides })

describe('afterOutOfStock: the store policy skip', () => {
  test('the period is skipped: it becomes current unpaid, the next renewal is the one after, no retry', () => {
    const decision = afterOutOfStock(subscription(), skip, 1, d(FEB_10), d(FEB_10))
    assert.deepEqual(dated(decision.set), skipped(MAR_10))
    assert.equal(decision.set.skip_reason, 'out_of_stock')
    assert.equal(decision.set.period_index, 1)
    assert.equal(iso(decision.set.current_period_start), FEB_10)
    assert.equal(iso(decision.set.current_period_end), MAR_10)
    assert.equal(iso(decision.set.next_charge_at), MAR_10)
    assert.equal(decision.set.stock_attempts, 0)
    assert.equal(decision.set.out_of_stock_since, null)
    assert.equal(decision.set.unpaid_period_start, null)
    assert.equal(decision.set.dunning_attempts, 0)
    assert.deepEqual(decision.events, ['subscription.skipped'])
    assert.equal(decision.nextRetryAt, null)
  })

  test('a skip that comes late (after the following boundary) skips every period up to the next renewal, at the first boundary after it: the current period ends when it is due, so no prepaid cycle is walked through unpaid', () => {
    const at = '2026-03-15T09:00:00.000Z'
    const decision = afterOutOfStock(subscription({ next_charge_at: d(at) }), skip, 1, d(FEB_10), d(at))
    assert.equal(iso(decision.set.next_charge_at), APR_10)
    assert.deepEqual(dated(decision.set), { ...skipped(APR_10), period_index: 2, current_period_start: MAR_10, current_period_end: APR_10 })
  })

  test('a prepaid block skipped late: the current period ends at the next renewal', () => {
    const at = '2026-03-15T09:00:00.000Z'
    const prepaid = subscription({ prepaid_cycles_total: 3, prepaid_cycles_remaining: 0, next_charge_at: d(at) })
    const decision = afterOutOfStock(prepaid, skip, 1, d(FEB_10), d(at))
    assert.equal(iso(decision.set.current_period_end), iso(decision.set.next_charge_at))
  })

  test('a skip exactly at the following boundary moves past it', () => {
    const decision = afterOutOfStock(subscription({ next_charge_at: d(MAR_10) }), skip, 1, d(FEB_10), d(MAR_10))
    assert.equal(iso(decision.set.next_charge_at), APR_10)
  })
})

describe('planRenewal: a skip asked for while the renewal waits for stock', () => {
  test('skips the period that waits (no card failed), and ends the wait', () => {
    const row = waitingForStock(2, { skip_next: true })
    const renewal = planRenewal(row, store())
    assert.equal(renewal.kind, 'skip')
    const set = (renewal as { set: Record<string, unknown> }).set
    assert.deepEqual([iso(set.current_period_start as Date), iso(set.next_charge_at as Date), set.stock_attempts, set.unpaid_period_start, set.out_of_stock_since, set.skip_next], [FEB_10, MAR_10, 0, null, null, false])
  })
})

describe('afterOutOfStock: the store policy retry (daily for out_of_stock_retry_days, then skip)', () => {
  test('tries are counted from when each was due, not when it settled: slow answers never cost the window its last try', () => {
    const late = (iso: string) => new Date(new Date(iso).getTime() + 2_000)
    // Each try settles 2 s after it was due; with 3 days, the tries are days 0, 1, 2 and 3, then the skip.
    const day2 = afterOutOfStock(waitingForStock(2), retry, 1, d(FEB_10), late(plus(2)), d(plus(2)))
    assert.equal(iso(day2.nextRetryAt), plus(3), 'day 3 is still tried')
    const first = afterOutOfStock(subscription(), retry, 1, d(FEB_10), late(FEB_10), d(FEB_10))
    assert.equal(iso(first.nextRetryAt), plus(1), 'a day after it was due')
  })

  test('the first time: tried again a day later, the period is held unpaid, no event', () => {
    const decision = afterOutOfStock(subscription(), retry, 1, d(FEB_10), d(FEB_10))
    assert.deepEqual(dated(decision.set), { pending_charge_id: null, stock_attempts: 1, out_of_stock_since: FEB_10, unpaid_period_start: FEB_10, next_charge_at: plus(1) })
    assert.deepEqual(decision.events, [])
    assert.equal(iso(decision.nextRetryAt), plus(1))
  })

  test('day +2: tried again at day +3 (still within the 3 days since the first time), since is kept', () => {
    const decision = afterOutOfStock(waitingForStock(2), retry, 1, d(FEB_10), d(plus(2)))
    assert.deepEqual(dated(decision.set), { pending_charge_id: null, stock_attempts: 3, out_of_stock_since: FEB_10, unpaid_period_start: FEB_10, next_charge_at: plus(3) })
    assert.deepEqual(decision.events, [])
    assert.equal(iso(decision.nextRetryAt), plus(3))
  })

  test('day +3: the next try (day +4) is beyond since + 3 days, so the period is skipped', () => {
    const decision = afterOutOfStock(waitingForStock(3), retry, 1, d(FEB_10), d(plus(3)))
    assert.deepEqual(dated(decision.set), skipped(MAR_10))
    assert.deepEqual(decision.events, ['subscription.skipped'])
    assert.equal(decision.nextRetryAt, null)
  })

  test('the whole run: day 0, +1, +2 retry, +3 skips', () => {
    let row = subscription()
    const retries: (string | null)[] = []
    for (const day of [0, 1, 2, 3]) {
      const decision = afterOutOfStock(row, retry, 1, d(FEB_10), d(plus(day)))
      retries.push(iso(decision.nextRetryAt) as string | null)
      row = { ...row, ...(decision.set as Partial<SubscriptionRow>) }
    }
    assert.deepEqual(retries, [plus(1), plus(2), plus(3), null])
    assert.equal(row.skip_reason, 'out_of_stock')
    assert.equal(row.stock_attempts, 0)
  })

  test('in a DST zone the retry is one calendar day later at the same local time', () => {
    // Mar 7 2026 09:00 EST (14:00Z); DST starts Mar 8: Mar 8 09:00 EDT is 13:00Z.
    const at = '2026-03-07T14:00:00.000Z'
    const decision = afterOutOfStock(subscription(), store({ timezone: 'America/New_York', out_of_stock: 'retry', out_of_stock_retry_days: 3 }), 1, d(at), d(at))
    assert.equal(iso(decision.nextRetryAt), '2026-03-08T13:00:00.000Z')
    assert.equal(iso(decision.set.next_charge_at), '2026-03-08T13:00:00.000Z')
  })
})

describe('afterOutOfStock: a past_due subscription', () => {
  const pastDue = () =>
    subscription({
      status: 'past_due',
      dunning_attempts: 5,
      dunning_started_at: d(FEB_10),
      unpaid_period_start: d(FEB_10),
      past_due_at: d('2026-02-17T09:00:00.000Z'),
      next_charge_at: d('2026-03-01T12:00:00.000Z'),
    })
  const at = d('2026-03-01T12:00:00.000Z')

  test('under skip: the unpaid period is skipped, the subscription is active again, dunning ends', () => {
    const decision = afterOutOfStock(pastDue(), skip, 1, d(FEB_10), at)
    assert.equal(decision.set.status, 'active')
    assert.deepEqual(decision.events, ['subscription.skipped', 'subscription.activated'])
    assert.deepEqual(dated(decision.set), skipped(MAR_10))
    assert.deepEqual([decision.set.dunning_attempts, decision.set.dunning_started_at, decision.set.unpaid_period_start, decision.set.past_due_at], [0, null, null, null])
    assert.equal(decision.nextRetryAt, null)
  })

  test('under retry: a past_due subscription is skipped, not retried', () => {
    const decision = afterOutOfStock(pastDue(), retry, 1, d(FEB_10), at)
    assert.equal(decision.nextRetryAt, null)
    assert.deepEqual(decision.events, ['subscription.skipped', 'subscription.activated'])
    assert.deepEqual(dated(decision.set), skipped(MAR_10))
  })
})

describe('settleCharge: an out-of-stock failure and a card failure after it', () => {
  const MESSAGE = 'Mug: 0 available, 1 wanted'

  test('an out_of_stock failure of the pending charge follows the stock policy (retry), not dunning', () => {
    const row = subscription({ pending_charge_id: 'ch_1' })
    const settled = settleCharge(row, retry, { id: 'ch_1', attempt: 1, period_start: d(FEB_10) }, { status: 'failed', failureCode: 'out_of_stock', failureMessage: MESSAGE }, 1, d(FEB_10))
    assert.deepEqual({ ...settled.charge, next_retry_at: iso(settled.charge.next_retry_at) }, { status: 'failed', gateway_charge_id: null, failure_code: 'out_of_stock', failure_message: MESSAGE, next_retry_at: plus(1) })
    assert.equal(settled.refund, false)
    assert.deepEqual(dated(settled.subscription.set), { pending_charge_id: null, stock_attempts: 1, out_of_stock_since: FEB_10, unpaid_period_start: FEB_10, next_charge_at: plus(1) })
    assert.deepEqual(settled.subscription.events, [])
    assert.ok(!('dunning_attempts' in settled.subscription.set), 'a stock failure is not a payment failure')
  })

  test('an out_of_stock failure under skip skips the period and schedules no retry', () => {
    const row = subscription({ pending_charge_id: 'ch_1' })
    const settled = settleCharge(row, skip, { id: 'ch_1', attempt: 1, period_start: d(FEB_10) }, { status: 'failed', failureCode: 'out_of_stock', failureMessage: MESSAGE }, 1, d(FEB_10))
    assert.equal(settled.charge.next_retry_at, null)
    assert.equal(settled.charge.failure_code, 'out_of_stock')
    assert.equal(settled.refund, false)
    assert.deepEqual(dated(settled.subscription.set), skipped(MAR_10))
    assert.deepEqual(settled.subscription.events, ['subscription.skipped'])
  })

  test('a card_declined after two stock attempts enters dunning at its first failure, counted from then, and stops waiting for stock', () => {
    const at = plus(2)
    const row = waitingForStock(2, { pending_charge_id: 'ch_3', dunning_attempts: 0 })
    const settled = settleCharge(row, store(), { id: 'ch_3', attempt: 3, period_start: d(FEB_10) }, { status: 'failed', failureCode: 'card_declined', failureMessage: 'The card was declined.' }, 1, d(at))
    assert.equal(settled.charge.failure_code, 'card_declined')
    assert.equal(iso(settled.charge.next_retry_at), plus(3), "the store's first retry day (1) after this failure")
    assert.equal(settled.refund, false)
    assert.deepEqual(dated(settled.subscription.set), { pending_charge_id: null, dunning_attempts: 1, dunning_started_at: at, unpaid_period_start: FEB_10, out_of_stock_since: null, next_charge_at: plus(3) })
    assert.deepEqual(settled.subscription.events, [])
  })

  test('a card_declined of a subscription that was never out of stock leaves out_of_stock_since alone', () => {
    const row = subscription({ pending_charge_id: 'ch_1' })
    const settled = settleCharge(row, store(), { id: 'ch_1', attempt: 1, period_start: d(FEB_10) }, { status: 'failed', failureCode: 'card_declined', failureMessage: '' }, 1, d(FEB_10))
    assert.ok(!('out_of_stock_since' in settled.subscription.set))
    assert.equal(settled.subscription.set.dunning_attempts, 1)
    assert.equal(settled.charge.failure_message, 'The card was declined.')
  })
})

describe('planRenewal: a subscription waiting for stock', () => {
  const row = (overrides: Partial<SubscriptionRow> = {}) =>
    subscription({ unpaid_period_start: d(FEB_10), stock_attempts: 2, dunning_attempts: 1, dunning_started_at: d(FEB_10), out_of_stock_since: d(FEB_10), next_charge_at: d(plus(2)), ...overrides })

  test('the waiting period is charged again, with an attempt number after every earlier one', () => {
    const renewal = planRenewal(row(), store())
    assert.equal(renewal.kind, 'charge')
    if (renewal.kind !== 'charge') return
    assert.deepEqual({ attempt: renewal.attempt, start: iso(renewal.period.start), end: iso(renewal.period.end), periodIndex: renewal.periodIndex, amount: renewal.amount }, { attempt: 4, start: FEB_10, end: MAR_10, periodIndex: 1, amount: 1500 })
  })

  test('skip_next does not skip a period whose card failed (dunning): it is still charged', () => {
    const renewal = planRenewal(row({ skip_next: true }), store())
    assert.equal(renewal.kind, 'charge')
    if (renewal.kind !== 'charge') return
    assert.equal(renewal.attempt, 4)
    assert.equal(iso(renewal.period.start), FEB_10)
  })

  test('stock attempts alone (no payment failure yet) also retry the unpaid period', () => {
    const renewal = planRenewal(row({ dunning_attempts: 0, dunning_started_at: null }), store())
    assert.equal(renewal.kind, 'charge')
    if (renewal.kind !== 'charge') return
    assert.deepEqual({ attempt: renewal.attempt, start: iso(renewal.period.start), periodIndex: renewal.periodIndex }, { attempt: 3, start: FEB_10, periodIndex: 1 })
  })
})
