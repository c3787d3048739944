import { DateTime } from 'luxon'
import type { PlanInterval } from '../../db/database.ts'
import { periodBoundary } from '../../lib/calendar.ts'
import type { ImportRowError } from './imports.tables.ts'
import { addressOf, MAX_EXTERNAL_ID, MAX_QUANTITY, RowReader, type Cells, type ImportedSchedule, type ParsedRow } from './import-row.ts'

/**
 * The `recharge` format (CONTRACT section 16): the columns of Recharge's migration template and
 * purchase-items export, read one row at a time into an import candidate. Recharge's own guidance
 * decides the meaning: a charge interval longer than the shipping one is prepaid (charged every
 * `charge_interval_frequency`, shipped every `shipping_interval_frequency`), `next_charge_date` is the
 * next charge on the store's calendar, and `last_success_charge` is when the current prepaid block
 * was charged. What this service cannot honour is refused per row, never silently dropped
 * (docs/contract.md, Import).
 */

export const RECHARGE_COLUMNS = [
  'subscription_id',
  'email',
  'first_name',
  'last_name',
  'product_title',
  'variant_title',
  'external_product_id',
  'external_variant_id',
  'platform_customer_id',
  'recurring_price',
  'quantity',
  'charge_interval_frequency',
  'charge_interval_unit_type',
  'shipping_interval_frequency',
  'shipping_interval_unit_type',
  'order_interval_frequency',
  'order_interval_unit_type',
  'next_charge_date',
  'processor_payment_method_token',
  'charge_on_day_of_month',
  'last_success_charge',
  'number_charges_until_expiration',
  'status',
  'shipping_address1',
  'shipping_address2',
  'shipping_city',
  'shipping_province',
  'shipping_zip',
  'shipping_country',
  'shipping_phone',
] as const

const REQUIRED = ['subscription_id', 'email', 'recurring_price', 'quantity', 'charge_interval_frequency', 'charge_interval_unit_type', 'next_charge_date'] as const

/** The header's problems: a required column missing, or no column naming the product. */
export function rechargeHeaderErrors(header: readonly string[]): ImportRowError[] {
  const have = new Set(header)
  const errors: ImportRowError[] = REQUIRED.filter((column) => !have.has(column)).map((column) => ({ row: 1, column, code: 'missing_column', detail: `the header has no ${column} column` }))
  if (!have.has('product_title') && !have.has('external_product_id')) errors.push({ row: 1, column: 'external_product_id', code: 'missing_column', detail: 'the header has neither external_product_id nor product_title: rows could not name their product' })
  return errors
}

const UNITS: Record<string, PlanInterval> = { day: 'day', days: 'day', week: 'week', weeks: 'week', month: 'month', months: 'month' }
const MAX_PREPAID_CYCLES = 120
const MAX_INTERVAL_COUNT = 365

function unitOf(reader: RowReader, column: string, required: boolean): PlanInterval | null | undefined {
  const value = reader.text(column)?.toLowerCase() ?? null
  if (value === null) return required ? reader.fail(column, 'required', 'is empty') : null
  return UNITS[value] ?? reader.fail(column, 'invalid_unit', 'must be day, week or month (singular or plural)')
}

/** A `YYYY-MM-DD` date as the start of that day on the store's calendar. */
function dateOf(reader: RowReader, column: string, timeZone: string, required: boolean): DateTime | null | undefined {
  const value = reader.text(column)
  if (value === null) return required ? reader.fail(column, 'required', 'is empty') : null
  // Recharge exports may carry a time after the date ("2027-01-05T00:00:00"): the date is what counts.
  const match = /^(\d{4}-\d{2}-\d{2})(?:[T ].*)?$/.exec(value)
  const day = match ? DateTime.fromISO(match[1]!, { zone: timeZone }) : undefined
  if (!day || !day.isValid) return reader.fail(column, 'invalid_date', 'must be a date as YYYY-MM-DD')
  return day.startOf('day')
}

