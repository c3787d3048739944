import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  // The test gateway's own ledger: it plays an outside payment processor, so it shares the database
  // (surviving restarts, seen by every worker) but references none of our tables, as a real one would not.
  // One row per idempotency key is the gateway's never-charge-twice rule, enforced by the primary key.
  await db.schema
    .createTable('test_gateway_charges')
    .addColumn('idempotency_key', 'text', (c) => c.primaryKey())
    .addColumn('store_id', 'text', (c) => c.notNull())
    .addColumn('subscription_id', 'text', (c) => c.notNull())
    .addColumn('amount', 'integer', (c) => c.notNull().check(sql`amount >= 0`))
    .addColumn('currency', 'char(3)', (c) => c.notNull())
    .addColumn('payment_instrument_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('succeeded', 'failed')`))
    .addColumn('failure_code', 'text')
    .addColumn('gateway_charge_id', 'text')
    // How many charge calls arrived with this key: replays are expected, and tests assert on them.
    .addColumn('calls', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('test_gateway_charges_subscription_idx').on('test_gateway_charges').column('subscription_id').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('test_gateway_charges').execute()
}
