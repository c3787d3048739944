import type { PlanInterval } from '../../db/database.ts'
import { periodBoundary } from '../../lib/calendar.ts'
import { unguardCsvCell } from '../../lib/csv.ts'
import { isCurrency, MAX_AMOUNT } from '../../lib/money.ts'
import type { ImportRowError } from './imports.tables.ts'
import { addressOf, MAX_EXTERNAL_ID, MAX_QUANTITY, RowReader, type Cells, type ImportedSchedule, type ParsedRow } from './import-row.ts'

/**
 * The `native` format: the columns of this service's own subscriptions export
 * (`GET /api/v1/admin/exports/subscriptions`, subscriptions/subscription-columns.ts), so an export
 * imports again as the same subscriptions. Its dates are kept as they are (the billing anchor, the
 * period and the next charge), so a subscription continues exactly where the export left it.
 * `external_id` names the row (its `id` when empty: an export from a store it was created in).
 */

const REQUIRED = ['email', 'status', 'quantity', 'amount', 'currency', 'interval', 'interval_count', 'next_charge_at'] as const
const INTERVALS: readonly PlanInterval[] = ['day', 'week', 'month', 'year']

export function nativeHeaderErrors(header: readonly string[]): ImportRowError[] {
  const have = new Set(header)
  const errors: ImportRowError[] = REQUIRED.filter((column) => !have.has(column)).map((column) => ({ row: 1, column, code: 'missing_column', detail: `the header has no ${column} column` }))
  if (!have.has('id') && !have.has('external_id')) errors.push({ row: 1, column: 'external_id', code: 'missing_column', detail: 'the header has neither external_id nor id: rows could not be told apart on a second run' })
  if (!have.has('plan_id') && !have.has('platform_product_id') && !have.has('product_name')) errors.push({ row: 1, column: 'plan_id', code: 'missing_column', detail: 'the header has none of plan_id, platform_product_id and product_name' })
  return errors
}

export function parseNativeRow(exported: Cells, row: number, { timeZone, now }: { timeZone: string; now: Date }): ParsedRow {
  // The export writes a formula-like text cell with one leading ' (lib/csv.ts): read back, it is dropped.
  const cells = Object.fromEntries(Object.entries(exported).map(([column, value]) => [column, value === undefined ? value : unguardCsvCell(value)]))
  const reader = new RowReader(row, cells)
  const externalId = reader.text('external_id', MAX_EXTERNAL_ID) ?? reader.text('id', MAX_EXTERNAL_ID)
  if (externalId === null) reader.fail('external_id', 'required', 'neither external_id nor id is filled')
  const email = reader.email('email')
  const name = reader.text('name')
  const status = reader.required('status')
  if (status !== undefined && status !== 'active' && status !== 'paused') reader.fail('status', 'unsupported_status', `is ${status}: only active and paused subscriptions are imported`)
  const planId = reader.text('plan_id')
  const platformProductId = reader.platformId('platform_product_id')
  const productName = reader.text('product_name')
  const platformVariantId = reader.platformId('platform_variant_id')
  const platformCustomerId = reader.platformId('platform_customer_id')
  const quantity = reader.integer('quantity', 1, MAX_QUANTITY)
  const amount = reader.integer('amount', 0, MAX_AMOUNT)
  const currency = reader.required('currency')?.toUpperCase()
  if (currency !== undefined && !isCurrency(currency)) reader.fail('currency', 'invalid_currency', 'is not an ISO 4217 currency code')
  const interval = reader.required('interval') as PlanInterval | undefined
  if (interval !== undefined && !INTERVALS.includes(interval)) reader.fail('interval', 'invalid_unit', 'must be day, week, month or year')
  const intervalCount = reader.integer('interval_count', 1, 365)
  const prepaidTotal = reader.integer('prepaid_cycles_total', 2, 120, null)
  const prepaidRemaining = reader.integer('prepaid_cycles_remaining', 0, 120, null)
  const nextChargeAt = reader.time('next_charge_at')
  if (nextChargeAt === null && status === 'active') reader.fail('next_charge_at', 'required', 'is empty: an active subscription has a next charge')
  // A renewal already due would be charged on the next pass: if the file is older than a renewal the old
  // store made, that is a second charge for the same period. Export again, or move it later.
  if (nextChargeAt && status === 'active' && nextChargeAt <= now) reader.fail('next_charge_at', 'in_past', 'is not after now: the store it came from charges renewals due until the cutover; export again after it stops, or reschedule it')
  const anchor = reader.time('billing_anchor_at')
  const periodIndex = reader.integer('period_index', -1, 100_000, -1)
  const periodStart = reader.time('current_period_start')
  const periodEnd = reader.time('current_period_end')
  const pausedAt = reader.time('paused_at')
  const resumeAt = reader.time('resume_at')
  const skipNext = reader.boolean('skip_next')
  const cancelAtPeriodEnd = reader.boolean('cancel_at_period_end')
  const token = reader.text('payment_instrument_id')
  const fallbackName = name ?? email ?? ''
  const shipping = addressOf(reader, prefixed('shipping'), fallbackName)
  const billing = addressOf(reader, prefixed('billing'), fallbackName)
  if (prepaidTotal !== null && prepaidTotal !== undefined && prepaidRemaining !== null && prepaidRemaining !== undefined && prepaidRemaining >= prepaidTotal) {
    reader.fail('prepaid_cycles_remaining', 'invalid_number', 'must be less than prepaid_cycles_total')
  }

  if (reader.errors.length > 0 || externalId === null || !email || !status || !quantity || amount === undefined || amount === null || !currency || !interval || !intervalCount) return { errors: reader.errors }
  return {
    candidate: {
      row,
      externalId,
      email,
      name,
      platformCustomerId: platformCustomerId ?? null,
      product: { planId, platformProductId: platformProductId ?? null, title: productName },
      variant: { platformVariantId: platformVariantId ?? null, title: null },
      quantity,
      price: { minor: amount, currency },
      interval,
      intervalCount,
      prepaidCycles: prepaidTotal ?? null,
      schedule: consistentSchedule(
        {
          billing_anchor_at: anchor ?? null,
          period_index: periodIndex ?? -1,
          current_period_start: periodStart ?? null,
          current_period_end: periodEnd ?? null,
          next_charge_at: nextChargeAt ?? null,
          prepaid_cycles_remaining: prepaidTotal ? (prepaidRemaining ?? prepaidTotal - 1) : null,
        },
        { interval, intervalCount, timeZone },
      ),
      status: status as 'active' | 'paused',
      pausedAt: status === 'paused' ? (pausedAt ?? null) : null,
      resumeAt: status === 'paused' ? (resumeAt ?? null) : null,
      skipNext: skipNext ?? false,
      cancelAtPeriodEnd: cancelAtPeriodEnd ?? false,
      instrumentToken: token,
      shippingAddress: shipping ?? null,
      billingAddress: billing ?? null,
    },
  }
}

