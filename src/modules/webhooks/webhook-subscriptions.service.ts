import { sql } from 'kysely'
import type { Db, StoreRow, WebhookAttemptRow, WebhookSubscriptionRow } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { invalidField, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { listPage, type Page, type PageRequest } from '../../lib/pagination.ts'
import { toRfc3339 } from '../../lib/time.ts'
import { findFeedEvent, markFannedOut, recordEvent } from '../events/index.ts'
import { checkWebhookUrl } from './ssrf-guard.ts'
import { ATTEMPTS_SHOWN, presentDelivery, presentWebhookSubscription } from './webhook.presenter.ts'
import type { CreateWebhookInput, UpdateWebhookInput, WebhookDeliveryView, WebhookSubscriptionView } from './webhook.schemas.ts'
import { newWebhookSecret } from './webhook-signing.ts'

/** How long the previous secret keeps signing after a rotation (docs/contract.md, Webhook delivery). */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000

export interface WebhookServiceOptions {
  db: Db
  /** Real time: deliveries and their bookkeeping happen now, whatever a store's test clock says. */
  clock: Clock
  allowPrivateNetworks: boolean
  /** Tells the dispatcher there is work, so a test ping or a replay goes out without waiting for its poll. */
  onWork?: () => void
}

export type WebhookService = ReturnType<typeof createWebhookService>

export function createWebhookService({ db, clock, allowPrivateNetworks, onWork }: WebhookServiceOptions) {
  async function requireEndpoint(store: StoreRow, id: string): Promise<WebhookSubscriptionRow> {
    const row = await db.selectFrom('webhook_subscriptions').selectAll().where('store_id', '=', store.id).where('id', '=', id).executeTakeFirst()
    if (!row) throw notFound('webhook subscription', id)
    return row
  }

  async function assertUrlAllowed(store: StoreRow, url: string): Promise<void> {
    const verdict = await checkWebhookUrl(url, { allowPrivateNetworks, requireHttps: store.mode === 'live' })
    if (!verdict.ok) throw invalidField('/body/url', verdict.reason)
  }

  async function deliveryViews(rows: Parameters<typeof presentDelivery>[0][]): Promise<WebhookDeliveryView[]> {
    if (rows.length === 0) return []
    const attempts = await db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where('delivery_id', 'in', rows.map((row) => row.id))
      .orderBy('id', 'desc')
      .execute()
    const byDelivery = new Map<string, WebhookAttemptRow[]>()
    for (const attempt of attempts) {
      const list = byDelivery.get(attempt.delivery_id) ?? []
      if (list.length < ATTEMPTS_SHOWN) list.push(attempt)
      byDelivery.set(attempt.delivery_id, list)
    }
    return rows.map((row) => presentDelivery(row, byDelivery.get(row.id) ?? []))
  }

  /** Sends one stored event to one endpoint again, whatever became of earlier deliveries. */
  async function queueDelivery(store: StoreRow, endpoint: WebhookSubscriptionRow, eventId: string): Promise<WebhookDeliveryView> {
    const now = clock.now()
    const event = await findFeedEvent(db, store.id, eventId)
    if (!event) throw notFound('event', eventId)
    const row = await db.transaction().execute(async (trx) => {
      // A first attempt that succeeded lives on the delivery row (see the dispatcher); before the row is
      // reused it becomes a webhook_attempts row, so the log keeps it. The row is locked whatever it holds
      // (a dispatcher recording it right now is waited for and its record read), then reused.
      await sql`
        WITH locked AS (
          SELECT id, delivered_at, last_status_code, delivered_latency_ms, delivered_response_body FROM webhook_deliveries
           WHERE webhook_subscription_id = ${endpoint.id} AND event_id = ${event.id}
             FOR UPDATE)
        INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error, response_body)
        SELECT id, delivered_at, last_status_code, delivered_latency_ms, NULL, delivered_response_body FROM locked
         WHERE delivered_latency_ms IS NOT NULL AND delivered_at IS NOT NULL`.execute(trx)
      return trx
        .insertInto('webhook_deliveries')
        .values({
          id: newId('msg'),
          store_id: store.id,
          webhook_subscription_id: endpoint.id,
          event_id: event.id,
          event_type: event.event_type,
          entity_id: event.entity_id,
          event_position: event.position,
          status: 'pending',
          next_attempt_at: now,
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) =>
          oc.columns(['webhook_subscription_id', 'event_id']).doUpdateSet({
            status: 'pending', attempts: 0, next_attempt_at: now, locked_until: null, lease_token: null, delivered_latency_ms: null, delivered_response_body: null, updated_at: now,
          }),
        )
        .returningAll()
        .executeTakeFirstOrThrow()
    })
    onWork?.()
    return (await deliveryViews([row]))[0]!
  }

  return {
    async list(store: StoreRow, page: PageRequest): Promise<Page<WebhookSubscriptionView>> {
      const query = db.selectFrom('webhook_subscriptions').selectAll().where('store_id', '=', store.id)
      return listPage(page, ({ afterId, limit }) => (afterId ? query.where('id', '<', afterId) : query).orderBy('id', 'desc').limit(limit + 1).execute(), presentWebhookSubscription)
    },

    async create(store: StoreRow, input: CreateWebhookInput): Promise<WebhookSubscriptionView & { secret: string }> {
      await assertUrlAllowed(store, input.url)
      const now = clock.now()
      const status = input.status ?? 'enabled'
      const row = await db
        .insertInto('webhook_subscriptions')
        .values({
          id: newId('wh'),
          store_id: store.id,
          url: input.url,
          event_types: [...input.event_types],
          description: input.description ?? null,
          status,
          disabled_reason: status === 'disabled' ? 'created disabled' : null,
          secret: newWebhookSecret(),
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow()
      return { ...presentWebhookSubscription(row), secret: row.secret }
    },

    async get(store: StoreRow, id: string): Promise<WebhookSubscriptionView> {
      return presentWebhookSubscription(await requireEndpoint(store, id))
    },

    async update(store: StoreRow, id: string, input: UpdateWebhookInput): Promise<WebhookSubscriptionView> {
      await requireEndpoint(store, id)
      if (input.url !== undefined) await assertUrlAllowed(store, input.url)
      const changes: Record<string, unknown> = { updated_at: clock.now() }
      if (input.url !== undefined) changes.url = input.url
      if (input.event_types !== undefined) changes.event_types = [...input.event_types]
      if (input.description !== undefined) changes.description = input.description
      if (input.status === 'enabled') Object.assign(changes, { status: 'enabled', disabled_reason: null, failing_since: null })
      if (input.status === 'disabled') Object.assign(changes, { status: 'disabled', disabled_reason: 'disabled by an admin' })
      const row = await db.updateTable('webhook_subscriptions').set(changes).where('id', '=', id).where('store_id', '=', store.id).returningAll().executeTakeFirstOrThrow()
      return presentWebhookSubscription(row)
    },

    async remove(store: StoreRow, id: string): Promise<void> {
      const deleted = await db.deleteFrom('webhook_subscriptions').where('id', '=', id).where('store_id', '=', store.id).executeTakeFirst()
      if (Number(deleted.numDeletedRows) === 0) throw notFound('webhook subscription', id)
    },

    async rotateSecret(store: StoreRow, id: string) {
      const endpoint = await requireEndpoint(store, id)
      const now = clock.now()
      const expires = new Date(now.getTime() + ROTATION_OVERLAP_MS)
      const secret = newWebhookSecret()
      await db
        .updateTable('webhook_subscriptions')
        .set({ secret, previous_secret: endpoint.secret, previous_secret_expires_at: expires, updated_at: now })
        .where('id', '=', id)
        .execute()
      return { object: 'webhook_secret' as const, secret, previous_secret_expires_at: toRfc3339(expires) }
    },

    /** A `webhook.test` event, delivered to this endpoint only (whatever its event_types). */
    async sendTest(store: StoreRow, id: string): Promise<WebhookDeliveryView> {
      const endpoint = await requireEndpoint(store, id)
      const event = await db.transaction().execute(async (trx) => {
        const recorded = await recordEvent(trx, {
          storeId: store.id,
          eventType: 'webhook.test',
          occurredAt: clock.now(),
          data: { object: 'webhook_test', webhook_subscription_id: endpoint.id },
          entityId: endpoint.id,
        })
        await markFannedOut(trx, [recorded.id])
        return recorded
      })
      return queueDelivery(store, endpoint, event.id)
    },

    async listDeliveries(store: StoreRow, id: string, query: PageRequest & { status?: 'pending' | 'succeeded' | 'failed' | undefined }): Promise<Page<WebhookDeliveryView>> {
      await requireEndpoint(store, id)
      let rows = db.selectFrom('webhook_deliveries').selectAll().where('webhook_subscription_id', '=', id)
      if (query.status) rows = rows.where('status', '=', query.status)
      const page = await listPage(query, ({ afterId, limit }) => (afterId ? rows.where('id', '<', afterId) : rows).orderBy('id', 'desc').limit(limit + 1).execute(), (row) => row)
      return { data: await deliveryViews(page.data), next_cursor: page.next_cursor }
    },

    async redeliver(store: StoreRow, id: string, eventId: string): Promise<WebhookDeliveryView> {
      return queueDelivery(store, await requireEndpoint(store, id), eventId)
    },

    /** Every failed delivery to this endpoint created since `since` is sent again. */
    async replay(store: StoreRow, id: string, since: string) {
      await requireEndpoint(store, id)
      const now = clock.now()
      const result = await db
        .updateTable('webhook_deliveries')
        .set({ status: 'pending', attempts: 0, next_attempt_at: now, locked_until: null, lease_token: null, updated_at: now })
        .where('webhook_subscription_id', '=', id)
        .where('status', '=', 'failed')
        .where('created_at', '>=', new Date(since))
        .executeTakeFirst()
      const redelivered = Number(result.numUpdatedRows)
      if (redelivered > 0) onWork?.()
      return { object: 'webhook_replay' as const, redelivered }
    },
  }
}
