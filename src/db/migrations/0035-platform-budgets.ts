import { sql, type Kysely } from 'kysely'

/**
 * Each store's share of its platform API quota (CONTRACT section 19), shared by every process. The
 * platform's own rate-limit headers feed it and the renewal claim spends it: a store with nothing
 * left is not claimed until its window resets, so it holds no worker and no lease meanwhile.
 * Losing a row loses nothing: the next answer from the platform rebuilds it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('platform_budgets')
    .addColumn('store_id', 'text', (c) => c.primaryKey().references('stores.id').onDelete('cascade'))
    // Requests per window, as the platform last said (X-Rate-Limit-Requests-Quota).
    .addColumn('quota', 'integer', (c) => c.notNull())
    .addColumn('window_ms', 'integer', (c) => c.notNull())
    // What is left in this window: the platform's figure when last heard, less the calls made since.
    .addColumn('requests_left', 'integer', (c) => c.notNull())
    // Calls that claimed renewals still may make: reserved in this window, and in the one before (a
    // renewal claimed late in a window makes its calls in the next). Older reservations are dropped,
    // so a worker that died with calls reserved holds nothing back for long.
    .addColumn('reserved_calls', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('reserved_before', 'integer', (c) => c.notNull().defaultTo(0))
    // When the window refills (now + X-Rate-Limit-Time-Reset-Ms when last heard).
    .addColumn('resets_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute()
  // The fair claim walks the stores and takes each one's oldest due renewals: one short range of
  // this index per store, however many subscriptions the store or the table holds.
  await sql`CREATE INDEX subscriptions_store_renewal_due_idx ON subscriptions (store_id, next_charge_at)
    WHERE status IN ('active', 'past_due') AND pending_charge_id IS NULL AND NOT cancel_at_period_end AND billing_issue IS NULL`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX subscriptions_store_renewal_due_idx`.execute(db)
  await db.schema.dropTable('platform_budgets').execute()
}
