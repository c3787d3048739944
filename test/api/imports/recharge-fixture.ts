import { DateTime } from 'luxon'
import { stringify } from 'csv-stringify/sync'

/**
 * A Recharge-format file of 200 rows, written from Recharge's help centre ("Migration template
 * explained", "How do I set up the Next Charge Date", "How do I handle prepaid subscriptions"): the
 * template's column names, next charge dates after the cutover, prepaid rows whose charge interval is
 * longer than their shipping interval with `last_success_charge` the start of the current block.
 * Dates are relative to `today` (the store's day, UTC here) so the file is always importable.
 *
 * Row kinds by index (the file row is index + 2: the header is row 1):
 *   0-139   monthly, product by BigCommerce id
 *   140-159 every 2 weeks, product by exact title
 *   160-169 prepaid: charged every 6 months, shipped monthly, 3 of 6 shipped
 *   170-179 monthly on a day of the month (charge_on_day_of_month)
 *   180-189 monthly espresso, a variant by title ("Whole / 1 kg")
 *   190     an email two BigCommerce customers share            -> refused (ambiguous_customer)
 *   191     a customer with no stored card                       -> imported, payment_method_required
 *   192     an unknown product                                   -> refused (product_not_found)
 *   193     a bad date (February 30th)                           -> refused (invalid_date)
 *   194-199 monthly tea, product by id
 */

export const COFFEE = 101
export const TEA = 102
/** Sold in variants (grind and size): its rows must name one. */
export const ESPRESSO = 103
export const WHOLE_1KG = 1011
export const TWINS = 'twins@example.com'

export const HEADER = [
  'subscription_id', 'email', 'first_name', 'last_name', 'product_title', 'variant_title', 'external_product_id', 'recurring_price', 'quantity',
  'charge_interval_frequency', 'charge_interval_unit_type', 'shipping_interval_frequency', 'shipping_interval_unit_type', 'next_charge_date',
  'processor_payment_method_token', 'charge_on_day_of_month', 'last_success_charge', 'shipping_address1', 'shipping_address2', 'shipping_city',
  'shipping_province', 'shipping_zip', 'shipping_country', 'shipping_phone', 'recharge_internal_note',
] as const

export interface FixtureRow {
  index: number
  email: string
  kind: 'monthly' | 'biweekly' | 'prepaid' | 'day_of_month' | 'variant' | 'twins' | 'no_card' | 'unknown_product' | 'bad_date' | 'tea'
  nextChargeDate: string
  cells: Record<(typeof HEADER)[number], string>
}

export const emailOf = (index: number) => `subscriber${index}@example.com`

export function kindOf(index: number): FixtureRow['kind'] {
  if (index < 140) return 'monthly'
  if (index < 160) return 'biweekly'
  if (index < 170) return 'prepaid'
  if (index < 180) return 'day_of_month'
  if (index < 190) return 'variant'
  if (index === 190) return 'twins'
  if (index === 191) return 'no_card'
  if (index === 192) return 'unknown_product'
  if (index === 193) return 'bad_date'
  return 'tea'
}

/** The 200 rows; `tokenOf(index)` is the stored card token of row index's customer (empty: none). */
export function rechargeFixture(today: DateTime, tokenOf: (index: number) => string): { csv: string; rows: FixtureRow[] } {
  const rows: FixtureRow[] = []
  for (let index = 0; index < 200; index++) {
    const kind = kindOf(index)
    const email = kind === 'twins' ? TWINS : emailOf(index)
    const next = today.plus({ days: 2 + (index % 7) })
    // 3 of 6 monthly shipments made: the block was charged a little over 2 months ago (a day every month has).
    const blockStart = today.minus({ months: 2, days: 5 }).set({ day: Math.min(today.minus({ months: 2, days: 5 }).day, 28) })
    const nextChargeDate =
      kind === 'prepaid' ? blockStart.plus({ months: 6 }).toISODate()! : kind === 'bad_date' ? `${today.year + 1}-02-30` : kind === 'day_of_month' ? today.plus({ days: 10 }).toISODate()! : next.toISODate()!
    const monthly = { charge_interval_frequency: '1', charge_interval_unit_type: 'month', shipping_interval_frequency: '1', shipping_interval_unit_type: 'month' }
    const cadence =
      kind === 'biweekly'
        ? { charge_interval_frequency: '2', charge_interval_unit_type: 'weeks', shipping_interval_frequency: '2', shipping_interval_unit_type: 'weeks' }
        : kind === 'prepaid'
          ? { charge_interval_frequency: '6', charge_interval_unit_type: 'months', shipping_interval_frequency: '1', shipping_interval_unit_type: 'months' }
          : monthly
    const cells: FixtureRow['cells'] = {
      subscription_id: String(90_000_000 + index),
      email,
      first_name: `First${index}`,
      last_name: `Last${index}`,
      product_title: kind === 'tea' ? 'Tea leaves' : kind === 'unknown_product' ? 'Mystery box' : kind === 'variant' ? 'Espresso blend' : 'Coffee beans',
      variant_title: kind === 'variant' ? 'Whole / 1 kg' : '',
      // Rows by title name no id; the unknown product names one the catalogue does not have.
      external_product_id: kind === 'biweekly' ? '' : kind === 'tea' ? String(TEA) : kind === 'unknown_product' ? '999' : kind === 'variant' ? String(ESPRESSO) : String(COFFEE),
      recurring_price: kind === 'tea' ? '8.00' : '12.50',
      quantity: String(1 + (index % 3)),
      ...cadence,
      next_charge_date: nextChargeDate,
      processor_payment_method_token: tokenOf(index),
      charge_on_day_of_month: kind === 'day_of_month' ? String(today.plus({ days: 10 }).day) : '',
      last_success_charge: kind === 'prepaid' ? blockStart.toISODate()! : '',
      shipping_address1: `${index} Analytical Street`,
      shipping_address2: '',
      shipping_city: 'London',
      shipping_province: '',
      shipping_zip: 'N1 9GU',
      shipping_country: 'GB',
      shipping_phone: '',
      recharge_internal_note: 'migrated',
    }
    rows.push({ index, email, kind, nextChargeDate, cells })
  }
  return { csv: stringify([HEADER, ...rows.map((row) => HEADER.map((column) => row.cells[column]))]), rows }
}
