import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import fc from 'fast-check'
import { DateTime } from 'luxon'
import { addDays, periodAt, periodBoundary } from '../../src/lib/calendar.ts'
import type { PlanInterval } from '../../src/db/database.ts'

/*
 * The billing calendar (docs/contract.md, Billing: period arithmetic): boundary `i` of a plan
 * is `anchor + i x count x interval` on the store's wall clock, always counted from the anchor.
 *
 * What luxon does at the edges, pinned below:
 * - A wall-clock time that does not exist that day (spring forward: 02:30 in New York on 2026-03-08) is
 *   moved forward by the length of the gap: 02:30 EST does not exist, the boundary is 03:30 EDT, which is
 *   the same instant as "02:30 at the offset in force before the change" (07:30Z). The next day is 02:30 again.
 * - A wall-clock time that exists twice (fall back: 01:30 in New York on 2026-11-01) resolves to the
 *   occurrence whose offset equals the anchor's own offset when that is possible: a summer (EDT) anchor
 *   gives the first 01:30 (EDT), a winter (EST) anchor gives the second (EST). Deterministic per anchor,
 *   so recomputation is stable; either way no renewal is skipped or doubled.
 */

const NY = 'America/New_York'
const BERLIN = 'Europe/Berlin'
const AUCKLAND = 'Pacific/Auckland'
const HOUR = 3_600_000

/** An instant from a local wall-clock time in a zone; refuses times that do not exist there. */
function at(localIso: string, zone: string): Date {
  const dt = DateTime.fromISO(localIso, { zone })
  assert.ok(dt.isValid, `${localIso} in ${zone}: ${dt.invalidExplanation}`)
  assert.equal(dt.toFormat("yyyy-MM-dd'T'HH:mm"), localIso.slice(0, 16), `${localIso} does not exist in ${zone}`)
  return dt.toJSDate()
}

/** Local ISO with offset, e.g. 2026-03-08T03:30:00-04:00. */
function local(date: Date, zone: string): string {
  return DateTime.fromJSDate(date, { zone }).toISO({ suppressMilliseconds: true }) ?? 'invalid'
}

const localDate = (date: Date, zone: string) => DateTime.fromJSDate(date, { zone }).toISODate()
const localTime = (date: Date, zone: string) => DateTime.fromJSDate(date, { zone }).toFormat('HH:mm:ss')
const range = (n: number) => Array.from({ length: n }, (_, i) => i)
const boundaries = (anchor: Date, interval: PlanInterval, count: number, n: number, zone: string) =>
  range(n).map((i) => periodBoundary(anchor, interval, count, i, zone))
const hoursBetween = (dates: Date[]) => dates.slice(1).map((d, i) => (d.getTime() - dates[i]!.getTime()) / HOUR)

function assertStrictlyIncreasing(dates: Date[], label: string): void {
  for (let i = 1; i < dates.length; i++) {
    assert.ok(dates[i]!.getTime() > dates[i - 1]!.getTime(), `${label}: boundary ${i} (${dates[i]!.toISOString()}) is not after boundary ${i - 1} (${dates[i - 1]!.toISOString()})`)
  }
}

/** Pure Gregorian arithmetic (no luxon), the oracle for calendar dates. */
function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate()
}
function addCalendarDays(ymd: { year: number; month: number; day: number }, days: number) {
  const d = new Date(Date.UTC(ymd.year, ymd.month - 1, ymd.day + days))
  // Date.UTC maps years 0-99 to 1900-1999; anchors here are far from that.
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() }
}
function addCalendarMonths(ymd: { year: number; month: number; day: number }, months: number) {
  const total = ymd.year * 12 + (ymd.month - 1) + months
  const year = Math.floor(total / 12)
  const month = (total % 12) + 1
  return { year, month, day: Math.min(ymd.day, daysInMonth(year, month)) }
}

