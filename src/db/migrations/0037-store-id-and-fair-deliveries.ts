import { sql, type Kysely } from 'kysely'

/**
 * Many stores on one deployment (issue 28):
 *   - every table carries store_id (test/db/every-table-carries-store-id.test.ts): a bulk operation's
 *     items get their operation's store, so the table can be distributed by store beside the
 *     subscriptions each item changes (docs/scaling.md). Items only exist since 0034 and an operation
 *     has at most 100,000, so the backfill is one short statement;
 *   - the webhook claim takes each endpoint's oldest due deliveries in turn (dispatcher.ts) instead of
 *     the oldest across all stores: one short range of (endpoint, next_attempt_at) per endpoint,
 *     however large one endpoint's backlog. The global due index served only the old claim: it goes,
 *     so a delivery still costs as many index entries as before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('bulk_operation_items').addColumn('store_id', 'text').execute()
  await sql`UPDATE bulk_operation_items i SET store_id = o.store_id FROM bulk_operations o WHERE o.id = i.operation_id`.execute(db)
  await sql`ALTER TABLE bulk_operation_items ALTER COLUMN store_id SET NOT NULL`.execute(db)

  await sql`CREATE INDEX webhook_deliveries_endpoint_due_idx ON webhook_deliveries (webhook_subscription_id, next_attempt_at) WHERE status = 'pending'`.execute(db)
  await sql`DROP INDEX webhook_deliveries_due_idx`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`.execute(db)
  await sql`DROP INDEX webhook_deliveries_endpoint_due_idx`.execute(db)
  await db.schema.alterTable('bulk_operation_items').dropColumn('store_id').execute()
}
