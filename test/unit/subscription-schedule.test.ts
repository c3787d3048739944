import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { addDays, periodAt, periodBoundary } from '../../src/lib/calendar.ts'
import { activationTime, reanchorAtNextCharge, scheduleAtActivation, type Cadence } from '../../src/modules/subscriptions/subscription-schedule.ts'

const NY = 'America/New_York'
const d = (iso: string) => new Date(iso)
const iso = (date: Date | null) => date?.toISOString() ?? null
const monthly: Cadence = { interval: 'month', interval_count: 1, prepaid_cycles: null }

describe('scheduleAtActivation', () => {
  test('a normal start: period 0 is [at, at + interval] and the next charge is at its end (the checkout paid period 0)', () => {
    const at = d('2026-01-15T15:00:00.000Z')
    const schedule = scheduleAtActivation(at, monthly, false, 'UTC')
    assert.deepEqual(
      {
        billing_anchor_at: iso(schedule.billing_anchor_at),
        period_index: schedule.period_index,
        current_period_start: iso(schedule.current_period_start),
        current_period_end: iso(schedule.current_period_end),
        next_charge_at: iso(schedule.next_charge_at),
        prepaid_cycles_remaining: schedule.prepaid_cycles_remaining,
      },
      {
        billing_anchor_at: '2026-01-15T15:00:00.000Z',
        period_index: 0,
        current_period_start: '2026-01-15T15:00:00.000Z',
        current_period_end: '2026-02-15T15:00:00.000Z',
        next_charge_at: '2026-02-15T15:00:00.000Z',
        prepaid_cycles_remaining: null,
      },
    )
  })

  test('after a trial nothing is paid yet: the first charge is due at activation, period_index -1, no current period', () => {
    const at = d('2026-02-14T15:00:00.000Z')
    const schedule = scheduleAtActivation(at, monthly, true, NY)
    assert.equal(iso(schedule.next_charge_at), '2026-02-14T15:00:00.000Z')
    assert.equal(iso(schedule.billing_anchor_at), '2026-02-14T15:00:00.000Z')
    assert.equal(schedule.period_index, -1)
    assert.equal(schedule.current_period_start, null)
    assert.equal(schedule.current_period_end, null)
    assert.equal(schedule.prepaid_cycles_remaining, null)
  })

  test('a prepaid plan after a trial still has its whole block to pay', () => {
    const schedule = scheduleAtActivation(d('2026-02-14T15:00:00.000Z'), { interval: 'month', interval_count: 1, prepaid_cycles: 3 }, true, 'UTC')
    assert.equal(iso(schedule.next_charge_at), '2026-02-14T15:00:00.000Z')
    assert.equal(schedule.prepaid_cycles_remaining, 3)
  })

  test('prepaid: the next charge comes after the whole block, and cycles_remaining is total - 1', () => {
    const schedule = scheduleAtActivation(d('2026-01-15T15:00:00.000Z'), { interval: 'month', interval_count: 1, prepaid_cycles: 3 }, false, 'UTC')
    assert.equal(schedule.period_index, 0)
    assert.equal(iso(schedule.current_period_start), '2026-01-15T15:00:00.000Z')
    assert.equal(iso(schedule.current_period_end), '2026-02-15T15:00:00.000Z')
    assert.equal(iso(schedule.next_charge_at), '2026-04-15T15:00:00.000Z')
    assert.equal(schedule.prepaid_cycles_remaining, 2)
  })

  test('a weekly prepaid block in New York ends at the same local time after the March DST change', () => {
    // 10:00 EST (UTC-5) plus four weeks is 10:00 EDT (UTC-4).
    const schedule = scheduleAtActivation(d('2026-03-01T15:00:00.000Z'), { interval: 'week', interval_count: 1, prepaid_cycles: 4 }, false, NY)
    assert.equal(iso(schedule.current_period_end), '2026-03-08T14:00:00.000Z')
    assert.equal(iso(schedule.next_charge_at), '2026-03-29T14:00:00.000Z')
    assert.equal(schedule.prepaid_cycles_remaining, 3)
  })
})

describe('activationTime', () => {
  test('without trial days a subscription activates at its start', () => {
    assert.equal(iso(activationTime(d('2026-03-01T15:00:00.000Z'), 0, NY)), '2026-03-01T15:00:00.000Z')
  })

  test('trial days are counted on the store wall clock: 14 days from 10:00 EST is 10:00 EDT', () => {
    assert.equal(iso(activationTime(d('2026-03-01T15:00:00.000Z'), 14, NY)), '2026-03-15T14:00:00.000Z')
    assert.equal(iso(addDays(d('2026-03-01T15:00:00.000Z'), 14, NY)), '2026-03-15T14:00:00.000Z')
  })
})