describe('periodBoundary: intervals x count on the store clock', () => {
  const anchor = at('2026-01-15T09:00', NY)
  const table: Array<{ interval: PlanInterval; count: number; expected: string[] }> = [
    { interval: 'day', count: 1, expected: ['2026-01-15T09:00:00-05:00', '2026-01-16T09:00:00-05:00', '2026-01-17T09:00:00-05:00', '2026-01-18T09:00:00-05:00'] },
    { interval: 'day', count: 3, expected: ['2026-01-15T09:00:00-05:00', '2026-01-18T09:00:00-05:00', '2026-01-21T09:00:00-05:00', '2026-01-24T09:00:00-05:00'] },
    { interval: 'day', count: 30, expected: ['2026-01-15T09:00:00-05:00', '2026-02-14T09:00:00-05:00', '2026-03-16T09:00:00-04:00', '2026-04-15T09:00:00-04:00'] },
    { interval: 'week', count: 1, expected: ['2026-01-15T09:00:00-05:00', '2026-01-22T09:00:00-05:00', '2026-01-29T09:00:00-05:00', '2026-02-05T09:00:00-05:00'] },
    { interval: 'week', count: 2, expected: ['2026-01-15T09:00:00-05:00', '2026-01-29T09:00:00-05:00', '2026-02-12T09:00:00-05:00', '2026-02-26T09:00:00-05:00'] },
    { interval: 'week', count: 4, expected: ['2026-01-15T09:00:00-05:00', '2026-02-12T09:00:00-05:00', '2026-03-12T09:00:00-04:00', '2026-04-09T09:00:00-04:00'] },
    { interval: 'month', count: 1, expected: ['2026-01-15T09:00:00-05:00', '2026-02-15T09:00:00-05:00', '2026-03-15T09:00:00-04:00', '2026-04-15T09:00:00-04:00'] },
    { interval: 'month', count: 2, expected: ['2026-01-15T09:00:00-05:00', '2026-03-15T09:00:00-04:00', '2026-05-15T09:00:00-04:00', '2026-07-15T09:00:00-04:00'] },
    { interval: 'month', count: 3, expected: ['2026-01-15T09:00:00-05:00', '2026-04-15T09:00:00-04:00', '2026-07-15T09:00:00-04:00', '2026-10-15T09:00:00-04:00', '2027-01-15T09:00:00-05:00'] },
    { interval: 'month', count: 6, expected: ['2026-01-15T09:00:00-05:00', '2026-07-15T09:00:00-04:00', '2027-01-15T09:00:00-05:00'] },
    { interval: 'month', count: 12, expected: ['2026-01-15T09:00:00-05:00', '2027-01-15T09:00:00-05:00', '2028-01-15T09:00:00-05:00'] },
    { interval: 'year', count: 1, expected: ['2026-01-15T09:00:00-05:00', '2027-01-15T09:00:00-05:00', '2028-01-15T09:00:00-05:00', '2029-01-15T09:00:00-05:00'] },
    { interval: 'year', count: 3, expected: ['2026-01-15T09:00:00-05:00', '2029-01-15T09:00:00-05:00', '2032-01-15T09:00:00-05:00'] },
  ]
  for (const row of table) {
    test(`every ${row.count} ${row.interval}(s) from 2026-01-15 09:00 New York`, () => {
      const got = boundaries(anchor, row.interval, row.count, row.expected.length, NY)
      assert.deepEqual(got.map((d) => local(d, NY)), row.expected)
      assertStrictlyIncreasing(got, `${row.count} ${row.interval}`)
    })
  }

  test('periodAt: period i is [boundary i, boundary i+1), consecutive periods touch (no gap, no overlap)', () => {
    for (const row of table) {
      for (let i = 0; i < 6; i++) {
        const p = periodAt(anchor, row.interval, row.count, i, NY)
        const next = periodAt(anchor, row.interval, row.count, i + 1, NY)
        assert.equal(p.start.getTime(), periodBoundary(anchor, row.interval, row.count, i, NY).getTime())
        assert.equal(p.end.getTime(), next.start.getTime())
        assert.ok(p.end > p.start)
      }
    }
  })

  test("the store's timezone decides the calendar: one instant, two stores, different month-end clamping", () => {
    const instant = new Date('2026-01-31T03:00:00.000Z') // Jan 31 in UTC, still Jan 30 22:00 in New York
    assert.deepEqual(boundaries(instant, 'month', 1, 3, 'UTC').map((d) => d.toISOString()), [
      '2026-01-31T03:00:00.000Z',
      '2026-02-28T03:00:00.000Z',
      '2026-03-31T03:00:00.000Z',
    ])
    assert.deepEqual(boundaries(instant, 'month', 1, 4, NY).map((d) => local(d, NY)), [
      '2026-01-30T22:00:00-05:00',
      '2026-02-28T22:00:00-05:00',
      '2026-03-30T22:00:00-04:00',
      '2026-04-30T22:00:00-04:00',
    ])
  })
})