export function parseRechargeRow(cells: Cells, row: number, { timeZone, now }: { timeZone: string; now: Date }): ParsedRow {
  const reader = new RowReader(row, cells)
  const externalId = reader.required('subscription_id', MAX_EXTERNAL_ID)
  const email = reader.email('email')
  const name = [reader.text('first_name'), reader.text('last_name')].filter((part) => part !== null).join(' ') || null
  const platformProductId = reader.platformId('external_product_id')
  const title = reader.text('product_title')
  if (platformProductId === null && title === null) reader.fail('external_product_id', 'required', 'neither external_product_id nor product_title names the product')
  const platformVariantId = reader.platformId('external_variant_id')
  const variantTitle = reader.text('variant_title')
  const platformCustomerId = reader.platformId('platform_customer_id')
  const price = reader.required('recurring_price')
  if (price !== undefined && !/^\d+(\.\d+)?$/.test(price)) reader.fail('recurring_price', 'invalid_price', 'must be a decimal amount like 19.99, without a currency sign')
  const quantity = reader.integer('quantity', 1, MAX_QUANTITY)
  const chargeEvery = reader.integer('charge_interval_frequency', 1, MAX_INTERVAL_COUNT)
  const chargeUnit = unitOf(reader, 'charge_interval_unit_type', true)
  // The purchase-items export says "order", the migration template "shipping": the same thing.
  const shipColumn = cells.shipping_interval_frequency?.trim() ? 'shipping_interval_frequency' : 'order_interval_frequency'
  const shipUnitColumn = cells.shipping_interval_unit_type?.trim() ? 'shipping_interval_unit_type' : 'order_interval_unit_type'
  const shipEvery = reader.integer(shipColumn, 1, MAX_INTERVAL_COUNT, null)
  const shipUnit = unitOf(reader, shipUnitColumn, false)
  const nextCharge = dateOf(reader, 'next_charge_date', timeZone, true)
  const lastCharge = dateOf(reader, 'last_success_charge', timeZone, false)
  const dayOfMonth = reader.integer('charge_on_day_of_month', 1, 31, null)
  const token = reader.text('processor_payment_method_token')
  const status = reader.text('status')?.toLowerCase() ?? 'active'
  if (status !== 'active') reader.fail('status', 'not_active', `is ${status}: only active subscriptions are imported (a cancelled one would start billing again)`)
  if (reader.text('number_charges_until_expiration') !== null) {
    reader.fail('number_charges_until_expiration', 'unsupported', 'subscriptions that expire after a number of charges are not imported: they would renew here; end them in the old system or import them without this column once they should renew')
  }
  const shipping = addressOf(
    reader,
    { line1: 'shipping_address1', line2: 'shipping_address2', city: 'shipping_city', state: 'shipping_province', postal_code: 'shipping_zip', country: 'shipping_country', phone: 'shipping_phone' },
    name ?? email ?? '',
  )

  // Prepaid: shipped more often than charged, in the same unit, a whole number of shipments per charge.
  let block = 1
  if (chargeEvery && chargeUnit && shipEvery && shipUnit !== null && shipUnit !== undefined && shipEvery !== chargeEvery) {
    if (shipUnit !== chargeUnit || chargeEvery % shipEvery !== 0 || chargeEvery < shipEvery) {
      reader.fail(shipColumn, 'unsupported_cadence', `ships every ${shipEvery} ${shipUnit}(s) but charges every ${chargeEvery} ${chargeUnit}(s): a prepaid subscription here charges a whole number of shipments, in the same unit`)
    } else if (chargeEvery / shipEvery > MAX_PREPAID_CYCLES) {
      reader.fail(shipColumn, 'unsupported_cadence', `charges ${chargeEvery / shipEvery} shipments at once: at most ${MAX_PREPAID_CYCLES}`)
    } else {
      block = chargeEvery / shipEvery
    }
  }
  if (shipUnit && chargeUnit && shipUnit !== chargeUnit && shipEvery === chargeEvery) reader.fail(shipUnitColumn, 'unsupported_cadence', 'the shipping unit differs from the charge unit')
  if (nextCharge && dayOfMonth !== null && dayOfMonth !== undefined && chargeUnit === 'month' && nextCharge.day !== dayOfMonth && !(dayOfMonth > nextCharge.daysInMonth! && nextCharge.day === nextCharge.daysInMonth)) {
    reader.fail('charge_on_day_of_month', 'inconsistent_dates', `is ${dayOfMonth} but next_charge_date is on the ${nextCharge.day}: renewals here keep the day of the next charge, so make them agree`)
  }
  const today = DateTime.fromJSDate(now, { zone: timeZone }).startOf('day')
  // Today is refused too: its start has passed, so the renewal would be due at once, the day the old system may charge it.
  if (nextCharge && nextCharge <= today) {
    reader.fail('next_charge_date', 'in_past', 'is not after today: a renewal due today or earlier is the old system\'s to charge; move it to a later date (Recharge advises at least three days after the cutover)')
  }

  if (reader.errors.length > 0 || !externalId || !email || !price || !quantity || !chargeEvery || !chargeUnit || !nextCharge) return { errors: reader.errors }

  const interval = chargeUnit
  const intervalCount = block > 1 ? chargeEvery / block : chargeEvery
  const schedule = scheduleOf(reader, { nextCharge: nextCharge.toJSDate(), lastCharge: lastCharge?.toJSDate() ?? null, interval, intervalCount, block, timeZone, now, dayOfMonth: interval === 'month' ? (dayOfMonth ?? null) : null })
  if (!schedule) return { errors: reader.errors }
  return {
    candidate: {
      row,
      externalId,
      email,
      name,
      platformCustomerId: platformCustomerId ?? null,
      product: { planId: null, platformProductId: platformProductId ?? null, title },
      variant: { platformVariantId: platformVariantId ?? null, title: variantTitle },
      quantity,
      price: { decimal: price },
      interval,
      intervalCount,
      prepaidCycles: block > 1 ? block : null,
      schedule,
      status: 'active',
      pausedAt: null,
      resumeAt: null,
      skipNext: false,
      cancelAtPeriodEnd: false,
      instrumentToken: token,
      shippingAddress: shipping ?? null,
      // Recharge's template carries no billing address: renewal orders bill to where they ship.
      billingAddress: shipping ?? null,
    },
  }
}

