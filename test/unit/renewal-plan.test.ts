import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { StoreRow, SubscriptionRow } from '../../src/db/database.ts'
import { subscriptionRow } from '../helpers/subscription-row.ts'
import { afterFailure, afterSuccess, cyclesPerCharge, planRenewal, type Renewal, type RenewalPricing } from '../../src/modules/billing/renewal-plan.ts'

const NY = 'America/New_York'
const DEFAULT_RETRY_DAYS = [1, 3, 5, 7]
const d = (iso: string) => new Date(iso)
const iso = (date: Date | null | undefined) => (date instanceof Date ? date.toISOString() : (date ?? null))

type Store = Pick<StoreRow, 'timezone' | 'dunning_retry_days'> & RenewalPricing
/** A store on the test gateway with no tax and shipping at the checkout's rate (the defaults). */
const UNPRICED: RenewalPricing = { gateway: 'test', currency: 'USD', renewal_shipping: 'checkout_rate', renewal_shipping_amount: null, test_tax_rate_bps: 0 }
const utc: Store = { timezone: 'UTC', dunning_retry_days: DEFAULT_RETRY_DAYS, ...UNPRICED }
const newYork: Store = { timezone: NY, dunning_retry_days: DEFAULT_RETRY_DAYS, ...UNPRICED }

/** The fixture row (test/helpers/subscription-row.ts): active, monthly, anchored 2026-01-10 09:00 UTC, renewing Feb 10. */
const subscription = subscriptionRow

/** A subscription anchored at `anchor` in period `index`, renewing at the next boundary (given). */
function anchoredAt(anchor: string, index: number, nextChargeAt: string, overrides: Partial<SubscriptionRow> = {}): SubscriptionRow {
  return subscription({ start_at: d(anchor), billing_anchor_at: d(anchor), period_index: index, next_charge_at: d(nextChargeAt), ...overrides })
}

function charge(renewal: Renewal) {
  assert.equal(renewal.kind, 'charge', `expected a charge, got ${JSON.stringify(renewal)}`)
  if (renewal.kind !== 'charge') throw new Error('unreachable')
  return { attempt: renewal.attempt, amount: renewal.amount, currency: renewal.currency, start: iso(renewal.period.start), end: iso(renewal.period.end), periodIndex: renewal.periodIndex }
}

