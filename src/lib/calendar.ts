import { DateTime } from 'luxon'

/** A calendar unit periods are counted in. */
export type CalendarUnit = 'day' | 'week' | 'month' | 'year'

const UNIT = { day: 'days', week: 'weeks', month: 'months', year: 'years' } as const

/**
 * The start of billing period `index` counted from `anchor`, on the store's wall clock. Always
 * computed from the anchor, never from the previous period, so month ends clamp and come back:
 * Jan 31 -> Feb 28 (29) -> Mar 31. Days and weeks keep the local time of day across DST changes.
 */
export function periodBoundary(anchor: Date, interval: CalendarUnit, intervalCount: number, index: number, timeZone: string): Date {
  const start = DateTime.fromJSDate(anchor, { zone: timeZone })
  return valid(start.plus({ [UNIT[interval]]: intervalCount * index }), timeZone)
}

// luxon answers an Invalid Date for a zone it cannot resolve; a charge must never be scheduled at NaN.
function valid(time: DateTime, timeZone: string): Date {
  if (!time.isValid) throw new Error(`cannot compute a time in zone ${timeZone}: ${time.invalidExplanation ?? time.invalidReason}`)
  return time.toUTC().toJSDate()
}

export interface Period {
  start: Date
  end: Date
}

export function periodAt(anchor: Date, interval: CalendarUnit, intervalCount: number, index: number, timeZone: string): Period {
  return {
    start: periodBoundary(anchor, interval, intervalCount, index, timeZone),
    end: periodBoundary(anchor, interval, intervalCount, index + 1, timeZone),
  }
}

export function addDays(from: Date, days: number, timeZone: string): Date {
  return valid(DateTime.fromJSDate(from, { zone: timeZone }).plus({ days }), timeZone)
}