describe('month ends clamp and return to the anchor day', () => {
  const table: Array<{ name: string; anchor: string; count: number; expected: string[] }> = [
    {
      name: 'Jan 31 in a non-leap year, a whole year',
      anchor: '2026-01-31T10:00',
      count: 1,
      expected: ['2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30', '2026-05-31', '2026-06-30', '2026-07-31', '2026-08-31', '2026-09-30', '2026-10-31', '2026-11-30', '2026-12-31', '2027-01-31'],
    },
    { name: 'Jan 31 in a leap year', anchor: '2028-01-31T10:00', count: 1, expected: ['2028-01-31', '2028-02-29', '2028-03-31', '2028-04-30', '2028-05-31'] },
    { name: 'Jan 30', anchor: '2026-01-30T10:00', count: 1, expected: ['2026-01-30', '2026-02-28', '2026-03-30', '2026-04-30', '2026-05-30'] },
    { name: 'Jan 29, non-leap', anchor: '2026-01-29T10:00', count: 1, expected: ['2026-01-29', '2026-02-28', '2026-03-29'] },
    { name: 'Jan 29, leap', anchor: '2028-01-29T10:00', count: 1, expected: ['2028-01-29', '2028-02-29', '2028-03-29'] },
    { name: 'Mar 31', anchor: '2026-03-31T10:00', count: 1, expected: ['2026-03-31', '2026-04-30', '2026-05-31', '2026-06-30', '2026-07-31'] },
    // The anchor is a day of the month, not "the last day": Feb 28 stays the 28th.
    { name: 'Feb 28 (the anchor day is 28, not "month end")', anchor: '2026-02-28T10:00', count: 1, expected: ['2026-02-28', '2026-03-28', '2026-04-28'] },
    { name: 'Dec 31 into a leap February', anchor: '2027-12-31T10:00', count: 1, expected: ['2027-12-31', '2028-01-31', '2028-02-29', '2028-03-31'] },
    // every 2 months
    { name: 'every 2 months from Jan 31', anchor: '2026-01-31T10:00', count: 2, expected: ['2026-01-31', '2026-03-31', '2026-05-31', '2026-07-31', '2026-09-30', '2026-11-30', '2027-01-31'] },
    { name: 'every 2 months from Dec 31 (leap Feb)', anchor: '2027-12-31T10:00', count: 2, expected: ['2027-12-31', '2028-02-29', '2028-04-30', '2028-06-30', '2028-08-31'] },
    { name: 'every 2 months from Aug 31', anchor: '2026-08-31T10:00', count: 2, expected: ['2026-08-31', '2026-10-31', '2026-12-31', '2027-02-28', '2027-04-30', '2027-06-30'] },
    // every 3 months
    { name: 'every 3 months from Jan 31', anchor: '2026-01-31T10:00', count: 3, expected: ['2026-01-31', '2026-04-30', '2026-07-31', '2026-10-31', '2027-01-31'] },
    { name: 'every 3 months from Nov 30', anchor: '2026-11-30T10:00', count: 3, expected: ['2026-11-30', '2027-02-28', '2027-05-30', '2027-08-30', '2027-11-30'] },
    { name: 'every 3 months from Aug 31 (leap Feb)', anchor: '2027-08-31T10:00', count: 3, expected: ['2027-08-31', '2027-11-30', '2028-02-29', '2028-05-31', '2028-08-31'] },
  ]
  for (const row of table) {
    test(`${row.name} (New York, 10:00)`, () => {
      const anchor = at(row.anchor, NY)
      const got = boundaries(anchor, 'month', row.count, row.expected.length, NY)
      assert.deepEqual(got.map((d) => localDate(d, NY)), row.expected)
      for (const d of got) assert.equal(localTime(d, NY), '10:00:00', 'the time of day survives clamping and DST')
      assertStrictlyIncreasing(got, row.name)
    })
  }

  test('index n is counted from the original anchor, far out too (Jan 31 2026: index 25 is Feb 29 2028, 26 is Mar 31 2028, 120 is Jan 31 2036)', () => {
    const anchor = at('2026-01-31T10:00', NY)
    assert.equal(local(periodBoundary(anchor, 'month', 1, 25, NY), NY), '2028-02-29T10:00:00-05:00')
    assert.equal(local(periodBoundary(anchor, 'month', 1, 26, NY), NY), '2028-03-31T10:00:00-04:00')
    assert.equal(local(periodBoundary(anchor, 'month', 1, 120, NY), NY), '2036-01-31T10:00:00-05:00')
    assert.equal(local(periodBoundary(anchor, 'month', 2, 13, NY), NY), '2028-03-31T10:00:00-04:00')
  })

  test('never drifts after a clamp: chaining from the previous boundary would give Mar 28, the anchor gives Mar 31', () => {
    const anchor = at('2026-01-31T10:00', NY)
    const feb = periodBoundary(anchor, 'month', 1, 1, NY)
    const chained = periodBoundary(feb, 'month', 1, 1, NY)
    assert.equal(localDate(chained, NY), '2026-03-28') // what a drifting implementation would do
    assert.equal(localDate(periodBoundary(anchor, 'month', 1, 2, NY), NY), '2026-03-31')
    const february = periodAt(anchor, 'month', 1, 1, NY)
    assert.deepEqual([local(february.start, NY), local(february.end, NY)], ['2026-02-28T10:00:00-05:00', '2026-03-31T10:00:00-04:00'])
  })
})