describe('planRenewal: what a due renewal charges', () => {
  const cases: { name: string; row: Partial<SubscriptionRow>; expect: ReturnType<typeof charge> }[] = [
    {
      name: 'a monthly renewal pays the period starting at next_charge_at, one month long',
      row: {},
      expect: { attempt: 1, amount: 1500, currency: 'USD', start: '2026-02-10T09:00:00.000Z', end: '2026-03-10T09:00:00.000Z', periodIndex: 1 },
    },
    {
      name: 'the amount is amount x quantity',
      row: { amount: 1250, quantity: 3 },
      expect: { attempt: 1, amount: 3750, currency: 'USD', start: '2026-02-10T09:00:00.000Z', end: '2026-03-10T09:00:00.000Z', periodIndex: 1 },
    },
    {
      name: 'a padded currency column is trimmed',
      row: { currency: 'EUR ' },
      expect: { attempt: 1, amount: 1500, currency: 'EUR', start: '2026-02-10T09:00:00.000Z', end: '2026-03-10T09:00:00.000Z', periodIndex: 1 },
    },
    {
      name: 'interval_count 2 (every two weeks)',
      row: { interval: 'week', interval_count: 2, current_period_end: d('2026-01-24T09:00:00.000Z'), next_charge_at: d('2026-01-24T09:00:00.000Z') },
      expect: { attempt: 1, amount: 1500, currency: 'USD', start: '2026-01-24T09:00:00.000Z', end: '2026-02-07T09:00:00.000Z', periodIndex: 1 },
    },
    {
      name: 'a yearly plan pays a whole year',
      row: { interval: 'year', current_period_end: d('2027-01-10T09:00:00.000Z'), next_charge_at: d('2027-01-10T09:00:00.000Z') },
      expect: { attempt: 1, amount: 1500, currency: 'USD', start: '2027-01-10T09:00:00.000Z', end: '2028-01-10T09:00:00.000Z', periodIndex: 1 },
    },
    {
      name: 'a prepaid block of 3 monthly cycles is paid at once: end = 3 intervals after its start',
      row: { prepaid_cycles_total: 3, prepaid_cycles_remaining: 0, period_index: 2, current_period_start: d('2026-03-10T09:00:00.000Z'), current_period_end: d('2026-04-10T09:00:00.000Z'), next_charge_at: d('2026-04-10T09:00:00.000Z') },
      expect: { attempt: 1, amount: 1500, currency: 'USD', start: '2026-04-10T09:00:00.000Z', end: '2026-07-10T09:00:00.000Z', periodIndex: 3 },
    },
    {
      name: 'after a trial (period_index -1, next charge at the anchor) the first period is [anchor, anchor + 1 month]',
      row: { period_index: -1, current_period_start: null, current_period_end: null, next_charge_at: d('2026-01-10T09:00:00.000Z'), trial_days: 7 },
      expect: { attempt: 1, amount: 1500, currency: 'USD', start: '2026-01-10T09:00:00.000Z', end: '2026-02-10T09:00:00.000Z', periodIndex: 0 },
    },
    {
      name: 'in dunning the unpaid period is charged again (from unpaid_period_start, not next_charge_at) and attempts count up',
      row: { dunning_attempts: 2, dunning_started_at: d('2026-02-10T09:00:00.000Z'), unpaid_period_start: d('2026-02-10T09:00:00.000Z'), next_charge_at: d('2026-02-13T09:00:00.000Z') },
      expect: { attempt: 3, amount: 1500, currency: 'USD', start: '2026-02-10T09:00:00.000Z', end: '2026-03-10T09:00:00.000Z', periodIndex: 1 },
    },
    {
      name: 'a past_due subscription retried with a new instrument is attempt dunning_attempts + 1 for the same period',
      row: { status: 'past_due', dunning_attempts: 5, dunning_started_at: d('2026-02-10T09:00:00.000Z'), unpaid_period_start: d('2026-02-10T09:00:00.000Z'), past_due_at: d('2026-02-17T09:00:00.000Z'), next_charge_at: d('2026-03-01T12:00:00.000Z') },
      expect: { attempt: 6, amount: 1500, currency: 'USD', start: '2026-02-10T09:00:00.000Z', end: '2026-03-10T09:00:00.000Z', periodIndex: 1 },
    },
    {
      name: 'a prepaid block in dunning still retries the unpaid block, not a later one',
      row: { prepaid_cycles_total: 3, prepaid_cycles_remaining: 0, period_index: 2, current_period_start: d('2026-03-10T09:00:00.000Z'), current_period_end: d('2026-04-10T09:00:00.000Z'), dunning_attempts: 1, dunning_started_at: d('2026-04-10T09:00:00.000Z'), unpaid_period_start: d('2026-04-10T09:00:00.000Z'), next_charge_at: d('2026-04-11T09:00:00.000Z') },
      expect: { attempt: 2, amount: 1500, currency: 'USD', start: '2026-04-10T09:00:00.000Z', end: '2026-07-10T09:00:00.000Z', periodIndex: 3 },
    },
  ]
  for (const { name, row, expect } of cases) {
    test(name, () => assert.deepEqual(charge(planRenewal(subscription(row), utc)), expect))
  }

  test('cyclesPerCharge: a prepaid block, otherwise one', () => {
    assert.equal(cyclesPerCharge({ prepaid_cycles_total: null }), 1)
    assert.equal(cyclesPerCharge({ prepaid_cycles_total: 3 }), 3)
  })

  test('skip: the period advances one interval without a charge, skip_next is cleared, the reminder re-arms', () => {
    const renewal = planRenewal(subscription({ skip_next: true, reminded_for: d('2026-02-10T09:00:00.000Z') }), utc)
    assert.equal(renewal.kind, 'skip')
    if (renewal.kind !== 'skip') return
    assert.deepEqual(renewal.events, ['subscription.updated'])
    assert.deepEqual(
      { ...renewal.set, current_period_start: iso(renewal.set.current_period_start as Date), current_period_end: iso(renewal.set.current_period_end as Date), next_charge_at: iso(renewal.set.next_charge_at as Date) },
      {
        skip_next: false,
        period_index: 1,
        current_period_start: '2026-02-10T09:00:00.000Z',
        current_period_end: '2026-03-10T09:00:00.000Z',
        next_charge_at: '2026-03-10T09:00:00.000Z',
        reminded_for: null,
      },
    )
    assert.ok(!('status' in renewal.set), 'a skip does not change the status')
  })

  test('a skip asked for during dunning does not skip the unpaid period: it is retried', () => {
    const row = subscription({ skip_next: true, dunning_attempts: 1, dunning_started_at: d('2026-02-10T09:00:00.000Z'), unpaid_period_start: d('2026-02-10T09:00:00.000Z'), next_charge_at: d('2026-02-11T09:00:00.000Z') })
    assert.equal(charge(planRenewal(row, utc)).attempt, 2)
  })

  test('a gifted prepaid subscription expires at the end of its block: no charge, subscription.expired', () => {
    const gift = { gifter_email: 'a@example.com', recipient_email: 'b@example.com', message: null }
    const row = subscription({ gift, prepaid_cycles_total: 3, prepaid_cycles_remaining: 0, period_index: 2, next_charge_at: d('2026-04-10T09:00:00.000Z') })
    const renewal = planRenewal(row, utc)
    assert.deepEqual(renewal, { kind: 'expire', set: { status: 'expired', next_charge_at: null, prepaid_cycles_remaining: 0 }, events: ['subscription.expired'] })
  })

  test('a gift of an ordinary (not prepaid) plan keeps renewing: the recipient pays from then on', () => {
    const gift = { gifter_email: 'a@example.com', recipient_email: 'b@example.com', message: null }
    assert.equal(planRenewal(subscription({ gift }), utc).kind, 'charge')
  })
})