/**
 * The schedule that charges next at `nextCharge`. A prepaid block started at `lastCharge` (or one
 * block before the next charge): the shipments already due by now are shipped, the rest are still
 * to come (`prepaid_cycles_remaining`), each an order on its date, with no charge.
 */
function scheduleOf(
  reader: RowReader,
  { nextCharge, lastCharge, interval, intervalCount, block, timeZone, now, dayOfMonth }: { nextCharge: Date; lastCharge: Date | null; interval: PlanInterval; intervalCount: number; block: number; timeZone: string; now: Date; dayOfMonth: number | null },
): ImportedSchedule | undefined {
  const next = DateTime.fromJSDate(nextCharge, { zone: timeZone })
  if (block === 1 && dayOfMonth !== null && dayOfMonth > next.day) {
    // A day the next charge's month lacks (the 31st in February): the anchor is an earlier month that has
    // it, so the renewals after return to it (Mar 31), as the calendar clamps and comes back.
    for (let back = 1; back <= 12; back++) {
      const month = next.minus({ months: back * intervalCount })
      if (month.daysInMonth! < dayOfMonth) continue
      const anchor = month.set({ day: dayOfMonth }).toJSDate()
      if (periodBoundary(anchor, interval, intervalCount, back, timeZone).getTime() !== nextCharge.getTime()) break
      return { billing_anchor_at: anchor, period_index: back - 1, current_period_start: periodBoundary(anchor, interval, intervalCount, back - 1, timeZone), current_period_end: nextCharge, next_charge_at: nextCharge, prepaid_cycles_remaining: null }
    }
  }
  if (block === 1) {
    return {
      billing_anchor_at: nextCharge,
      period_index: -1,
      current_period_start: periodBoundary(nextCharge, interval, intervalCount, -1, timeZone),
      current_period_end: nextCharge,
      next_charge_at: nextCharge,
      prepaid_cycles_remaining: null,
    }
  }
  const anchor = lastCharge ?? periodBoundary(nextCharge, interval, intervalCount, -block, timeZone)
  if (anchor > now) return reader.fail('last_success_charge', 'in_future', 'is after today: the current prepaid block must have been charged already')
  if (periodBoundary(anchor, interval, intervalCount, block, timeZone).getTime() !== nextCharge.getTime()) {
    return reader.fail('last_success_charge', 'inconsistent_dates', `next_charge_date should be ${block} shipments after last_success_charge: correct one of them`)
  }
  let index = 0
  while (index < block - 1 && periodBoundary(anchor, interval, intervalCount, index + 1, timeZone) <= now) index++
  return {
    billing_anchor_at: anchor,
    period_index: index,
    current_period_start: periodBoundary(anchor, interval, intervalCount, index, timeZone),
    current_period_end: periodBoundary(anchor, interval, intervalCount, index + 1, timeZone),
    next_charge_at: nextCharge,
    prepaid_cycles_remaining: block - 1 - index,
  }
}
