import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { StoreRow, SubscriptionRow } from '../../src/db/database.ts'
import { expectedRenewals } from '../../src/modules/analytics/expected-revenue.ts'
import { upcomingRenewal } from '../../src/modules/billing/upcoming-renewal.ts'
import { afterSuccess, planRenewal } from '../../src/modules/billing/renewal-plan.ts'
import { priceChangeFor } from '../../src/modules/price-changes/price-change-plan.ts'
import { firstRenewalAtOrAfter, rescheduledPrice } from '../../src/modules/subscriptions/price-schedule.ts'
import { scheduleFrom } from '../../src/modules/subscriptions/subscription-schedule.ts'
import { subscriptionRow } from '../helpers/subscription-row.ts'

/**
 * Price changes with notice as data (docs/contract.md, Price changes with notice): which renewal
 * first charges the new price, how a moved schedule carries it, and that the renewal plan, the
 * preview and the forecast all charge it from that renewal on. The fixture row is active, monthly,
 * anchored 2026-01-10 09:00 UTC, in period 0 and renewing Feb 10.
 */
const d = (iso: string) => new Date(iso)
const iso = (date: Date | null | undefined) => (date instanceof Date ? date.toISOString() : null)

const store: StoreRow = {
  id: 'store_1', store_hash: 'shop', name: 'Shop', mode: 'test', timezone: 'UTC', currency: 'USD', dunning_retry_days: [1, 3, 5, 7],
  renewal_reminder_days: 3, past_due_cancel_days: 30, test_clock_now: null, gateway: 'test', billing_stopped_at: null, billing_enabled: true, notifications: {},
  renewal_shipping: 'checkout_rate', renewal_shipping_amount: null, test_tax_rate_bps: 0, out_of_stock: 'skip', out_of_stock_retry_days: 3,
  cancellation_reasons: [], retention_offers: [], portal_reactivation: false, price_change_notice_days: 30, created_at: d('2026-01-01T00:00:00.000Z'), updated_at: d('2026-01-01T00:00:00.000Z'),
}

/** The fixture moving to 2000 from the Mar 10 renewal. */
const scheduled = (overrides: Partial<SubscriptionRow> = {}) => subscriptionRow({ scheduled_amount: 2000, scheduled_amount_from: d('2026-03-10T09:00:00.000Z'), ...overrides })

describe('firstRenewalAtOrAfter: the renewal that first charges a new price', () => {
  const cases: { name: string; row: Partial<SubscriptionRow>; threshold: string; expect: string }[] = [
    { name: 'a threshold before the next renewal: that renewal', row: {}, threshold: '2026-02-09T00:00:00.000Z', expect: '2026-02-10T09:00:00.000Z' },
    { name: 'a threshold exactly at a renewal: that renewal (at or after)', row: {}, threshold: '2026-02-10T09:00:00.000Z', expect: '2026-02-10T09:00:00.000Z' },
    { name: 'a threshold a moment after a renewal: the one after it', row: {}, threshold: '2026-02-10T09:00:00.001Z', expect: '2026-03-10T09:00:00.000Z' },
    { name: 'a charge in progress keeps its price: the renewal after it', row: { pending_charge_id: 'ch_1' }, threshold: '2026-01-20T00:00:00.000Z', expect: '2026-03-10T09:00:00.000Z' },
    {
      name: 'an unpaid period being retried keeps its price: the renewal after it',
      row: { dunning_attempts: 1, dunning_started_at: d('2026-02-10T09:00:00.000Z'), unpaid_period_start: d('2026-02-10T09:00:00.000Z'), next_charge_at: d('2026-02-11T09:00:00.000Z') },
      threshold: '2026-01-20T00:00:00.000Z',
      expect: '2026-03-10T09:00:00.000Z',
    },
    {
      name: 'a prepaid block of 3: only renewals at block boundaries count',
      row: { prepaid_cycles_total: 3, prepaid_cycles_remaining: 2, next_charge_at: d('2026-04-10T09:00:00.000Z') },
      threshold: '2026-05-01T00:00:00.000Z',
      expect: '2026-07-10T09:00:00.000Z',
    },
    { name: 'no next renewal known (past due): the threshold, the first renewal at or after it charges it', row: { status: 'past_due', next_charge_at: null }, threshold: '2026-03-01T00:00:00.000Z', expect: '2026-03-01T00:00:00.000Z' },
  ]
  for (const { name, row, threshold, expect } of cases) {
    test(name, () => assert.equal(iso(firstRenewalAtOrAfter(subscriptionRow(row), d(threshold), 'UTC')), expect))
  }

  test('month ends clamp as the engine counts them: anchored Jan 31, a threshold in March finds Mar 31', () => {
    const row = subscriptionRow({ start_at: d('2026-01-31T12:00:00.000Z'), billing_anchor_at: d('2026-01-31T12:00:00.000Z'), next_charge_at: d('2026-02-28T12:00:00.000Z') })
    assert.equal(iso(firstRenewalAtOrAfter(row, d('2026-03-01T00:00:00.000Z'), 'UTC')), '2026-03-31T12:00:00.000Z')
  })
})