describe('year plans anchored on Feb 29', () => {
  // 00:30 in Berlin on Feb 29 is Feb 28 23:30 UTC: a UTC calendar would never produce Feb 29 here.
  const anchor = at('2024-02-29T00:30', BERLIN)
  const table: Array<{ count: number; indices: number[]; expected: string[] }> = [
    {
      count: 1,
      indices: [0, 1, 2, 3, 4, 5, 8, 76, 80],
      expected: ['2024-02-29', '2025-02-28', '2026-02-28', '2027-02-28', '2028-02-29', '2029-02-28', '2032-02-29', '2100-02-28', '2104-02-29'],
    },
    { count: 2, indices: [0, 1, 2, 3, 4], expected: ['2024-02-29', '2026-02-28', '2028-02-29', '2030-02-28', '2032-02-29'] },
    { count: 4, indices: [0, 1, 2, 19], expected: ['2024-02-29', '2028-02-29', '2032-02-29', '2100-02-28'] },
  ]
  for (const row of table) {
    test(`every ${row.count} year(s): Feb 28 in common years, back to Feb 29 in leap years (2100 is not one)`, () => {
      const got = row.indices.map((i) => periodBoundary(anchor, 'year', row.count, i, BERLIN))
      assert.deepEqual(got.map((d) => localDate(d, BERLIN)), row.expected)
      for (const d of got) assert.equal(localTime(d, BERLIN), '00:30:00')
      assertStrictlyIncreasing(got, `every ${row.count} years`)
    })
  }

  test('an anchor on Feb 28 of a common year stays on the 28th in a leap year', () => {
    const anchor28 = at('2027-02-28T12:00', BERLIN)
    assert.deepEqual(boundaries(anchor28, 'year', 1, 3, BERLIN).map((d) => localDate(d, BERLIN)), ['2027-02-28', '2028-02-28', '2029-02-28'])
  })

  test('monthly from Feb 29: the 29th every month, Feb 28 in the next (common) year, then the 29th again', () => {
    const got = [0, 1, 2, 11, 12, 13].map((i) => localDate(periodBoundary(anchor, 'month', 1, i, BERLIN), BERLIN))
    assert.deepEqual(got, ['2024-02-29', '2024-03-29', '2024-04-29', '2025-01-29', '2025-02-28', '2025-03-29'])
  })
})