describe('planRenewal: calendar arithmetic in the store time zone', () => {
  test('month-end clamping: a Jan 31 anchor renews Feb 28, then Mar 31 (anchored to the original day)', () => {
    const anchor = '2026-01-31T10:00:00.000Z'
    const first = charge(planRenewal(anchoredAt(anchor, 0, '2026-02-28T10:00:00.000Z'), utc))
    assert.deepEqual([first.start, first.end], ['2026-02-28T10:00:00.000Z', '2026-03-31T10:00:00.000Z'])
    const second = charge(planRenewal(anchoredAt(anchor, 1, '2026-03-31T10:00:00.000Z'), utc))
    assert.deepEqual([second.start, second.end], ['2026-03-31T10:00:00.000Z', '2026-04-30T10:00:00.000Z'])
    const third = charge(planRenewal(anchoredAt(anchor, 2, '2026-04-30T10:00:00.000Z'), utc))
    assert.deepEqual([third.start, third.end], ['2026-04-30T10:00:00.000Z', '2026-05-31T10:00:00.000Z'])
  })

  test('month-end clamping in a leap year: Jan 31 -> Feb 29 -> Mar 31', () => {
    const anchor = '2028-01-31T10:00:00.000Z'
    const first = charge(planRenewal(anchoredAt(anchor, 0, '2028-02-29T10:00:00.000Z'), utc))
    assert.deepEqual([first.start, first.end], ['2028-02-29T10:00:00.000Z', '2028-03-31T10:00:00.000Z'])
  })

  test('afterSuccess after the Feb 28 renewal of a Jan 31 anchor schedules Mar 31, not Mar 28', () => {
    const row = anchoredAt('2026-01-31T10:00:00.000Z', 0, '2026-02-28T10:00:00.000Z')
    const { set } = afterSuccess(row, utc, 1, d('2026-02-28T10:00:00.000Z'))
    assert.equal(iso(set.next_charge_at as Date), '2026-03-31T10:00:00.000Z')
    assert.equal(iso(set.current_period_end as Date), '2026-03-31T10:00:00.000Z')
  })

  test('the month ends of the store time zone, not of UTC: Jan 31 23:00 in New York is Feb 1 in UTC', () => {
    // Jan 31 23:00 EST = Feb 1 04:00Z. The local day of month (31) clamps; the UTC one (1) would not.
    const renewal = charge(planRenewal(anchoredAt('2026-02-01T04:00:00.000Z', 0, '2026-03-01T04:00:00.000Z'), newYork))
    // Local: Jan 31 23:00 -> Feb 28 23:00 EST (= Mar 1 04:00Z) -> Mar 31 23:00 EDT (= Apr 1 03:00Z).
    assert.deepEqual([renewal.start, renewal.end], ['2026-03-01T04:00:00.000Z', '2026-04-01T03:00:00.000Z'])
  })

  test('America/New_York across the March DST change keeps the local time of day (09:00)', () => {
    // Anchor Feb 1 09:00 EST (14:00Z). DST starts Mar 8 2026: Apr 1 09:00 EDT is 13:00Z.
    const renewal = charge(planRenewal(anchoredAt('2026-02-01T14:00:00.000Z', 0, '2026-03-01T14:00:00.000Z'), newYork))
    assert.deepEqual([renewal.start, renewal.end], ['2026-03-01T14:00:00.000Z', '2026-04-01T13:00:00.000Z'])
    // In UTC the same anchor would keep 14:00Z.
    const inUtc = charge(planRenewal(anchoredAt('2026-02-01T14:00:00.000Z', 0, '2026-03-01T14:00:00.000Z'), utc))
    assert.equal(inUtc.end, '2026-04-01T14:00:00.000Z')
  })

  test('America/New_York: weekly periods across the November DST change keep 09:00 local', () => {
    // Oct 29 2026 09:00 EDT = 13:00Z; DST ends Nov 1: Nov 5 09:00 EST = 14:00Z.
    const row = anchoredAt('2026-10-29T13:00:00.000Z', -1, '2026-10-29T13:00:00.000Z', { interval: 'week' })
    const renewal = charge(planRenewal(row, newYork))
    assert.deepEqual([renewal.start, renewal.end], ['2026-10-29T13:00:00.000Z', '2026-11-05T14:00:00.000Z'])
  })

  test('America/New_York: dunning retries are whole local days after the first failure, across DST', () => {
    // First failure Mar 7 2026 09:00 EST (14:00Z); Mar 8 is the DST change: +1 day = Mar 8 09:00 EDT = 13:00Z.
    const row = anchoredAt('2026-02-07T14:00:00.000Z', 0, '2026-03-07T14:00:00.000Z')
    const failure = afterFailure(row, newYork, 1, d('2026-03-07T14:00:00.000Z'), d('2026-03-07T14:00:00.000Z'))
    assert.equal(iso(failure.nextRetryAt), '2026-03-08T13:00:00.000Z')
  })
})

