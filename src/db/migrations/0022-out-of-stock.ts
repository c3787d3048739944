import { sql, type Kysely } from 'kysely'

/**
 * What a renewal does when the platform says an item is out of stock (docs/contract.md, Renewal
 * pricing, "Stock"): a store chooses `skip` (the default), `retry` (daily for up to
 * `out_of_stock_retry_days`, then skip) or `charge_anyway`.
 *
 * A subscription waiting for stock retries its unpaid period like dunning does (`unpaid_period_start`),
 * but counts its attempts apart (`stock_attempts`), so a later card decline starts dunning at its first
 * retry day; each attempt still has its own idempotency key (attempt = dunning + stock attempts + 1).
 * `skip_reason` says why the latest skip was made, for `subscription.skipped` and the portal.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('stores')
    .addColumn('out_of_stock', 'text', (c) => c.notNull().defaultTo('skip').check(sql`out_of_stock in ('skip', 'retry', 'charge_anyway')`))
    .addColumn('out_of_stock_retry_days', 'integer', (c) => c.notNull().defaultTo(3).check(sql`out_of_stock_retry_days between 1 and 30`))
    .execute()
  await db.schema
    .alterTable('subscriptions')
    .addColumn('stock_attempts', 'integer', (c) => c.notNull().defaultTo(0).check(sql`stock_attempts >= 0`))
    .addColumn('out_of_stock_since', 'timestamptz')
    .addColumn('skip_reason', 'text', (c) => c.check(sql`skip_reason in ('requested', 'out_of_stock')`))
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('subscriptions').dropColumn('skip_reason').dropColumn('out_of_stock_since').dropColumn('stock_attempts').execute()
  await db.schema.alterTable('stores').dropColumn('out_of_stock_retry_days').dropColumn('out_of_stock').execute()
}
