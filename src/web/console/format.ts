import { formatMoney, minorDigits } from '../shared/money.ts'
import type { Interval, Store } from './types.ts'

/**
 * Numbers in the store's currency and dates in the store's time zone (not the browser's): the
 * merchant sees what their subscribers and their books see. Set once the store is read at sign-in.
 */
let timeZone = 'UTC'
let storeCurrency = 'USD'
let dateFormat = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeZone })
let dateTimeFormat = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short', timeZone })

export function useStore(store: Pick<Store, 'timezone' | 'currency'>): void {
  try {
    dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: store.timezone })
    // dateStyle and timeStyle cannot be combined with timeZoneName: the parts are spelled out instead.
    dateTimeFormat = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZone: store.timezone, timeZoneName: 'short' })
    timeZone = store.timezone
  } catch {
    // An unknown zone name: keep UTC rather than fail the page.
  }
  storeCurrency = store.currency
}

export function currentTimeZone(): string {
  return timeZone
}

export function currency(): string {
  return storeCurrency
}

export { minorDigits }

/** Minor units to money: 1500 USD is $15.00, 1500 JPY is ¥1,500. Without a currency: the store's. */
export function money(minor: number, code: string = storeCurrency): string {
  return formatMoney(minor, code)
}

/** A typed amount ("12.50") to minor units of the currency; NaN when it is not a number. */
export function toMinor(text: string, code: string = storeCurrency): number {
  const value = Number(text.trim().replace(',', '.'))
  if (!Number.isFinite(value) || text.trim() === '') return Number.NaN
  return Math.round(value * 10 ** minorDigits(code))
}

export function number(value: number, options: Intl.NumberFormatOptions = {}): string {
  return new Intl.NumberFormat(undefined, options).format(value)
}

export function percent(ratio: number | null | undefined): string {
  if (ratio === null || ratio === undefined || !Number.isFinite(ratio)) return '—'
  return new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 }).format(ratio)
}

export function date(iso: string | null | undefined): string {
  return iso ? dateFormat.format(new Date(iso)) : '—'
}

export function dateTime(iso: string | null | undefined): string {
  return iso ? dateTimeFormat.format(new Date(iso)) : '—'
}

/**
 * When a real-time wait ends, said from now: "in 4 minutes", "in 2 hours", "now". For what follows the
 * wall clock whatever a test store's clock says (a webhook's next attempt), where a date on the
 * store's clock would mislead.
 */
let storeClockMs: number | null = null

/** A test store's moved clock, as the console last read it (null: the store follows real time). */
export function setStoreClock(iso: string | null): void {
  storeClockMs = iso === null ? null : Date.parse(iso)
}

/** Now on the store's clock: where a moved test clock stands, else real time. */
export function storeNowMs(): number {
  return storeClockMs ?? Date.now()
}

export function fromNow(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return '—'
  const ms = Date.parse(iso) - now
  if (ms <= 0) return 'now'
  const units: [number, string][] = [[86_400_000, 'day'], [3_600_000, 'hour'], [60_000, 'minute'], [1_000, 'second']]
  const [size, name] = units.find(([unit]) => ms >= 2 * unit || ms === unit) ?? units[3]!
  const count = Math.ceil(ms / size)
  return `in ${count} ${name}${count === 1 ? '' : 's'}`
}

const UNIT: Record<Interval, [string, string]> = { day: ['day', 'days'], week: ['week', 'weeks'], month: ['month', 'months'], year: ['year', 'years'] }

export function interval(unit: Interval, count: number): string {
  const [one, many] = UNIT[unit]
  return count === 1 ? `every ${one}` : `every ${count} ${many}`
}

export const STATUS_LABEL: Record<string, string> = {
  pending: 'Pending',
  active: 'Active',
  paused: 'Paused',
  past_due: 'Past due',
  cancelled: 'Cancelled',
  expired: 'Expired',
}

export const CHARGE_STATUS_LABEL: Record<string, string> = {
  pending: 'Pending',
  succeeded: 'Succeeded',
  failed: 'Failed',
  requires_review: 'Requires review',
}

/**
 * A charge's status as the merchant reads it: a succeeded charge refunded in full is "Refunded", one
 * refunded in part "Partly refunded ($5.00)" (the service's `refund_status` and `amount_refunded`).
 */
export function chargeStatusLabel(charge: { status: string; refund_status?: 'none' | 'partial' | 'full'; amount_refunded: number; currency: string }): string {
  if (charge.status === 'succeeded' && charge.refund_status === 'full') return 'Refunded'
  if (charge.status === 'succeeded' && charge.refund_status === 'partial') return `Partly refunded (${money(charge.amount_refunded, charge.currency)})`
  return CHARGE_STATUS_LABEL[charge.status] ?? charge.status
}

/** "subscription.paused" as "Subscription paused". */
export function eventLabel(type: string): string {
  const text = type.replace('.', ' ').replaceAll('_', ' ')
  return text.charAt(0).toUpperCase() + text.slice(1)
}

/** The offset of `zone` from UTC at `at`, in milliseconds (from Intl's own reading of the zone). */
function zoneOffsetMs(at: number, zone: string): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
      .formatToParts(new Date(at))
      .map((part) => [part.type, part.value]),
  )
  const local = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second))
  return local - Math.floor(at / 1000) * 1000
}

/** A wall-clock time typed in a form ("2026-05-01" or "2026-05-01T09:30") in the store's zone, as an ISO instant. */
export function storeTimeToIso(text: string): string | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}))?$/.exec(text.trim())
  if (!match) return null
  const [, y, mo, d, hh = '00', mm = '00'] = match
  const wall = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(hh), Number(mm))
  let guess = wall - zoneOffsetMs(wall, timeZone)
  guess = wall - zoneOffsetMs(guess, timeZone)
  return new Date(guess).toISOString()
}

/** An instant as the store's wall clock for a datetime-local input ("2026-05-01T09:30"). */
export function isoToStoreInput(iso: string): string {
  const at = Date.parse(iso)
  const local = new Date(at + zoneOffsetMs(at, timeZone))
  return local.toISOString().slice(0, 16)
}
