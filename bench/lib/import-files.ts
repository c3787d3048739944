// The files bench/import.ts imports, written to disk before a run (unmeasured) so that the measured
// import reads a file as the CLI does, not a generator that shares its CPU.
import { createWriteStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { stringify } from 'csv-stringify/sync'
import { DateTime } from 'luxon'
import { nativeRows } from '../../test/api/imports/native-rows.ts'

/** A `native` file of `count` active monthly subscriptions on `planId` (the generator the import tests use); answers its size in bytes. */
export async function writeNativeFile(path: string, options: { count: number; planId: string; nextChargeAt: Date; prefix: string }): Promise<number> {
  await pipeline(nativeRows(options), createWriteStream(path))
  return (await stat(path)).size
}

const RECHARGE_HEADER = [
  'subscription_id', 'email', 'first_name', 'last_name', 'product_title', 'variant_title', 'external_product_id', 'recurring_price', 'quantity',
  'charge_interval_frequency', 'charge_interval_unit_type', 'shipping_interval_frequency', 'shipping_interval_unit_type', 'next_charge_date',
  'processor_payment_method_token', 'shipping_address1', 'shipping_address2', 'shipping_city', 'shipping_province', 'shipping_zip', 'shipping_country', 'shipping_phone',
] as const

/**
 * A `recharge` file of `count` monthly subscriptions to the product with BigCommerce id
 * `platformProductId` (the migration template's columns), each its own subscriber with a card token
 * and an address, charging next 2-29 days after `today`. On a store charging through the test gateway
 * the matching reads only the catalogue (no customer or card look-ups). Answers its size in bytes.
 */
export async function writeRechargeFile(path: string, { count, platformProductId, today, prefix }: { count: number; platformProductId: string; today: DateTime; prefix: string }): Promise<number> {
  const dates = Array.from({ length: 28 }, (_, day) => today.plus({ days: 2 + day }).toISODate()!)
  async function* lines() {
    yield stringify([RECHARGE_HEADER])
    for (let from = 0; from < count; from += 1_000) {
      const rows: string[][] = []
      for (let i = from; i < Math.min(count, from + 1_000); i++) {
        rows.push([
          `${prefix}${i}`, `${prefix}-${i}@example.com`, `First${i}`, `Last${i}`, 'Coffee beans', '', platformProductId, (12 + (i % 5) / 4).toFixed(2), String(1 + (i % 3)),
          '1', 'month', '1', 'month', dates[i % dates.length]!,
          `tok_${i}`, `${i} Analytical Street`, '', 'London', '', 'N1 9GU', 'GB', '',
        ])
      }
      yield stringify(rows)
    }
  }
  await pipeline(Readable.from(lines()), createWriteStream(path))
  return (await stat(path)).size
}
