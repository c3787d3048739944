/**
 * Money as the API sends it (integer minor units of an ISO 4217 currency) put in words, for the
 * widget, the portal and the console alike. Formatting only: amounts are the service's to compute.
 */

const formatters = new Map<string, Intl.NumberFormat | null>()

function formatter(currency: string, locale: string | undefined): Intl.NumberFormat | null {
  const key = `${locale}|${currency}`
  if (!formatters.has(key)) {
    try {
      formatters.set(key, new Intl.NumberFormat(locale, { style: 'currency', currency }))
    } catch {
      // A code Intl does not know: shown plainly rather than failing the page.
      formatters.set(key, null)
    }
  }
  return formatters.get(key)!
}

/** How many minor units make one of the currency: 2 for USD, 0 for JPY (2 for a code Intl does not know). */
export function minorDigits(currency: string): number {
  return formatter(currency, 'en')?.resolvedOptions().maximumFractionDigits ?? 2
}

/** Minor units to a price in the reader's locale: 1350 USD -> "$13.50", 1350 JPY -> "¥1,350". */
export function formatMoney(minor: number, currency: string, locale?: string): string {
  const digits = minorDigits(currency)
  return formatter(currency, locale)?.format(minor / 10 ** digits) ?? `${(minor / 10 ** digits).toFixed(digits)} ${currency}`
}
