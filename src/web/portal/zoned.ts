/** Dates on the store's calendar (its IANA time zone), for date pickers whose limits are the store's. */

const partFormats = new Map<string, Intl.DateTimeFormat>()

function parts(instant: Date, timeZone: string): { year: number; month: number; day: number; hour: number; minute: number; second: number } {
  let format = partFormats.get(timeZone)
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
    partFormats.set(timeZone, format)
  }
  const values: Record<string, number> = {}
  for (const part of format.formatToParts(instant)) if (part.type !== 'literal') values[part.type] = Number(part.value)
  return { year: values.year!, month: values.month!, day: values.day!, hour: values.hour! % 24, minute: values.minute!, second: values.second! }
}

const pad = (n: number) => String(n).padStart(2, '0')

/** "2027-01-24": the calendar day `instant` falls on in `timeZone`. */
export function zonedDay(instant: Date, timeZone: string): string {
  const p = parts(instant, timeZone)
  return `${p.year}-${pad(p.month)}-${pad(p.day)}`
}

/** A calendar day moved by whole days or years ("2026-02-29" + 1 year is "2027-02-28"). */
export function shiftDay(day: string, { days = 0, years = 0 }: { days?: number; years?: number }): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number]
  const last = new Date(Date.UTC(y + years, m, 0)).getUTCDate()
  const date = new Date(Date.UTC(y + years, m - 1, Math.min(d, last)))
  date.setUTCDate(date.getUTCDate() + days)
  return date.toISOString().slice(0, 10)
}

/** The instant a wall-clock time on a calendar day is in `timeZone` (the first, when a clock change repeats it). */
export function zonedInstant(day: string, time: { hour: number; minute: number; second?: number }, timeZone: string): Date {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number]
  const wanted = Date.UTC(y, m - 1, d, time.hour, time.minute, time.second ?? 0)
  let guess = wanted
  for (let i = 0; i < 2; i++) {
    const p = parts(new Date(guess), timeZone)
    const shown = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second)
    guess += wanted - shown
  }
  return new Date(guess)
}

/** The wall-clock time of `instant` in `timeZone`. */
export function zonedTime(instant: Date, timeZone: string): { hour: number; minute: number; second: number } {
  const p = parts(instant, timeZone)
  return { hour: p.hour, minute: p.minute, second: p.second }
}
