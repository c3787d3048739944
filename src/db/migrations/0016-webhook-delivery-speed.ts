import { sql, type Kysely } from 'kysely'

/**
 * Webhook delivery, cheaper per delivery (issue 17):
 *   - a delivery that succeeds at its first attempt keeps that attempt on its own row (latency and the
 *     start of the answer; the time and status are delivered_at and last_status_code) instead of a
 *     webhook_attempts row: the delivery log shows it as an attempt (webhook.presenter.ts), and a
 *     redelivery moves it to webhook_attempts before the row is reused;
 *   - webhook_deliveries.store_id loses its foreign key: the endpoint's own (webhook_subscription_id,
 *     ON DELETE CASCADE from webhook_subscriptions, itself cascading from stores) already removes a
 *     store's deliveries, and the fan-out copies store_id from the event of that store; the check
 *     cost a lookup per fanned-out row;
 *   - webhook_deliveries leaves room on each page (fillfactor 70), so the claim's lease stamp (columns
 *     no index holds) is a heap-only update instead of a new entry in each of the five indexes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').addColumn('delivered_latency_ms', 'integer').execute()
  await db.schema.alterTable('webhook_deliveries').addColumn('delivered_response_body', 'text').execute()
  await sql`ALTER TABLE webhook_deliveries DROP CONSTRAINT IF EXISTS webhook_deliveries_store_id_fkey`.execute(db)
  await sql`ALTER TABLE webhook_deliveries SET (fillfactor = 70)`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE webhook_deliveries RESET (fillfactor)`.execute(db)
  await sql`ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_store_id_fkey FOREIGN KEY (store_id) REFERENCES stores (id) ON DELETE CASCADE`.execute(db)
  await sql`
    INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error, response_body)
    SELECT id, delivered_at, last_status_code, delivered_latency_ms, NULL, delivered_response_body
      FROM webhook_deliveries WHERE delivered_latency_ms IS NOT NULL`.execute(db)
  await db.schema.alterTable('webhook_deliveries').dropColumn('delivered_response_body').execute()
  await db.schema.alterTable('webhook_deliveries').dropColumn('delivered_latency_ms').execute()
}
