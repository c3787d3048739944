import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { StoreRow, SubscriptionRow } from '../../src/db/database.ts'
import { subscriptionRow } from '../helpers/subscription-row.ts'
import { upcomingRenewal } from '../../src/modules/billing/upcoming-renewal.ts'

/**
 * Which renewal is next, and when there is none (docs/contract.md, Upcoming renewal): the pure
 * decision under GET .../upcoming. Pricing itself is planRenewal's (test/unit/renewal-plan.test.ts).
 */
const d = (iso: string) => new Date(iso)
const iso = (date: Date) => date.toISOString()

const store: StoreRow = {
  id: 'store_1', store_hash: 'shop', name: 'Shop', mode: 'test', timezone: 'UTC', currency: 'USD', dunning_retry_days: [1, 3, 5, 7],
  renewal_reminder_days: 3, past_due_cancel_days: 30, test_clock_now: null, gateway: 'test', billing_stopped_at: null, billing_enabled: true, notifications: {},
  renewal_shipping: 'checkout_rate', renewal_shipping_amount: null, test_tax_rate_bps: 0, out_of_stock: 'skip', out_of_stock_retry_days: 3,
  cancellation_reasons: [], retention_offers: [], portal_reactivation: false, price_change_notice_days: 30, created_at: d('2026-01-01T00:00:00.000Z'), updated_at: d('2026-01-01T00:00:00.000Z'),
}

/** The fixture row (test/helpers/subscription-row.ts): active, monthly, anchored 2026-01-10 09:00 UTC, renewing Feb 10. */
const subscription = subscriptionRow


const addOn = { id: 'ot_1', product_id: 'prod_2', quantity: 2, unit_amount: 600, currency: 'USD' }

describe('upcomingRenewal', () => {
  test('an active subscription: the renewal at next_charge_at, priced by the plan with its add-ons', () => {
    const upcoming = upcomingRenewal(subscription({ quantity: 2 }), store, [addOn])
    assert.equal(upcoming.kind, 'charge')
    if (upcoming.kind !== 'charge') return
    assert.equal(iso(upcoming.at), '2026-02-10T09:00:00.000Z')
    assert.deepEqual([upcoming.renewal.subtotal, upcoming.renewal.amount, iso(upcoming.renewal.period.start), iso(upcoming.renewal.period.end)], [4200, 4200, '2026-02-10T09:00:00.000Z', '2026-03-10T09:00:00.000Z'])
  })

  test('a skipped renewal: the one after it, for the period after', () => {
    const upcoming = upcomingRenewal(subscription({ skip_next: true }), store, [])
    assert.equal(upcoming.kind, 'charge')
    if (upcoming.kind !== 'charge') return
    assert.equal(iso(upcoming.at), '2026-03-10T09:00:00.000Z')
    assert.equal(iso(upcoming.renewal.period.start), '2026-03-10T09:00:00.000Z')
  })

  test('paused with resume_at after the renewal fell due: charged at the resumption, a period from it', () => {
    const upcoming = upcomingRenewal(subscription({ status: 'paused', paused_at: d('2026-02-01T00:00:00.000Z'), resume_at: d('2026-04-01T12:00:00.000Z') }), store, [])
    assert.equal(upcoming.kind, 'charge')
    if (upcoming.kind !== 'charge') return
    assert.equal(iso(upcoming.at), '2026-04-01T12:00:00.000Z')
    assert.equal(iso(upcoming.renewal.period.end), '2026-05-01T12:00:00.000Z')
  })

  test('paused with resume_at before the renewal: the renewal as scheduled', () => {
    const upcoming = upcomingRenewal(subscription({ status: 'paused', resume_at: d('2026-01-20T00:00:00.000Z') }), store, [])
    assert.equal(upcoming.kind === 'charge' && iso(upcoming.at), '2026-02-10T09:00:00.000Z')
  })

  test('pending after a trial: the first charge at activation; pending without one: a period after the start', () => {
    const pending = { status: 'pending' as const, billing_anchor_at: null, period_index: -1, current_period_start: null, current_period_end: null, next_charge_at: null }
    const trial = upcomingRenewal(subscription({ ...pending, trial_days: 14, start_at: d('2026-03-15T09:00:00.000Z') }), store, [])
    assert.equal(trial.kind === 'charge' && iso(trial.at), '2026-03-15T09:00:00.000Z')
    const later = upcomingRenewal(subscription({ ...pending, start_at: d('2026-03-15T09:00:00.000Z') }), store, [])
    assert.equal(later.kind === 'charge' && iso(later.at), '2026-04-15T09:00:00.000Z')
  })

  test('in dunning: the next retry of the unpaid period, attempt n + 1', () => {
    const upcoming = upcomingRenewal(subscription({ dunning_attempts: 1, unpaid_period_start: d('2026-02-10T09:00:00.000Z'), next_charge_at: d('2026-02-11T09:00:00.000Z') }), store, [])
    assert.equal(upcoming.kind, 'charge')
    if (upcoming.kind !== 'charge') return
    assert.deepEqual([iso(upcoming.at), iso(upcoming.renewal.period.start), upcoming.renewal.attempt], ['2026-02-11T09:00:00.000Z', '2026-02-10T09:00:00.000Z', 2])
  })

  const none: [string, Partial<SubscriptionRow>, Partial<StoreRow>, RegExp][] = [
    ['cancelled', { status: 'cancelled', next_charge_at: null }, {}, /cancelled/],
    ['expired', { status: 'expired', next_charge_at: null }, {}, /expired/],
    ['set to cancel at period end', { cancel_at_period_end: true }, {}, /cancel at the end/],
    ['paused without resume_at', { status: 'paused' }, {}, /paused until resumed/],
    ['past due', { status: 'past_due', next_charge_at: null, dunning_attempts: 4 }, {}, /past due/],
    ['a charge in progress', { pending_charge_id: 'ch_1' }, {}, /in progress \(ch_1\)/],
    ['billing waiting for an admin', { billing_issue: { code: 'charge_requires_review', message: 'm', since: '2026-02-10T09:00:00.000Z' } }, {}, /waits for an admin/],
    ['a store whose billing is stopped', {}, { billing_stopped_at: d('2026-02-01T00:00:00.000Z') }, /billing is stopped/],
    ['a gifted prepaid block', { gift: { gifter_email: 'a@example.com', recipient_email: 'b@example.com', message: null }, prepaid_cycles_total: 3, prepaid_cycles_remaining: 0 }, {}, /gifted prepaid block/],
  ]
  for (const [what, row, storeChanges, reason] of none) {
    test(`no next renewal: ${what}`, () => {
      const upcoming = upcomingRenewal(subscription(row), { ...store, ...storeChanges }, [addOn])
      assert.equal(upcoming.kind, 'none')
      if (upcoming.kind === 'none') assert.match(upcoming.reason, reason)
    })
  }
})
