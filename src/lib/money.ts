// ISO 4217 codes this runtime knows; the ICU list that ships with Node is kept current.
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'))

export function isCurrency(code: string): boolean {
  return CURRENCIES.has(code)
}

/** Largest amount in minor units one price may hold: keeps price x quantity well inside PostgreSQL bigint and JS safe integers. */
export const MAX_AMOUNT = 1_000_000_000

/** Most one renewal (price x quantity, before discounts) may charge, in minor units: beyond any real order, so more is a mistake or abuse (MAX_AMOUNT x 10,000 from the portal would be 10^13). */
export const MAX_RENEWAL_AMOUNT = 100_000_000_000

export interface Money {
  amount: number
  currency: string
}
