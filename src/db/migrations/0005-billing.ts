import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('subscriptions')
    // The charge in flight: set when an attempt is recorded, cleared when it settles. While it is set
    // no other attempt can start, which is half of exactly-once (the unique key is the other half).
    .addColumn('pending_charge_id', 'text')
    // Dunning state of the unpaid period: failed attempts so far, when the first failed, which period.
    .addColumn('dunning_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('dunning_started_at', 'timestamptz')
    .addColumn('unpaid_period_start', 'timestamptz')
    .addColumn('past_due_at', 'timestamptz')
    // The renewal the last subscription.renewal_upcoming announced, so each renewal is announced once.
    .addColumn('reminded_for', 'timestamptz')
    .execute()

  // What the renewal scheduler scans: only rows that can be charged are in the index.
  await sql`CREATE INDEX subscriptions_renewal_due_idx ON subscriptions (next_charge_at)
    WHERE status IN ('active', 'past_due') AND pending_charge_id IS NULL AND NOT cancel_at_period_end`.execute(db)
  await sql`CREATE INDEX subscriptions_period_end_idx ON subscriptions (current_period_end) WHERE status = 'active'`.execute(db)
  await sql`CREATE INDEX subscriptions_past_due_idx ON subscriptions (past_due_at) WHERE status = 'past_due'`.execute(db)

  await db.schema
    .alterTable('charges')
    .addColumn('gateway', 'text', (c) => c.notNull().defaultTo('test'))
    .addColumn('gateway_charge_id', 'text')
    // The renewal order on the commerce platform this charge pays (platform gateway only).
    .addColumn('platform_order_id', 'text')
    // Real time until which a worker owns the gateway call of a pending charge; after it, the
    // reconciler asks the gateway again with the same idempotency key (the worker may have died).
    .addColumn('lease_until', 'timestamptz')
    .execute()
  await sql`CREATE INDEX charges_pending_lease_idx ON charges (lease_until) WHERE status = 'pending'`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX charges_pending_lease_idx`.execute(db)
  for (const column of ['lease_until', 'platform_order_id', 'gateway_charge_id', 'gateway']) await db.schema.alterTable('charges').dropColumn(column).execute()
  for (const index of ['subscriptions_past_due_idx', 'subscriptions_period_end_idx', 'subscriptions_renewal_due_idx']) await sql`DROP INDEX ${sql.raw(index)}`.execute(db)
  for (const column of ['reminded_for', 'past_due_at', 'unpaid_period_start', 'dunning_started_at', 'dunning_attempts', 'pending_charge_id']) {
    await db.schema.alterTable('subscriptions').dropColumn(column).execute()
  }
}