describe('rescheduledPrice: a moved schedule carries the scheduled price to its first renewal at or after the date', () => {
  test('order now on Feb 20 re-anchors: the new price moves from Mar 10 to Mar 20, never sooner', () => {
    const row = scheduled()
    assert.deepEqual(rescheduledPrice(row, scheduleFrom(row, d('2026-02-20T09:00:00.000Z')), 'UTC'), { scheduled_amount_from: d('2026-03-20T09:00:00.000Z') })
  })
  test('a change that leaves the schedule alone, or sets the scheduled price itself, changes nothing', () => {
    assert.deepEqual(rescheduledPrice(scheduled(), { quantity: 2 }, 'UTC'), {})
    assert.deepEqual(rescheduledPrice(scheduled(), { billing_anchor_at: d('2026-02-20T09:00:00.000Z'), scheduled_amount: null, scheduled_amount_from: null }, 'UTC'), {})
    assert.deepEqual(rescheduledPrice(subscriptionRow(), scheduleFrom(subscriptionRow(), d('2026-02-20T09:00:00.000Z')), 'UTC'), {}, 'nothing scheduled')
  })
})

describe('the renewals charge the new price from that renewal on', () => {
  const charged = (row: SubscriptionRow) => {
    const renewal = planRenewal(row, store)
    assert.equal(renewal.kind, 'charge')
    if (renewal.kind !== 'charge') throw new Error('unreachable')
    return renewal
  }

  test('Feb 10 (before) charges 1500 and leaves the schedule; Mar 10 charges 2000, which becomes the price, once', () => {
    const february = charged(scheduled({ quantity: 2 }))
    assert.deepEqual([february.subtotal, february.lineItems[0]!.unit_amount, iso(february.period.start)], [3000, 1500, '2026-02-10T09:00:00.000Z'])
    const afterFebruary = afterSuccess(scheduled({ quantity: 2 }), store, february.periodIndex, d('2026-02-10T09:00:00.000Z'))
    assert.ok(!('amount' in afterFebruary.set) && !('scheduled_amount' in afterFebruary.set), 'the old price stays')
    assert.deepEqual(afterFebruary.events, [])

    const march = charged({ ...scheduled({ quantity: 2 }), ...afterFebruary.set } as SubscriptionRow)
    assert.deepEqual([march.subtotal, march.lineItems[0]!.unit_amount, iso(march.period.start)], [4000, 2000, '2026-03-10T09:00:00.000Z'])
    const afterMarch = afterSuccess({ ...scheduled({ quantity: 2 }), ...afterFebruary.set } as SubscriptionRow, store, march.periodIndex, d('2026-03-10T09:00:00.000Z'))
    assert.deepEqual([afterMarch.set.amount, afterMarch.set.scheduled_amount, afterMarch.set.scheduled_amount_from], [2000, null, null])
    assert.deepEqual(afterMarch.events, ['subscription.price_changed'])
  })

  test('the preview and the forecast charge what the engine will: 1500 on Feb 10, 2000 from Mar 10', () => {
    const upcoming = upcomingRenewal(scheduled(), store, [])
    assert.equal(upcoming.kind === 'charge' ? upcoming.renewal.amount : undefined, 1500)
    const moved = upcomingRenewal(scheduled({ skip_next: true }), store, [])
    assert.equal(moved.kind === 'charge' ? moved.renewal.amount : undefined, 2000, 'the Feb 10 renewal skipped: the next one is at the new price')
    const forecast = expectedRenewals(scheduled(), store, [], { from: d('2026-02-01T00:00:00.000Z'), to: d('2026-05-01T00:00:00.000Z') })
    assert.deepEqual(forecast.map((renewal) => [iso(renewal.at), renewal.amount]), [
      ['2026-02-10T09:00:00.000Z', 1500],
      ['2026-03-10T09:00:00.000Z', 2000],
      ['2026-04-10T09:00:00.000Z', 2000],
    ])
  })
})

describe('priceChangeFor: what a price change does to one subscription', () => {
  const now = d('2026-01-20T00:00:00.000Z')
  test('30 days from Jan 20 is Feb 19: the first renewal at or after it is Mar 10', () => {
    assert.deepEqual(priceChangeFor(subscriptionRow(), { amount: 2000, noticeDays: 30 }, now, 'UTC'), {
      kind: 'change',
      set: { scheduled_amount: 2000, scheduled_amount_from: d('2026-03-10T09:00:00.000Z') },
      events: ['subscription.price_change_scheduled'],
    })
  })
  test('already at the price, or already moving to it: nothing to do or send', () => {
    assert.deepEqual(priceChangeFor(subscriptionRow(), { amount: 1500, noticeDays: 30 }, now, 'UTC'), { kind: 'unchanged' })
    assert.deepEqual(priceChangeFor(scheduled(), { amount: 2000, noticeDays: 30 }, now, 'UTC'), { kind: 'unchanged' })
  })
  test('back to the price it pays while another was scheduled: that one is dropped', () => {
    assert.deepEqual(priceChangeFor(scheduled(), { amount: 1500, noticeDays: 30 }, now, 'UTC'), { kind: 'change', set: { scheduled_amount: null, scheduled_amount_from: null }, events: ['subscription.updated'] })
  })
  test('a quantity that would make one renewal over the limit fails that row alone', () => {
    const decided = priceChangeFor(subscriptionRow({ quantity: 1_000 }), { amount: 1_000_000_000, noticeDays: 30 }, now, 'UTC')
    assert.equal(decided.kind, 'failed')
  })
})
