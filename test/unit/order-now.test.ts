import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { StoreRow, SubscriptionRow } from '../../src/db/database.ts'
import { AppError } from '../../src/lib/errors.ts'
import { afterSuccess, planRenewal } from '../../src/modules/billing/renewal-plan.ts'
import { assertCanRenewNow, assertCanRetryNow, requireRescheduleTime, waitForRenewal } from '../../src/modules/subscriptions/order-now.ts'
import { scheduleFrom } from '../../src/modules/subscriptions/subscription-schedule.ts'
import { subscriptionRow } from '../helpers/subscription-row.ts'

const d = (iso: string) => new Date(iso)
const NY = 'America/New_York'

/** An active monthly subscription that paid [Jan 10, Feb 10] and renews on Feb 10 (the shared fixture row). */
const subscription = subscriptionRow

const store = { timezone: 'UTC', currency: 'USD', dunning_retry_days: [1, 3], billing_stopped_at: null, billing_enabled: true, gateway: 'test', renewal_shipping: 'checkout_rate', renewal_shipping_amount: null, test_tax_rate_bps: 0 } as unknown as StoreRow

describe('scheduleFrom: order now and reschedule move the billing anchor', () => {
  test('the renewal at the new time pays the period starting there; the next follows one interval later', () => {
    const at = d('2026-02-25T15:00:00.000Z')
    const moved = subscription(scheduleFrom(subscription(), at) as Partial<SubscriptionRow>)
    assert.equal(moved.current_period_end?.toISOString(), at.toISOString(), 'the current period ends where the next begins')
    const renewal = planRenewal(moved, store)
    assert.equal(renewal.kind, 'charge')
    if (renewal.kind !== 'charge') return
    assert.equal(renewal.period.start.toISOString(), '2026-02-25T15:00:00.000Z')
    assert.equal(renewal.period.end.toISOString(), '2026-03-25T15:00:00.000Z')
    const settled = afterSuccess(moved, store, renewal.periodIndex, at)
    assert.equal((settled.set.next_charge_at as Date).toISOString(), '2026-03-25T15:00:00.000Z')
  })

  test('month ends clamp from the new anchor, on the store calendar', () => {
    const at = d('2026-01-31T15:00:00.000Z')
    const moved = subscription(scheduleFrom(subscription(), at) as Partial<SubscriptionRow>)
    const renewal = planRenewal(moved, { ...store, timezone: NY })
    assert.ok(renewal.kind === 'charge')
    assert.equal(renewal.period.end.toISOString(), '2026-02-28T15:00:00.000Z')
  })
})

describe('requireRescheduleTime', () => {
  const now = d('2026-01-10T09:00:00.000Z')
  const refused = (text: string) => assert.throws(() => requireRescheduleTime(store, text, now), (error: unknown) => error instanceof AppError && error.code === 'validation_failed')
  test('later than now and at most one year ahead', () => {
    refused('2026-01-10T09:00:00.000Z')
    refused('2025-12-31T00:00:00.000Z')
    refused('2027-01-10T09:00:00.001Z')
    assert.equal(requireRescheduleTime(store, '2027-01-10T09:00:00.000Z', now).toISOString(), '2027-01-10T09:00:00.000Z')
    assert.equal(requireRescheduleTime(store, '2026-01-10T09:00:00.001Z', now).toISOString(), '2026-01-10T09:00:00.001Z')
  })
})

describe('assertCanRetryNow: retry now only a renewal whose card failed, with nothing holding it back', () => {
  const inDunning = (overrides: Partial<SubscriptionRow> = {}) =>
    subscription({ dunning_attempts: 1, dunning_started_at: d('2026-02-10T09:00:00.000Z'), unpaid_period_start: d('2026-02-10T09:00:00.000Z'), next_charge_at: d('2026-02-11T09:00:00.000Z'), latest_charge_id: 'ch_failed', ...overrides })
  const refusedFor = (row: SubscriptionRow, why: RegExp, s: StoreRow = store) =>
    assert.throws(() => assertCanRetryNow(s, row), (error: unknown) => error instanceof AppError && error.code === 'invalid_state' && why.test(error.message))
  test('in dunning, past due, and after a renewal set aside for its data', () => {
    assert.doesNotThrow(() => assertCanRetryNow(store, inDunning()))
    assert.doesNotThrow(() => assertCanRetryNow(store, inDunning({ status: 'past_due', next_charge_at: null, dunning_attempts: 2, past_due_at: d('2026-02-13T09:00:00.000Z') })))
    assert.doesNotThrow(() => assertCanRetryNow(store, inDunning({ billing_issue: { code: 'renewal_failed', message: 'bad row', since: '2026-02-11T09:00:00Z' } })))
  })
  test('refused, saying why, in every other case', () => {
    refusedFor(subscription(), /nothing is owed/)
    for (const status of ['pending', 'paused', 'cancelled', 'expired'] as const) refusedFor(inDunning({ status }), new RegExp(`is ${status}`))
    refusedFor(inDunning({ pending_charge_id: 'ch_2' }), /in flight/)
    refusedFor(inDunning({ pending_charge_id: 'ch_2', billing_issue: { code: 'charge_requires_review', message: 'unknown', since: '2026-02-11T09:00:00Z' } }), /resolve the charge under review/)
    refusedFor(inDunning({ dunning_attempts: 0, stock_attempts: 1, out_of_stock_since: d('2026-02-10T09:00:00.000Z') }), /in stock/)
    refusedFor(inDunning({ cancel_at_period_end: true }), /cancel at the end of the period/)
    refusedFor(inDunning(), /billing is stopped/, { ...store, billing_stopped_at: d('2026-02-01T00:00:00.000Z') } as StoreRow)
  })
})