function prefixed(prefix: 'shipping' | 'billing') {
  return {
    name: `${prefix}_name`,
    line1: `${prefix}_line1`,
    line2: `${prefix}_line2`,
    city: `${prefix}_city`,
    state: `${prefix}_state`,
    postal_code: `${prefix}_postal_code`,
    country: `${prefix}_country`,
    phone: `${prefix}_phone`,
  }
}

/**
 * The file's dates when they keep the schedule's invariant (the next charge is the boundary after the
 * current period and the prepaid cycles still to come, counted from the anchor: what an export of a
 * subscription in good standing holds); otherwise a schedule rebuilt from the next charge alone, so a
 * hand-edited row can never leave a subscription whose renewal cannot be placed (set aside, stuck).
 */
function consistentSchedule(file: ImportedSchedule, { interval, intervalCount, timeZone }: { interval: PlanInterval; intervalCount: number; timeZone: string }): ImportedSchedule {
  const next = file.next_charge_at
  if (next === null) return { ...file, billing_anchor_at: file.billing_anchor_at, current_period_start: null, current_period_end: null }
  const remaining = file.prepaid_cycles_remaining ?? 0
  const boundary = (anchor: Date, index: number) => periodBoundary(anchor, interval, intervalCount, index, timeZone)
  const anchor = file.billing_anchor_at
  if (
    anchor &&
    file.period_index >= -1 &&
    file.period_index <= 10_000 &&
    boundary(anchor, file.period_index + 1 + remaining).getTime() === next.getTime() &&
    (file.period_index < 0 || (file.current_period_start?.getTime() === boundary(anchor, file.period_index).getTime() && file.current_period_end?.getTime() === boundary(anchor, file.period_index + 1).getTime()))
  ) {
    return file.period_index < 0 ? { ...file, current_period_start: file.current_period_start ?? boundary(next, -1), current_period_end: file.current_period_end ?? next } : file
  }
  // Rebuilt: the current period (or prepaid cycle) ends at the next boundary; the cycles still to come follow it.
  const start = boundary(next, -(remaining + 1))
  return {
    billing_anchor_at: start,
    period_index: 0,
    current_period_start: start,
    current_period_end: boundary(start, 1),
    next_charge_at: next,
    prepaid_cycles_remaining: file.prepaid_cycles_remaining,
  }
}
