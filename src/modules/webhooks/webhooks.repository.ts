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
export async function requeueDelivery(trx: Executor, row: Insertable<WebhookDeliveriesTable> & { next_attempt_at: Date; updated_at: Date }): Promise<WebhookDeliveryRow> {
  await sql`
    WITH locked AS (
      SELECT id, delivered_at, last_status_code, delivered_latency_ms, delivered_response_body, delivered_sent_at, delivered_request_signature FROM webhook_deliveries
       WHERE webhook_subscription_id = ${row.webhook_subscription_id} AND event_id = ${row.event_id}
         FOR UPDATE)
    INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error, response_body, sent_at, request_signature)
    SELECT id, delivered_at, last_status_code, delivered_latency_ms, NULL, delivered_response_body, delivered_sent_at, delivered_request_signature FROM locked
     WHERE delivered_latency_ms IS NOT NULL AND delivered_at IS NOT NULL`.execute(trx)
  // Due now (real time); a reused row keeps its created_at.
  const now = row.next_attempt_at
  return trx
    .insertInto('webhook_deliveries')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['webhook_subscription_id', 'event_id']).doUpdateSet({
        status: 'pending', attempts: 0, next_attempt_at: now, locked_until: null, lease_token: null, delivered_latency_ms: null, delivered_response_body: null,
        delivered_sent_at: null, delivered_request_signature: null, updated_at: row.updated_at,
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

/** One delivery of the endpoint. */
export function findDelivery(db: Executor, endpointId: string, deliveryId: string): Promise<WebhookDeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('webhook_subscription_id', '=', endpointId).where('id', '=', deliveryId).executeTakeFirst()
}

export interface HealthFigures {
  attempts: number
  succeeded: number
  failuresSinceSuccess: number
  /** The latest success's time as shown (attempted_at: the store's clock on a test store). */
  lastSuccessAt: Date | null
  lastFailure: { attempted_at: Date; status_code: number | null; error: string | null } | null
  pending: number
  nextRetryAt: Date | null
}

/**
 * An endpoint's attempts sent since `since` (real time), counted: every attempt updates its delivery's
 * `updated_at` (real time), so the deliveries changed since then hold them all, and the index on
 * (webhook_subscription_id, updated_at) finds just those. A first attempt that succeeded lives on its
 * delivery row; the others are webhook_attempts rows. An attempt never sent (its endpoint was disabled
 * while it waited) is no attempt. Attempts made before migration 0029 have no `sent_at`: their
 * `attempted_at` (real time then) stands in.
 */
export async function endpointHealth(db: Executor, endpointId: string, since: Date, notSentError: string): Promise<HealthFigures> {
  const tries = sql`
    WITH recent AS (
      SELECT id, delivered_at, delivered_sent_at, delivered_latency_ms, last_status_code FROM webhook_deliveries
       WHERE webhook_subscription_id = ${endpointId} AND updated_at >= ${since}
    ),
    tries AS (
      SELECT coalesce(delivered_sent_at, delivered_at) AS sent, true AS ok, delivered_at AS shown, last_status_code AS status_code, NULL::text AS error
        FROM recent WHERE delivered_latency_ms IS NOT NULL AND delivered_at IS NOT NULL
      UNION ALL
      SELECT coalesce(a.sent_at, a.attempted_at), coalesce(a.status_code BETWEEN 200 AND 299, false), a.attempted_at, a.status_code, a.error
        FROM webhook_attempts a JOIN recent r ON r.id = a.delivery_id
       WHERE a.sent_at IS NOT NULL OR a.status_code IS NOT NULL OR a.error IS DISTINCT FROM ${notSentError}
    ),
    windowed AS (SELECT * FROM tries WHERE sent >= ${since})`
  const { rows: [counts] } = await sql<{ attempts: number | string; succeeded: number | string; since_success: number | string; last_success: Date | null }>`
    ${tries},
    last_ok AS (SELECT max(sent) AS sent, (array_agg(shown ORDER BY sent DESC))[1] AS shown FROM windowed WHERE ok)
    SELECT count(*) AS attempts,
           count(*) FILTER (WHERE w.ok) AS succeeded,
           count(*) FILTER (WHERE NOT w.ok AND w.sent > coalesce(l.sent, '-infinity'::timestamptz)) AS since_success,
           l.shown AS last_success
      FROM windowed w CROSS JOIN last_ok l
     GROUP BY l.shown`.execute(db)
  const { rows: [failure] } = await sql<{ attempted_at: Date; status_code: number | null; error: string | null }>`
    ${tries}
    SELECT shown AS attempted_at, status_code, error FROM windowed WHERE NOT ok ORDER BY sent DESC LIMIT 1`.execute(db)
  const waiting = await db
    .selectFrom('webhook_deliveries')
    .select([(eb) => eb.fn.countAll<number | string>().as('pending'), sql<Date | null>`min(next_attempt_at) FILTER (WHERE attempts > 0)`.as('next_retry')])
    .where('webhook_subscription_id', '=', endpointId)
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow()
  return {
    attempts: Number(counts?.attempts ?? 0),
    succeeded: Number(counts?.succeeded ?? 0),
    failuresSinceSuccess: Number(counts?.since_success ?? 0),
    lastSuccessAt: counts?.last_success ?? null,
    lastFailure: failure ?? null,
    pending: Number(waiting.pending),
    nextRetryAt: waiting.next_retry,
  }
}
