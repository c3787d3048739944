import { sql, type Insertable, type Updateable } from 'kysely'
import type { Executor, WebhookAttemptRow, WebhookDeliveryRow, WebhookSubscriptionRow } from '../../db/database.ts'
import type { WebhookDeliveriesTable, WebhookSubscriptionsTable } from './webhooks.tables.ts'

/** Webhook endpoints (webhook_subscriptions) and the deliveries made to them, as the admin API manages them. */

export function findEndpoint(db: Executor, storeId: string, id: string): Promise<WebhookSubscriptionRow | undefined> {
  return db.selectFrom('webhook_subscriptions').selectAll().where('store_id', '=', storeId).where('id', '=', id).executeTakeFirst()
}

export function listEndpoints(db: Executor, storeId: string, page: { limit: number; afterId?: string | undefined }): Promise<WebhookSubscriptionRow[]> {
  let query = db.selectFrom('webhook_subscriptions').selectAll().where('store_id', '=', storeId)
  if (page.afterId) query = query.where('id', '<', page.afterId)
  return query.orderBy('id', 'desc').limit(page.limit + 1).execute()
}

export function insertEndpoint(db: Executor, row: Insertable<WebhookSubscriptionsTable>): Promise<WebhookSubscriptionRow> {
  return db.insertInto('webhook_subscriptions').values(row).returningAll().executeTakeFirstOrThrow()
}

export function updateEndpoint(db: Executor, storeId: string, id: string, changes: Updateable<WebhookSubscriptionsTable>): Promise<WebhookSubscriptionRow> {
  return db.updateTable('webhook_subscriptions').set(changes).where('id', '=', id).where('store_id', '=', storeId).returningAll().executeTakeFirstOrThrow()
}

/** Answers whether a row was deleted. */
export async function deleteEndpoint(db: Executor, storeId: string, id: string): Promise<boolean> {
  const deleted = await db.deleteFrom('webhook_subscriptions').where('id', '=', id).where('store_id', '=', storeId).executeTakeFirst()
  return Number(deleted.numDeletedRows) > 0
}

/** The latest attempts of each delivery, newest first. */
export function attemptsOf(db: Executor, deliveryIds: readonly string[]): Promise<WebhookAttemptRow[]> {
  if (deliveryIds.length === 0) return Promise.resolve([])
  return db.selectFrom('webhook_attempts').selectAll().where('delivery_id', 'in', [...deliveryIds]).orderBy('id', 'desc').execute()
}

export function listDeliveries(db: Executor, endpointId: string, filter: { limit: number; afterId?: string | undefined; status?: WebhookDeliveryRow['status'] | undefined }): Promise<WebhookDeliveryRow[]> {
  let rows = db.selectFrom('webhook_deliveries').selectAll().where('webhook_subscription_id', '=', endpointId)
  if (filter.status) rows = rows.where('status', '=', filter.status)
  if (filter.afterId) rows = rows.where('id', '<', filter.afterId)
  return rows.orderBy('id', 'desc').limit(filter.limit + 1).execute()
}

/**
 * Queues one event to one endpoint again, whatever became of earlier deliveries. A first attempt that
 * succeeded lives on the delivery row (see the dispatcher); before the row is reused it becomes a
 * webhook_attempts row, so the log keeps it. The row is locked whatever it holds (a dispatcher
 * recording it right now is waited for and its record read), then reused.
 */
export async function requeueDelivery(trx: Executor, row: Insertable<WebhookDeliveriesTable> & { created_at: Date }): Promise<WebhookDeliveryRow> {
  await sql`
    WITH locked AS (
      SELECT id, delivered_at, last_status_code, delivered_latency_ms, delivered_response_body FROM webhook_deliveries
       WHERE webhook_subscription_id = ${row.webhook_subscription_id} AND event_id = ${row.event_id}
         FOR UPDATE)
    INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error, response_body)
    SELECT id, delivered_at, last_status_code, delivered_latency_ms, NULL, delivered_response_body FROM locked
     WHERE delivered_latency_ms IS NOT NULL AND delivered_at IS NOT NULL`.execute(trx)
  const now = row.created_at
  return trx
    .insertInto('webhook_deliveries')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['webhook_subscription_id', 'event_id']).doUpdateSet({
        status: 'pending', attempts: 0, next_attempt_at: now, locked_until: null, lease_token: null, delivered_latency_ms: null, delivered_response_body: null, updated_at: now,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** Every failed delivery to this endpoint created since `since` is pending again; answers how many. */
export async function requeueFailedSince(db: Executor, endpointId: string, since: Date, now: Date): Promise<number> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', attempts: 0, next_attempt_at: now, locked_until: null, lease_token: null, updated_at: now })
    .where('webhook_subscription_id', '=', endpointId)
    .where('status', '=', 'failed')
    .where('created_at', '>=', since)
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}