describe('assertCanRenewNow', () => {
  const now = d('2026-01-20T00:00:00.000Z')
  const refuses = (row: SubscriptionRow, s: StoreRow = store, action: 'order now' | 'reschedule' = 'order now') =>
    assert.throws(() => assertCanRenewNow(s, row, now, action), (error: unknown) => error instanceof AppError && error.code === 'invalid_state')
  test('only an active subscription with nothing holding its renewal back', () => {
    assert.doesNotThrow(() => assertCanRenewNow(store, subscription(), now))
    for (const status of ['pending', 'paused', 'past_due', 'cancelled', 'expired'] as const) refuses(subscription({ status }))
    refuses(subscription({ pending_charge_id: 'ch_1' }))
    refuses(subscription({ dunning_attempts: 1, unpaid_period_start: d('2026-02-10T09:00:00.000Z') }))
    refuses(subscription({ cancel_at_period_end: true }))
    refuses(subscription({ billing_issue: { code: 'charge_requires_review', message: 'x', since: '2026-01-01T00:00:00.000Z' } }))
    refuses(subscription(), { ...store, billing_stopped_at: now } as StoreRow)
    // A prepaid block with cycles still to come.
    refuses(subscription({ prepaid_cycles_total: 3, next_charge_at: d('2026-04-10T09:00:00.000Z') }))
    refuses(subscription({ gift: { gifter_email: 'a@example.com', recipient_email: 'b@example.com', message: null }, prepaid_cycles_total: 3 }), store, 'reschedule')
    // A set-aside renewal is cleared by the change itself.
    assert.doesNotThrow(() => assertCanRenewNow(store, subscription({ billing_issue: { code: 'renewal_failed', message: 'x', since: '2026-01-01T00:00:00.000Z' } }), now))
  })
  test('while the store\'s billing is switched off, order now and retry now are 409 billing_disabled; a reschedule charges nothing and may', () => {
    const off = { ...store, billing_enabled: false } as StoreRow
    const disabled = (error: unknown) => error instanceof AppError && error.code === 'billing_disabled' && /billing is switched off/.test(error.message)
    assert.throws(() => assertCanRenewNow(off, subscription(), now), disabled)
    assert.doesNotThrow(() => assertCanRenewNow(off, subscription(), now, 'reschedule'))
    assert.throws(() => assertCanRetryNow(off, subscription({ dunning_attempts: 1, unpaid_period_start: d('2026-02-10T09:00:00.000Z'), latest_charge_id: 'ch_failed' })), disabled)
    // The subscription's own refusal comes first.
    assert.throws(() => assertCanRenewNow(off, subscription({ status: 'paused' }), now), (error: unknown) => error instanceof AppError && error.code === 'invalid_state')
  })
  test('order now refuses a period that began this instant; reschedule does not care', () => {
    const justPaid = subscription({ current_period_start: now })
    refuses(justPaid)
    assert.doesNotThrow(() => assertCanRenewNow(store, justPaid, now, 'reschedule'))
  })
})

describe('waitForRenewal', () => {
  test('answers as soon as the outcome is known', async () => {
    let settled = false
    const result = await waitForRenewal(async () => { settled = true }, async () => settled, 5_000)
    assert.equal(result, true)
  })
  test('gives up after its bound while the run goes on, and a failed run still ends the wait', async () => {
    const started = Date.now()
    assert.equal(await waitForRenewal(() => new Promise(() => {}), async () => false, 200), false)
    assert.ok(Date.now() - started < 1_000)
    assert.equal(await waitForRenewal(async () => { throw new Error('boom') }, async () => false, 200), false)
  })
})