describe('afterSuccess: a settled renewal moves the subscription on', () => {
  /** Past due since Feb 17 after five failed attempts at the Feb 10 period; the retry settles at `nextChargeAt`. */
  const pastDue = (nextChargeAt: string) =>
    subscription({
      status: 'past_due',
      dunning_attempts: 5,
      dunning_started_at: d('2026-02-10T09:00:00.000Z'),
      unpaid_period_start: d('2026-02-10T09:00:00.000Z'),
      past_due_at: d('2026-02-17T09:00:00.000Z'),
      next_charge_at: d(nextChargeAt),
    })

  test('the paid period becomes current, next_charge_at is its end, dunning fields are reset; no event for an active one', () => {
    const { set, events } = afterSuccess(subscription({ pending_charge_id: 'ch_1', reminded_for: d('2026-02-10T09:00:00.000Z') }), utc, 1, d('2026-02-10T09:00:00.000Z'))
    assert.deepEqual(events, [])
    assert.deepEqual(
      { ...set, current_period_start: iso(set.current_period_start as Date), current_period_end: iso(set.current_period_end as Date), next_charge_at: iso(set.next_charge_at as Date) },
      {
        status: 'active',
        pending_charge_id: null,
        period_index: 1,
        current_period_start: '2026-02-10T09:00:00.000Z',
        current_period_end: '2026-03-10T09:00:00.000Z',
        next_charge_at: '2026-03-10T09:00:00.000Z',
        prepaid_cycles_remaining: null,
        dunning_attempts: 0,
        dunning_started_at: null,
        unpaid_period_start: null,
        stock_attempts: 0,
        out_of_stock_since: null,
        past_due_at: null,
        reminded_for: null,
      },
    )
  })

  test('a success in dunning (still active) resets the dunning fields without subscription.activated', () => {
    const row = subscription({ dunning_attempts: 2, dunning_started_at: d('2026-02-10T09:00:00.000Z'), unpaid_period_start: d('2026-02-10T09:00:00.000Z'), next_charge_at: d('2026-02-13T09:00:00.000Z') })
    const { set, events } = afterSuccess(row, utc, 1, d('2026-02-13T09:00:00.000Z'))
    assert.deepEqual(events, [])
    assert.equal(set.status, 'active')
    assert.deepEqual([set.dunning_attempts, set.dunning_started_at, set.unpaid_period_start], [0, null, null])
    assert.equal(iso(set.next_charge_at as Date), '2026-03-10T09:00:00.000Z', 'the period keeps its anchor: the retry does not shift it')
  })

  test('past_due recovers to active with subscription.activated and the dunning fields reset', () => {
    const row = pastDue('2026-02-20T12:00:00.000Z')
    const { set, events } = afterSuccess(row, utc, 1, d('2026-02-20T12:00:00.000Z'))
    assert.deepEqual(events, ['subscription.activated'])
    assert.equal(set.status, 'active')
    assert.deepEqual([set.dunning_attempts, set.dunning_started_at, set.unpaid_period_start, set.past_due_at], [0, null, null, null])
    assert.equal(iso(set.current_period_start as Date), '2026-02-10T09:00:00.000Z')
    assert.equal(iso(set.next_charge_at as Date), '2026-03-10T09:00:00.000Z')
  })

  test('after a late recovery next_charge_at is the first boundary after the settlement time', () => {
    const row = pastDue('2026-03-15T12:00:00.000Z')
    const { set } = afterSuccess(row, utc, 1, d('2026-03-15T12:00:00.000Z'))
    assert.equal(iso(set.next_charge_at as Date), '2026-04-10T09:00:00.000Z', 'Mar 10 already passed at settlement')
    // Settling exactly on a boundary moves past it too: a charge is never due at the time it settles.
    const onBoundary = afterSuccess(row, utc, 1, d('2026-03-10T09:00:00.000Z'))
    assert.equal(iso(onBoundary.set.next_charge_at as Date), '2026-04-10T09:00:00.000Z')
  })

  test('prepaid: the first cycle of the block becomes current, the next charge is at the block end, prepaid.order_created', () => {
    const row = subscription({ prepaid_cycles_total: 3, prepaid_cycles_remaining: 0, period_index: 2, current_period_start: d('2026-03-10T09:00:00.000Z'), current_period_end: d('2026-04-10T09:00:00.000Z'), next_charge_at: d('2026-04-10T09:00:00.000Z') })
    const { set, events } = afterSuccess(row, utc, 3, d('2026-04-10T09:00:00.000Z'))
    assert.deepEqual(events, ['prepaid.order_created'])
    assert.equal(set.period_index, 3)
    assert.equal(iso(set.current_period_start as Date), '2026-04-10T09:00:00.000Z')
    assert.equal(iso(set.current_period_end as Date), '2026-05-10T09:00:00.000Z')
    assert.equal(iso(set.next_charge_at as Date), '2026-07-10T09:00:00.000Z')
    assert.equal(set.prepaid_cycles_remaining, 2)
  })

  test('prepaid recovered from past_due: subscription.activated, then prepaid.order_created', () => {
    const row = subscription({ status: 'past_due', prepaid_cycles_total: 3, prepaid_cycles_remaining: 0, period_index: 2, dunning_attempts: 5, unpaid_period_start: d('2026-04-10T09:00:00.000Z'), dunning_started_at: d('2026-04-10T09:00:00.000Z'), past_due_at: d('2026-04-17T09:00:00.000Z'), next_charge_at: d('2026-04-20T09:00:00.000Z') })
    assert.deepEqual(afterSuccess(row, utc, 3, d('2026-04-20T09:00:00.000Z')).events, ['subscription.activated', 'prepaid.order_created'])
  })
})