describe('daylight saving: daily and weekly keep the wall-clock time, never skip or double a renewal', () => {
  type Change = { zone: string; day: string; kind: 'spring' | 'fall' }
  const changes: Change[] = [
    { zone: NY, day: '2026-03-08', kind: 'spring' },
    { zone: NY, day: '2026-11-01', kind: 'fall' },
    { zone: BERLIN, day: '2026-03-29', kind: 'spring' },
    { zone: BERLIN, day: '2026-10-25', kind: 'fall' },
    // Southern hemisphere, for good measure: NZ summer time ends in April and starts in September.
    { zone: AUCKLAND, day: '2026-04-05', kind: 'fall' },
    { zone: AUCKLAND, day: '2026-09-27', kind: 'spring' },
  ]

  test('the table really lists DST changes (the local day is 23 h or 25 h long)', () => {
    for (const c of changes) {
      const start = DateTime.fromISO(c.day, { zone: c.zone })
      const hours = start.plus({ days: 1 }).diff(start, 'hours').hours
      assert.equal(hours, c.kind === 'spring' ? 23 : 25, `${c.zone} ${c.day}`)
    }
  })

  for (const c of changes) {
    for (const time of ['00:00', '09:00', '23:30']) {
      test(`daily at ${time} across ${c.zone} ${c.day} (${c.kind})`, () => {
        const first = DateTime.fromISO(`${c.day}T${time}`, { zone: c.zone }).minus({ days: 5 })
        const anchor = at(first.toISO()!.slice(0, 16), c.zone)
        const got = boundaries(anchor, 'day', 1, 11, c.zone)
        assertStrictlyIncreasing(got, 'daily')
        // exactly one boundary per local calendar day: the local dates are consecutive, none missing, none twice
        const expectedDates = range(11).map((i) => first.plus({ days: i }).toISODate())
        assert.deepEqual(got.map((d) => localDate(d, c.zone)), expectedDates)
        for (const d of got) assert.equal(localTime(d, c.zone), `${time}:00`)
        // UTC differences: 24 h except the one interval that contains the change
        const changed = c.kind === 'spring' ? 23 : 25
        const containsChange = (i: number) => (time === '00:00' ? expectedDates[i + 1] === DateTime.fromISO(c.day).plus({ days: 1 }).toISODate() : expectedDates[i + 1] === c.day)
        assert.deepEqual(hoursBetween(got), range(10).map((i) => (containsChange(i) ? changed : 24)))
        // the change instant lies in exactly one daily period
        const changeInstant = DateTime.fromISO(c.day, { zone: c.zone }).plus({ hours: 4 }).toJSDate()
        const containing = range(10).map((i) => periodAt(anchor, 'day', 1, i, c.zone)).filter((p) => p.start <= changeInstant && changeInstant < p.end)
        assert.equal(containing.length, 1)
      })
    }

    test(`weekly across ${c.zone} ${c.day} (${c.kind})`, () => {
      const first = DateTime.fromISO(`${c.day}T09:00`, { zone: c.zone }).minus({ days: 10 })
      const anchor = at(first.toISO()!.slice(0, 16), c.zone)
      const got = boundaries(anchor, 'week', 1, 5, c.zone)
      assertStrictlyIncreasing(got, 'weekly')
      assert.deepEqual(got.map((d) => localDate(d, c.zone)), range(5).map((i) => first.plus({ weeks: i }).toISODate()))
      for (const d of got) assert.equal(localTime(d, c.zone), '09:00:00')
      const weekday = DateTime.fromJSDate(anchor, { zone: c.zone }).weekday
      for (const d of got) assert.equal(DateTime.fromJSDate(d, { zone: c.zone }).weekday, weekday)
      // the change falls in the week [day-3, day+4): 167 h or 169 h there, 168 h elsewhere
      assert.deepEqual(hoursBetween(got), [168, c.kind === 'spring' ? 167 : 169, 168, 168])
    })
  }

  test('every 2 weeks and every 3 days across the New York spring change', () => {
    const anchor = at('2026-03-01T09:00', NY)
    assert.deepEqual(boundaries(anchor, 'week', 2, 3, NY).map((d) => local(d, NY)), ['2026-03-01T09:00:00-05:00', '2026-03-15T09:00:00-04:00', '2026-03-29T09:00:00-04:00'])
    assert.deepEqual(hoursBetween(boundaries(anchor, 'week', 2, 3, NY)), [335, 336])
    assert.deepEqual(boundaries(anchor, 'day', 3, 4, NY).map((d) => local(d, NY)), ['2026-03-01T09:00:00-05:00', '2026-03-04T09:00:00-05:00', '2026-03-07T09:00:00-05:00', '2026-03-10T09:00:00-04:00'])
    assert.deepEqual(hoursBetween(boundaries(anchor, 'day', 3, 4, NY)), [72, 72, 71])
  })

  test('monthly keeps the wall-clock time across both changes (the UTC time moves by an hour)', () => {
    const anchor = at('2026-02-15T09:00', NY)
    const got = boundaries(anchor, 'month', 1, 11, NY)
    for (const d of got) assert.equal(localTime(d, NY), '09:00:00')
    assert.deepEqual([got[0]!.toISOString(), got[1]!.toISOString(), got[9]!.toISOString()], ['2026-02-15T14:00:00.000Z', '2026-03-15T13:00:00.000Z', '2026-11-15T14:00:00.000Z'])
  })
})