describe('calendar periodBoundary', () => {
  test('monthly from Jan 31 clamps to Feb 28 and comes back to Mar 31 (anchored, not chained)', () => {
    const anchor = d('2026-01-31T12:00:00.000Z')
    assert.deepEqual(
      [0, 1, 2, 3].map((index) => iso(periodBoundary(anchor, 'month', 1, index, 'UTC'))),
      ['2026-01-31T12:00:00.000Z', '2026-02-28T12:00:00.000Z', '2026-03-31T12:00:00.000Z', '2026-04-30T12:00:00.000Z'],
    )
  })

  test('in a leap year Jan 31 2028 is followed by Feb 29', () => {
    const anchor = d('2028-01-31T12:00:00.000Z')
    assert.equal(iso(periodBoundary(anchor, 'month', 1, 1, 'UTC')), '2028-02-29T12:00:00.000Z')
    assert.equal(iso(periodBoundary(anchor, 'month', 1, 2, 'UTC')), '2028-03-31T12:00:00.000Z')
  })

  test('yearly from Feb 29 falls on Feb 28 in common years and on Feb 29 again in the next leap year', () => {
    const anchor = d('2028-02-29T12:00:00.000Z')
    assert.equal(iso(periodBoundary(anchor, 'year', 1, 1, 'UTC')), '2029-02-28T12:00:00.000Z')
    assert.equal(iso(periodBoundary(anchor, 'year', 1, 4, 'UTC')), '2032-02-29T12:00:00.000Z')
  })

  test('every 3 months from Nov 30 is Feb 28, then May 30 (the anchor day comes back)', () => {
    const anchor = d('2025-11-30T12:00:00.000Z')
    assert.equal(iso(periodBoundary(anchor, 'month', 3, 1, 'UTC')), '2026-02-28T12:00:00.000Z')
    assert.equal(iso(periodBoundary(anchor, 'month', 3, 2, 'UTC')), '2026-05-30T12:00:00.000Z')
  })

  test("month ends are the store's, not UTC's: Jan 31 23:30 in New York renews Feb 28 23:30 and Mar 31 23:30 local", () => {
    const anchor = d('2026-02-01T04:30:00.000Z')
    assert.equal(iso(periodBoundary(anchor, 'month', 1, 1, NY)), '2026-03-01T04:30:00.000Z')
    assert.equal(iso(periodBoundary(anchor, 'month', 1, 2, NY)), '2026-04-01T03:30:00.000Z')
  })

  test('weekly across the March DST change in New York keeps 10:00 local (a different UTC offset)', () => {
    const anchor = d('2026-03-01T15:00:00.000Z')
    const next = periodBoundary(anchor, 'week', 1, 1, NY)
    assert.equal(iso(next), '2026-03-08T14:00:00.000Z')
    assert.equal(next.getTime() - anchor.getTime(), 7 * 86_400_000 - 3_600_000, 'that week is an hour short')
  })

  test('daily across the November DST change in New York keeps 10:00 local', () => {
    const anchor = d('2026-10-31T14:00:00.000Z')
    const next = periodBoundary(anchor, 'day', 1, 1, NY)
    assert.equal(iso(next), '2026-11-01T15:00:00.000Z')
    assert.equal(next.getTime() - anchor.getTime(), 25 * 3_600_000, 'that day is 25 hours long')
    assert.equal(iso(periodBoundary(anchor, 'day', 1, 2, NY)), '2026-11-02T15:00:00.000Z')
  })

  test('periodAt spans one boundary to the next', () => {
    const period = periodAt(d('2026-01-31T12:00:00.000Z'), 'month', 1, 1, 'UTC')
    assert.deepEqual([iso(period.start), iso(period.end)], ['2026-02-28T12:00:00.000Z', '2026-03-31T12:00:00.000Z'])
  })
})

describe('reanchorAtNextCharge', () => {
  test('a new cadence is anchored at the next charge, which stays where it was; later charges follow the new cadence', () => {
    const next = d('2026-02-15T15:00:00.000Z')
    const anchored = reanchorAtNextCharge({ next_charge_at: next })
    assert.deepEqual(anchored, { billing_anchor_at: next, period_index: -1 })
    // The schedule invariant: the next charge starts period period_index + 1 counted from the anchor.
    assert.equal(iso(periodBoundary(anchored!.billing_anchor_at!, 'week', 1, anchored!.period_index + 1, 'UTC')), '2026-02-15T15:00:00.000Z')
    assert.equal(iso(periodBoundary(anchored!.billing_anchor_at!, 'week', 1, anchored!.period_index + 2, 'UTC')), '2026-02-22T15:00:00.000Z')
  })

  test('without a scheduled charge there is nothing to re-anchor', () => {
    assert.equal(reanchorAtNextCharge({ next_charge_at: null }), undefined)
  })
})
