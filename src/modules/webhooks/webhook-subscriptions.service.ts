import type { Db, StoreRow, WebhookAttemptRow, WebhookSubscriptionRow } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { invalidField, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { listPage, type Page, type PageRequest } from '../../lib/pagination.ts'
import { toRfc3339 } from '../../lib/time.ts'
import { findFeedEvent, markFannedOut, type EventLog } from '../events/index.ts'
import * as repo from './webhooks.repository.ts'
import { checkWebhookUrl } from './ssrf-guard.ts'
import { ATTEMPTS_SHOWN, presentDelivery, presentWebhookSubscription } from './webhook.presenter.ts'
import type { CreateWebhookInput, UpdateWebhookInput, WebhookDeliveryView, WebhookSubscriptionView } from './webhook.schemas.ts'
import { newWebhookSecret } from './webhook-signing.ts'

/** How long the previous secret keeps signing after a rotation (docs/contract.md, Webhook delivery). */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000

export interface WebhookServiceOptions {
  db: Db
  events: EventLog
  /** Real time: deliveries and their bookkeeping happen now, whatever a store's test clock says. */
  clock: Clock
  allowPrivateNetworks: boolean
  /** Tells the dispatcher there is work, so a test ping or a replay goes out without waiting for its poll. */
  onWork?: () => void
}

export type WebhookService = ReturnType<typeof createWebhookService>

export function createWebhookService({ db, events, clock, allowPrivateNetworks, onWork }: WebhookServiceOptions) {
  async function requireEndpoint(store: StoreRow, id: string): Promise<WebhookSubscriptionRow> {
    const row = await repo.findEndpoint(db, store.id, id)
    if (!row) throw notFound('webhook subscription', id)
    return row
  }

  async function assertUrlAllowed(store: StoreRow, url: string): Promise<void> {
    const verdict = await checkWebhookUrl(url, { allowPrivateNetworks, requireHttps: store.mode === 'live' })
    if (!verdict.ok) throw invalidField('/body/url', verdict.reason)
  }

  async function deliveryViews(rows: Parameters<typeof presentDelivery>[0][]): Promise<WebhookDeliveryView[]> {
    if (rows.length === 0) return []
    const attempts = await repo.attemptsOf(db, rows.map((row) => row.id))
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
    const row = await db.transaction().execute((trx) => repo.requeueDelivery(trx, {
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
    }))
    onWork?.()
    return (await deliveryViews([row]))[0]!
  }

  return {
    async list(store: StoreRow, page: PageRequest): Promise<Page<WebhookSubscriptionView>> {
      return listPage(page, (bounds) => repo.listEndpoints(db, store.id, bounds), presentWebhookSubscription)
    },

    async create(store: StoreRow, input: CreateWebhookInput): Promise<WebhookSubscriptionView & { secret: string }> {
      await assertUrlAllowed(store, input.url)
      const now = clock.now()
      const status = input.status ?? 'enabled'
      const row = await repo.insertEndpoint(db, {
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
      const row = await repo.updateEndpoint(db, store.id, id, changes)
      return presentWebhookSubscription(row)
    },

    async remove(store: StoreRow, id: string): Promise<void> {
      if (!(await repo.deleteEndpoint(db, store.id, id))) throw notFound('webhook subscription', id)
    },

    async rotateSecret(store: StoreRow, id: string) {
      const endpoint = await requireEndpoint(store, id)
      const now = clock.now()
      const expires = new Date(now.getTime() + ROTATION_OVERLAP_MS)
      const secret = newWebhookSecret()
      await repo.updateEndpoint(db, store.id, id, { secret, previous_secret: endpoint.secret, previous_secret_expires_at: expires, updated_at: now })
      return { object: 'webhook_secret' as const, secret, previous_secret_expires_at: toRfc3339(expires) }
    },

    /** A `webhook.test` event, delivered to this endpoint only (whatever its event_types). */
    async sendTest(store: StoreRow, id: string): Promise<WebhookDeliveryView> {
      const endpoint = await requireEndpoint(store, id)
      const event = await db.transaction().execute(async (trx) => {
        const recorded = await events.record(trx, {
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
      const page = await listPage(query, (bounds) => repo.listDeliveries(db, id, { ...bounds, status: query.status }), (row) => row)
      return { data: await deliveryViews(page.data), next_cursor: page.next_cursor }
    },

    async redeliver(store: StoreRow, id: string, eventId: string): Promise<WebhookDeliveryView> {
      return queueDelivery(store, await requireEndpoint(store, id), eventId)
    },

    /** Every failed delivery to this endpoint created since `since` is sent again. */
    async replay(store: StoreRow, id: string, since: string) {
      await requireEndpoint(store, id)
      const now = clock.now()
      const redelivered = await repo.requeueFailedSince(db, id, new Date(since), now)
      if (redelivered > 0) onWork?.()
      return { object: 'webhook_replay' as const, redelivered }
    },
  }
}