describe('wall-clock times that do not exist or exist twice', () => {
  test('02:30 on the New York spring-forward day does not exist: luxon moves it forward by the gap, 03:30 EDT (= 02:30 EST), then back to 02:30', () => {
    const anchor = at('2026-03-06T02:30', NY)
    const got = boundaries(anchor, 'day', 1, 5, NY)
    assert.deepEqual(got.map((d) => local(d, NY)), [
      '2026-03-06T02:30:00-05:00',
      '2026-03-07T02:30:00-05:00',
      '2026-03-08T03:30:00-04:00',
      '2026-03-09T02:30:00-04:00',
      '2026-03-10T02:30:00-04:00',
    ])
    assert.equal(got[2]!.toISOString(), '2026-03-08T07:30:00.000Z') // 02:30 at the pre-change offset (-05:00)
    assert.deepEqual(hoursBetween(got), [24, 24, 23, 24])
    assertStrictlyIncreasing(got, 'daily 02:30')
  })

  test('the same for a monthly plan: Feb 8 02:30 -> Mar 8 03:30 EDT -> Apr 8 02:30 EDT', () => {
    const anchor = at('2026-02-08T02:30', NY)
    assert.deepEqual(boundaries(anchor, 'month', 1, 3, NY).map((d) => local(d, NY)), ['2026-02-08T02:30:00-05:00', '2026-03-08T03:30:00-04:00', '2026-04-08T02:30:00-04:00'])
  })

  test('02:30 on the Berlin spring-forward day does not exist: 03:30 CEST (= 02:30 CET, 01:30Z)', () => {
    const anchor = at('2026-03-27T02:30', BERLIN)
    const got = boundaries(anchor, 'day', 1, 4, BERLIN)
    assert.deepEqual(got.map((d) => local(d, BERLIN)), ['2026-03-27T02:30:00+01:00', '2026-03-28T02:30:00+01:00', '2026-03-29T03:30:00+02:00', '2026-03-30T02:30:00+02:00'])
    assert.equal(got[2]!.toISOString(), '2026-03-29T01:30:00.000Z')
    assert.deepEqual(hoursBetween(got), [24, 24, 23])
  })

  test('01:30 on the New York fall-back day exists twice: a summer anchor gets the first (EDT), a winter anchor the second (EST)', () => {
    const summer = at('2026-10-30T01:30', NY)
    const daily = boundaries(summer, 'day', 1, 5, NY)
    assert.deepEqual(daily.map((d) => local(d, NY)), [
      '2026-10-30T01:30:00-04:00',
      '2026-10-31T01:30:00-04:00',
      '2026-11-01T01:30:00-04:00',
      '2026-11-02T01:30:00-05:00',
      '2026-11-03T01:30:00-05:00',
    ])
    assert.deepEqual(hoursBetween(daily), [24, 24, 25, 24])

    const winter = new Date('2025-12-01T06:30:00.000Z') // 2025-12-01 01:30 EST
    assert.equal(local(winter, NY), '2025-12-01T01:30:00-05:00')
    assert.equal(local(periodBoundary(winter, 'month', 1, 10, NY), NY), '2026-10-01T01:30:00-04:00')
    assert.equal(periodBoundary(winter, 'month', 1, 11, NY).toISOString(), '2026-11-01T06:30:00.000Z') // 01:30 EST, the second one
    assert.equal(periodBoundary(winter, 'month', 1, 12, NY).toISOString(), '2026-12-01T06:30:00.000Z')
  })

  test('02:30 on the Berlin fall-back day exists twice: a summer anchor gets the first (CEST)', () => {
    const anchor = at('2026-10-23T02:30', BERLIN)
    const got = boundaries(anchor, 'day', 1, 4, BERLIN)
    assert.deepEqual(got.map((d) => local(d, BERLIN)), ['2026-10-23T02:30:00+02:00', '2026-10-24T02:30:00+02:00', '2026-10-25T02:30:00+02:00', '2026-10-26T02:30:00+01:00'])
    assert.deepEqual(hoursBetween(got), [24, 24, 25])
  })
})

describe('zones east of UTC clamp by the LOCAL month end', () => {
  test('Auckland Jan 31 09:00 (Jan 30 20:00 UTC): Feb 28, Mar 31, Apr 30 local, across the April DST change', () => {
    const anchor = at('2026-01-31T09:00', AUCKLAND)
    assert.equal(anchor.toISOString(), '2026-01-30T20:00:00.000Z')
    const got = boundaries(anchor, 'month', 1, 5, AUCKLAND)
    assert.deepEqual(got.map((d) => local(d, AUCKLAND)), [
      '2026-01-31T09:00:00+13:00',
      '2026-02-28T09:00:00+13:00',
      '2026-03-31T09:00:00+13:00',
      '2026-04-30T09:00:00+12:00',
      '2026-05-31T09:00:00+12:00',
    ])
    // a UTC calendar would have clamped day 30 and landed on Mar 1 local for February
    assert.deepEqual(got.map((d) => d.toISOString()), ['2026-01-30T20:00:00.000Z', '2026-02-27T20:00:00.000Z', '2026-03-30T20:00:00.000Z', '2026-04-29T21:00:00.000Z', '2026-05-30T21:00:00.000Z'])
  })

  test('Auckland Mar 1 08:00 (Feb 28 19:00 UTC): the 1st of every month, not the 28th', () => {
    const anchor = at('2026-03-01T08:00', AUCKLAND)
    assert.equal(anchor.toISOString(), '2026-02-28T19:00:00.000Z')
    assert.deepEqual(boundaries(anchor, 'month', 1, 4, AUCKLAND).map((d) => local(d, AUCKLAND)), [
      '2026-03-01T08:00:00+13:00',
      '2026-04-01T08:00:00+13:00',
      '2026-05-01T08:00:00+12:00',
      '2026-06-01T08:00:00+12:00',
    ])
  })

  test('Auckland year plan from Feb 29 2028 09:00 (Feb 28 UTC): Feb 28 2029, Feb 29 2032 local', () => {
    const anchor = at('2028-02-29T09:00', AUCKLAND)
    assert.equal(anchor.toISOString(), '2028-02-28T20:00:00.000Z')
    assert.deepEqual([1, 4].map((i) => local(periodBoundary(anchor, 'year', 1, i, AUCKLAND), AUCKLAND)), ['2029-02-28T09:00:00+13:00', '2032-02-29T09:00:00+13:00'])
  })
})

