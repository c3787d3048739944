import { sql, type Kysely } from 'kysely'

/**
 * Fair job claiming (issue 28): a job that belongs to a store names it (`store_id`, set at enqueue), and
 * the runner takes a small share of each store's due jobs in turn (src/jobs/fair-claim.ts) instead of
 * the oldest across all stores, so one store's backlog of emails never holds back another store's.
 *   - store_id stays nullable: recurring upkeep spans every store and belongs to none. No foreign key:
 *     it only chooses the queue's lane, and a job outliving its store must still run (and be set aside);
 *   - jobs_store_due_idx serves both halves of the store lane: the walk over stores with jobs (one probe
 *     per store, however large its backlog) and each store's oldest due jobs (one short range);
 *   - jobs_due_idx is now only the lane of jobs without a store: store jobs leave it, so upkeep is
 *     found at once behind any backlog, and a job still costs two index entries as before.
 * Jobs queued before this migration that name a store in their payload (the emails, the order webhooks)
 * are given it, so a backlog waiting at deploy time is shared fairly too.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('store_id', 'text').execute()
  await sql`UPDATE jobs SET store_id = payload->>'store_id' WHERE failed_at IS NULL AND payload->>'store_id' IS NOT NULL`.execute(db)
  await sql`CREATE INDEX jobs_store_due_idx ON jobs (store_id, run_at, id) WHERE failed_at IS NULL AND store_id IS NOT NULL`.execute(db)
  await sql`DROP INDEX jobs_due_idx`.execute(db)
  await sql`CREATE INDEX jobs_due_idx ON jobs (run_at, id) WHERE failed_at IS NULL AND store_id IS NULL`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX jobs_due_idx`.execute(db)
  await sql`DROP INDEX jobs_store_due_idx`.execute(db)
  await db.schema.alterTable('jobs').dropColumn('store_id').execute()
  await sql`CREATE INDEX jobs_due_idx ON jobs (run_at) WHERE failed_at IS NULL`.execute(db)
}
