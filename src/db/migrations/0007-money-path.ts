import { sql, type Kysely } from 'kysely'

/**
 * The money path made robust: 64-bit money everywhere, leases with fencing tokens, renewals set
 * aside with their reason instead of halting a batch, charges that need a person, and refunds.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // price x quantity reaches 10^11 minor units, far past a 4-byte integer.
  for (const [table, column] of [['plans', 'amount'], ['products', 'one_time_amount'], ['subscriptions', 'amount'], ['charges', 'amount'], ['test_gateway_charges', 'amount']] as const) {
    await sql`ALTER TABLE ${sql.table(table)} ALTER COLUMN ${sql.ref(column)} TYPE bigint`.execute(db)
  }

  // A renewal that failed on its own data: set aside (not claimed again) until someone changes the subscription.
  await db.schema.alterTable('subscriptions').addColumn('billing_issue', 'jsonb').execute()
  await sql`DROP INDEX subscriptions_renewal_due_idx`.execute(db)
  await sql`CREATE INDEX subscriptions_renewal_due_idx ON subscriptions (next_charge_at)
    WHERE status IN ('active', 'past_due') AND pending_charge_id IS NULL AND NOT cancel_at_period_end AND billing_issue IS NULL`.execute(db)

  await sql`ALTER TABLE charges DROP CONSTRAINT IF EXISTS charges_status_check`.execute(db)
  await sql`ALTER TABLE charges ADD CONSTRAINT charges_status_check CHECK (status IN ('pending', 'succeeded', 'failed', 'requires_review'))`.execute(db)
  await db.schema
    .alterTable('charges')
    // The fencing token of whoever holds the lease: settling is refused to anyone else.
    .addColumn('lease_token', 'text')
    // When the request that can move money was sent, for gateways that take no idempotency key:
    // until then a charge whose worker died may be sent again; after it, only looked up.
    .addColumn('submitted_at', 'timestamptz')
    // When the outcome first came back unknown; after the grace period the charge needs review.
    .addColumn('unknown_since', 'timestamptz')
    // Why the charge needs a person ({code, message, since}), while status is requires_review.
    .addColumn('review', 'jsonb')
    .addColumn('amount_refunded', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute()
  await sql`ALTER TABLE charges ADD CONSTRAINT charges_amount_refunded_check CHECK (amount_refunded >= 0 AND amount_refunded <= amount)`.execute(db)
  // Platform charges in flight across the upgrade may have been sent already: they are looked up, never sent again.
  await sql`UPDATE charges SET submitted_at = created_at WHERE status = 'pending' AND gateway = 'platform' AND platform_order_id IS NOT NULL`.execute(db)

  await db.schema.alterTable('webhook_deliveries').addColumn('lease_token', 'text').execute()

  await db.schema
    .createTable('refunds')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('charge_id', 'text', (c) => c.notNull().references('charges.id').onDelete('restrict'))
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
    .addColumn('currency', 'char(3)', (c) => c.notNull())
    .addColumn('reason', 'text')
    // Refunded automatically because the charge succeeded after its subscription was cancelled.
    .addColumn('automatic', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'succeeded', 'failed')`))
    .addColumn('idempotency_key', 'text', (c) => c.notNull().unique())
    .addColumn('gateway_refund_id', 'text')
    .addColumn('failure_message', 'text')
    .addColumn('lease_until', 'timestamptz')
    .addColumn('lease_token', 'text')
    // As for charges: a refund sent to a gateway without idempotency keys is never sent again; if its
    // answer is lost it waits for a person ({code, message, since} in review).
    .addColumn('submitted_at', 'timestamptz')
    .addColumn('review', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('settled_at', 'timestamptz')
    .execute()
  await db.schema.createIndex('refunds_charge_idx').on('refunds').columns(['charge_id', 'id']).execute()
  await sql`CREATE INDEX refunds_pending_lease_idx ON refunds (lease_until) WHERE status = 'pending'`.execute(db)

  // The test gateway's refunds, like its charges: one row per idempotency key.
  await db.schema
    .createTable('test_gateway_refunds')
    .addColumn('idempotency_key', 'text', (c) => c.primaryKey())
    .addColumn('charge_key', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('succeeded', 'failed')`))
    .addColumn('gateway_refund_id', 'text')
    .addColumn('failure_message', 'text')
    .addColumn('calls', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('test_gateway_refunds_charge_idx').on('test_gateway_refunds').column('charge_key').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('test_gateway_refunds').execute()
  await db.schema.dropTable('refunds').execute()
  await db.schema.alterTable('webhook_deliveries').dropColumn('lease_token').execute()
  await sql`ALTER TABLE charges DROP CONSTRAINT charges_amount_refunded_check`.execute(db)
  for (const column of ['amount_refunded', 'review', 'unknown_since', 'submitted_at', 'lease_token']) await db.schema.alterTable('charges').dropColumn(column).execute()
  await sql`ALTER TABLE charges DROP CONSTRAINT charges_status_check`.execute(db)
  await sql`ALTER TABLE charges ADD CONSTRAINT charges_status_check CHECK (status IN ('pending', 'succeeded', 'failed'))`.execute(db)
  await sql`DROP INDEX subscriptions_renewal_due_idx`.execute(db)
  await sql`CREATE INDEX subscriptions_renewal_due_idx ON subscriptions (next_charge_at)
    WHERE status IN ('active', 'past_due') AND pending_charge_id IS NULL AND NOT cancel_at_period_end`.execute(db)
  await db.schema.alterTable('subscriptions').dropColumn('billing_issue').execute()
  for (const [table, column] of [['plans', 'amount'], ['products', 'one_time_amount'], ['subscriptions', 'amount'], ['charges', 'amount'], ['test_gateway_charges', 'amount']] as const) {
    await sql`ALTER TABLE ${sql.table(table)} ALTER COLUMN ${sql.ref(column)} TYPE integer`.execute(db)
  }
}