describe('addDays (trials) counts local days', () => {
  const table: Array<{ zone: string; from: string; days: number; expected: string }> = [
    { zone: NY, from: '2026-03-07T09:00', days: 1, expected: '2026-03-08T09:00:00-04:00' },
    { zone: NY, from: '2026-10-25T12:00', days: 14, expected: '2026-11-08T12:00:00-05:00' },
    { zone: BERLIN, from: '2026-03-28T23:30', days: 1, expected: '2026-03-29T23:30:00+02:00' },
    { zone: AUCKLAND, from: '2026-01-31T09:00', days: 30, expected: '2026-03-02T09:00:00+13:00' },
    { zone: 'UTC', from: '2028-02-28T00:00', days: 1, expected: '2028-02-29T00:00:00Z' },
  ]
  for (const row of table) {
    test(`${row.from} + ${row.days} day(s) in ${row.zone}`, () => {
      assert.equal(local(addDays(at(row.from, row.zone), row.days, row.zone), row.zone), row.expected)
    })
  }
})

/**
 * Checks boundary i against pure Gregorian arithmetic: the local date, and the local wall-clock time,
 * which is kept unless it does not exist on that date. Says which case it saw.
 */
function checkBoundary(anchor: Date, interval: PlanInterval, count: number, zone: string, i: number): 'kept' | 'gap' {
  const got = DateTime.fromJSDate(periodBoundary(anchor, interval, count, i, zone), { zone })
  const a = DateTime.fromJSDate(anchor, { zone })
  const from = { year: a.year, month: a.month, day: a.day }
  const expected =
    interval === 'day' ? addCalendarDays(from, count * i)
    : interval === 'week' ? addCalendarDays(from, 7 * count * i)
    : interval === 'month' ? addCalendarMonths(from, count * i)
    : addCalendarMonths(from, 12 * count * i)
  const label = `${count} ${interval} x ${i} in ${zone} from ${a.toISO()} gave ${got.toISO()}`
  assert.deepEqual({ year: got.year, month: got.month, day: got.day }, expected, label)
  if (interval === 'month') assert.equal(got.day, Math.min(a.day, daysInMonth(got.year, got.month)), label)

  if (got.hour === a.hour && got.minute === a.minute && got.second === a.second && got.millisecond === a.millisecond) return 'kept'
  // Otherwise the anchor's wall time must not exist on that date (a spring-forward gap), and luxon places
  // the boundary at that wall time read with the offset in force before the gap (the smaller offset).
  const wallTs = Date.UTC(expected.year, expected.month - 1, expected.day, a.hour, a.minute, a.second, a.millisecond)
  const offsets = [-36, 36].map((h) => DateTime.fromMillis(wallTs + h * HOUR, { zone }).offset)
  for (const o of offsets) {
    assert.notEqual(DateTime.fromMillis(wallTs - o * 60_000, { zone }).offset, o, `${label}: the wall time exists (offset ${o}) yet was not kept`)
  }
  assert.equal(got.toMillis(), wallTs - Math.min(...offsets) * 60_000, label)
  return 'gap'
}