describe('afterFailure: dunning on the store schedule, counted from the first failure', () => {
  const FIRST = '2026-02-10T09:00:00.000Z'
  const plus = (days: number) => new Date(new Date(FIRST).getTime() + days * 86_400_000).toISOString()

  /** Runs attempts 1..n through afterFailure as the engine would, applying each decision. */
  function dun(store: Store, attempts: number, start: Partial<SubscriptionRow> = {}) {
    let row = subscription(start)
    const decisions = []
    let at = FIRST
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const decision = afterFailure(row, store, attempt, d(FIRST), d(at))
      decisions.push({ attempt, at, nextRetryAt: iso(decision.nextRetryAt), events: decision.events, set: decision.set })
      row = { ...row, ...(decision.set as Partial<SubscriptionRow>) }
      if (decision.nextRetryAt) at = decision.nextRetryAt.toISOString()
    }
    return { decisions, row }
  }

  test('default [1,3,5,7]: retries at first failure +1, +3, +5, +7 days; past_due after the 5th failure', () => {
    const { decisions, row } = dun(utc, 5)
    assert.deepEqual(
      decisions.map(({ attempt, at, nextRetryAt, events }) => ({ attempt, at, nextRetryAt, events })),
      [
        { attempt: 1, at: FIRST, nextRetryAt: plus(1), events: [] },
        { attempt: 2, at: plus(1), nextRetryAt: plus(3), events: [] },
        { attempt: 3, at: plus(3), nextRetryAt: plus(5), events: [] },
        { attempt: 4, at: plus(5), nextRetryAt: plus(7), events: [] },
        { attempt: 5, at: plus(7), nextRetryAt: null, events: ['subscription.past_due'] },
      ],
    )
    assert.equal(row.status, 'past_due')
    assert.equal(iso(row.past_due_at), plus(7))
    assert.equal(row.next_charge_at, null, 'past_due waits for a new instrument: nothing is scheduled')
    assert.equal(iso(row.dunning_started_at), FIRST, 'the schedule stays counted from the first failure')
    assert.equal(iso(row.unpaid_period_start), FIRST)
    assert.equal(row.dunning_attempts, 5)
  })

  test('each failure records the attempt, the first failure and the unpaid period, and sets next_charge_at to the retry', () => {
    const { decisions } = dun(utc, 2)
    assert.deepEqual(
      { ...decisions[1]!.set, dunning_started_at: iso(decisions[1]!.set.dunning_started_at as Date), unpaid_period_start: iso(decisions[1]!.set.unpaid_period_start as Date), next_charge_at: iso(decisions[1]!.set.next_charge_at as Date) },
      { pending_charge_id: null, dunning_attempts: 2, dunning_started_at: FIRST, unpaid_period_start: FIRST, next_charge_at: plus(3) },
    )
    assert.ok(!('status' in decisions[0]!.set), 'a failure with retries left keeps the subscription active')
  })

  const schedules: { days: number[]; retries: string[] }[] = [
    { days: [2], retries: [plus(2)] },
    { days: [1, 2], retries: [plus(1), plus(2)] },
    { days: [3, 10, 20], retries: [plus(3), plus(10), plus(20)] },
  ]
  for (const { days, retries } of schedules) {
    test(`store schedule [${days.join(',')}]: ${days.length} retries, then past_due`, () => {
      const { decisions, row } = dun({ timezone: 'UTC', dunning_retry_days: days, ...UNPRICED }, days.length + 1)
      assert.deepEqual(decisions.map((decision) => decision.nextRetryAt), [...retries, null])
      assert.deepEqual(decisions.at(-1)!.events, ['subscription.past_due'])
      assert.equal(row.status, 'past_due')
    })
  }

  test('a retry brought forward by a new instrument that fails keeps the schedule when its next date is still ahead', () => {
    // First failure at FIRST; the instrument is changed and attempt 2 fails 2 hours later: attempt 3 is still at +3 days.
    const row = subscription({ dunning_attempts: 1, dunning_started_at: d(FIRST), unpaid_period_start: d(FIRST) })
    const failure = afterFailure(row, utc, 2, d(FIRST), d('2026-02-10T11:00:00.000Z'))
    assert.equal(iso(failure.nextRetryAt), plus(3))
  })

  test('a retry whose scheduled next date already passed is set a day after the failure, never in the past', () => {
    const row = subscription({ dunning_attempts: 1, dunning_started_at: d(FIRST), unpaid_period_start: d(FIRST) })
    const at = plus(4)
    const failure = afterFailure(row, utc, 2, d(FIRST), d(at))
    assert.equal(iso(failure.nextRetryAt), plus(5))
    const late = afterFailure(row, { timezone: 'UTC', dunning_retry_days: [1, 2] }, 2, d(FIRST), d(at))
    assert.equal(iso(late.nextRetryAt), plus(5), 'at + 1 day')
  })

  test('a past_due subscription that fails again (new instrument declined) stays past_due with no event and nothing scheduled', () => {
    const row = subscription({ status: 'past_due', dunning_attempts: 5, dunning_started_at: d(FIRST), unpaid_period_start: d(FIRST), past_due_at: d(plus(7)), next_charge_at: d(plus(10)) })
    const failure = afterFailure(row, utc, 6, d(FIRST), d(plus(10)))
    assert.equal(failure.nextRetryAt, null)
    assert.deepEqual(failure.events, [])
    assert.ok(!('status' in failure.set), 'stays past_due')
    assert.ok(!('past_due_at' in failure.set), 'the automatic cancellation stays counted from the first time it went past_due')
    assert.equal(failure.set.next_charge_at, null)
    assert.equal(failure.set.dunning_attempts, 6)
  })
})
