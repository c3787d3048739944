// ISO 4217 codes this runtime knows; the ICU list that ships with Node is kept current.
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'))

export function isCurrency(code: string): boolean {
  return CURRENCIES.has(code)
}

/** Largest amount in minor units one price may hold: keeps price x quantity well inside PostgreSQL bigint and JS safe integers. */
export const MAX_AMOUNT = 1_000_000_000

/** Most one renewal (price x quantity, before discounts) may charge, in minor units: beyond any real order, so more is a mistake or abuse (MAX_AMOUNT x 10,000 from the portal would be 10^13). */
export const MAX_RENEWAL_AMOUNT = 100_000_000_000

/**
 * Most one charge may be: a renewal's goods, tax at most as much again (a tax rate is at most 100%),
 * and shipping at most one price. Far inside bigint and JS safe integers.
 */
export const MAX_CHARGE_AMOUNT = 2 * MAX_RENEWAL_AMOUNT + MAX_AMOUNT

export interface Money {
  amount: number
  currency: string
}

/**
 * Decimal places of a currency's major unit (USD 2, JPY 0, KWD 3), as ICU knows them. Throws a
 * RangeError for a code that is not a currency.
 */
export function currencyExponent(currency: string): number {
  // Building a NumberFormat costs ~0.1 ms; a renewal asks several times (a profile of bench:spike
  // showed 0.8 ms a renewal). Only well-formed codes are kept (a bad one throws): 26^3 at most.
  let exponent = exponents.get(currency)
  if (exponent === undefined) {
    exponent = new Intl.NumberFormat(undefined, { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2
    exponents.set(currency, exponent)
  }
  return exponent
}
const exponents = new Map<string, number>()

/** Integer minor units as the decimal text of major units, built from the digits (no float): 2500 USD -> "25.00". */
export function minorToDecimal(amount: number, exponent: number): string {
  if (!Number.isSafeInteger(amount) || amount < 0) throw new RangeError(`amount must be a non-negative integer of minor units, got ${amount}`)
  if (exponent === 0) return String(amount)
  const digits = String(amount).padStart(exponent + 1, '0')
  return `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`
}

/**
 * A decimal amount of major units (a JSON number or numeric string from the platform) in integer
 * minor units, read from its digits; undefined when it is not a plain non-negative decimal or has
 * more places than the currency (so it cannot be an exact amount).
 */
export function decimalToMinor(value: unknown, exponent: number): number | undefined {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? value.toFixed(Math.max(exponent, 0) + 4) : '') : typeof value === 'string' ? value.trim() : ''
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text)
  if (!match) return undefined
  const [, whole, fraction = ''] = match
  if (/[^0]/.test(fraction.slice(exponent))) return undefined
  const minor = Number(`${whole}${fraction.slice(0, exponent).padEnd(exponent, '0')}`)
  return Number.isSafeInteger(minor) ? minor : undefined
}

/** A discount's rate: a percentage (1-100) or a fixed amount of minor units in `currency`. */
export interface DiscountRate {
  type: 'percentage' | 'fixed_amount'
  value: number
  currency: string | null
}

/**
 * The discount on `base` minor units (the subscription's own line: price x quantity; add-ons are
 * never discounted). A percentage is rounded half up to an integer number of minor units, once per
 * charge (1000 at 15% is 150, 999 at 15% is 149.85 -> 150, 10 at 25% is 2.5 -> 3); a fixed amount
 * is capped at the base, so a charge never goes below 0. A fixed amount in another currency than
 * the charge's takes nothing off (applying one is refused, so this only guards old data).
 */
export function discountOn(base: number, discount: DiscountRate | null, currency: string): number {
  if (!discount || base <= 0) return 0
  if (discount.type === 'percentage') {
    const percent = Math.min(100, Math.max(0, discount.value))
    // Integers all the way: base <= 10^11 and percent <= 100 keep base x percent far below 2^53.
    return Math.min(base, Math.floor((base * percent + 50) / 100))
  }
  if (discount.currency !== null && discount.currency.trim() !== currency.trim()) return 0
  return Math.min(base, Math.max(0, discount.value))
}