describe('properties (fast-check)', () => {
  // Northern and southern DST, half-hour DST (Lord Howe), DST at midnight (Santiago), no DST (Kolkata, UTC).
  const zones = ['UTC', NY, BERLIN, AUCKLAND, 'Australia/Lord_Howe', 'America/Santiago', 'Asia/Kolkata'] as const
  const maxIndex: Record<PlanInterval, number> = { day: 60, week: 60, month: 40, year: 12 }
  const plan = fc
    .record({
      instant: fc.date({ min: new Date('2000-01-01T00:00:00.000Z'), max: new Date('2040-01-01T00:00:00.000Z'), noInvalidDate: true }),
      // half the anchors are moved to the small hours (local 00:00-03:59), where DST changes happen
      smallHours: fc.option(fc.integer({ min: 0, max: 4 * 60 - 1 }), { freq: 2 }),
      interval: fc.constantFrom<PlanInterval>('day', 'week', 'month', 'year'),
      count: fc.integer({ min: 1, max: 12 }),
      zone: fc.constantFrom(...zones),
    })
    .map(({ instant, smallHours, ...rest }) => {
      const anchor =
        smallHours === null ? instant : DateTime.fromJSDate(instant, { zone: rest.zone }).set({ hour: Math.floor(smallHours / 60), minute: smallHours % 60 }).toJSDate()
      return { anchor, ...rest }
    })

  test('boundaries are strictly increasing, start at the anchor, and recomputing boundary i from the anchor (in any order) gives the same instant', () => {
    fc.assert(
      fc.property(plan, fc.infiniteStream(fc.nat()), ({ anchor, interval, count, zone }, seeds) => {
        const n = maxIndex[interval]
        // how the scheduler walks: period after period, each one's end is the next one's start
        const walked: Date[] = [periodAt(anchor, interval, count, 0, zone).start]
        for (let i = 0; i < n; i++) {
          const p = periodAt(anchor, interval, count, i, zone)
          assert.equal(p.start.getTime(), walked[i]!.getTime())
          walked.push(p.end)
        }
        assert.equal(walked[0]!.getTime(), anchor.getTime())
        assertStrictlyIncreasing(walked, `${count} ${interval} in ${zone} from ${anchor.toISOString()}`)
        // fresh computations, in a scrambled order, agree with the walk: boundary i depends only on (anchor, i)
        const order = range(n + 1)
        const it = seeds[Symbol.iterator]()
        for (let i = order.length - 1; i > 0; i--) {
          const j = (it.next().value as number) % (i + 1)
          ;[order[i], order[j]] = [order[j]!, order[i]!]
        }
        for (const i of order) assert.equal(periodBoundary(anchor, interval, count, i, zone).getTime(), walked[i]!.getTime(), `index ${i}`)
        // count x interval composes: every `count` units is the same as every unit at index count x i
        for (const i of [1, 2, Math.floor(n / 2), n]) assert.equal(periodBoundary(anchor, interval, 1, count * i, zone).getTime(), walked[i]!.getTime())
      }),
      { numRuns: 200 },
    )
  })

  test('local calendar date is anchor date + i x count units (months clamp to min(anchor day, days in month)); the wall-clock time is kept unless it does not exist that day', () => {
    fc.assert(
      fc.property(plan, ({ anchor, interval, count, zone }) => {
        for (let i = 0; i <= maxIndex[interval]; i++) checkBoundary(anchor, interval, count, zone, i)
      }),
      { numRuns: 300 },
    )
  })

  test('the oracle above also covers the gap branch: anchors whose wall time falls in a spring-forward gap', () => {
    const cases: Array<[string, string, PlanInterval, number]> = [
      [NY, '2026-03-06T02:30', 'day', 2],
      [NY, '2026-02-08T02:30', 'month', 1],
      [BERLIN, '2026-03-22T02:30', 'week', 1],
      ['Australia/Lord_Howe', '2026-10-03T02:15', 'day', 1], // Lord Howe: 02:00 -> 02:30, a 30-minute gap
      ['America/Santiago', '2026-09-05T00:30', 'day', 1], // Santiago: 00:00 -> 01:00, the gap is at midnight
      [AUCKLAND, '2026-09-20T02:45', 'week', 1],
    ]
    for (const [zone, anchor, interval, i] of cases) {
      assert.equal(checkBoundary(at(anchor, zone), interval, 1, zone, i), 'gap', `${anchor} ${zone} + ${i} ${interval}`)
    }
  })

  test('daily plans: exactly one boundary per local day, and consecutive UTC gaps are 24 h +- the DST shift', () => {
    fc.assert(
      fc.property(plan, ({ anchor, zone }) => {
        const got = boundaries(anchor, 'day', 1, 400, zone)
        const dates = got.map((d) => localDate(d, zone))
        assert.equal(new Set(dates).size, dates.length)
        const a = DateTime.fromJSDate(anchor, { zone })
        assert.deepEqual(dates, range(400).map((i) => { const e = addCalendarDays({ year: a.year, month: a.month, day: a.day }, i); return `${e.year}-${String(e.month).padStart(2, '0')}-${String(e.day).padStart(2, '0')}` }))
        for (const h of hoursBetween(got)) assert.ok(h >= 23 && h <= 25, `${h} h between daily boundaries in ${zone}`)
      }),
      { numRuns: 50 },
    )
  })
})

test('an unknown zone is an error, never an Invalid Date', () => {
  assert.throws(() => periodBoundary(new Date('2026-01-31T10:00:00Z'), 'month', 1, 1, 'Mars/Olympus_Mons'), /Mars\/Olympus_Mons/)
  assert.throws(() => addDays(new Date('2026-01-31T10:00:00Z'), 1, 'Mars/Olympus_Mons'), /Mars\/Olympus_Mons/)
})
