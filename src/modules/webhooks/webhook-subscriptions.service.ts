import type { Db, StoreRow, WebhookAttemptRow, WebhookSubscriptionRow } from '../../db/database.ts'
import type { Actor } from '../../http/actors.ts'
import type { Clock } from '../../lib/clock.ts'
import { invalidField, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { listPage, type Page, type PageRequest } from '../../lib/pagination.ts'
import { toRfc3339, toRfc3339OrNull } from '../../lib/time.ts'
import { eventPayload, findFeedEvent, markFannedOut, type EventLog } from '../events/index.ts'
import { storeNow } from '../stores/index.ts'
import * as repo from './webhooks.repository.ts'
import { checkWebhookUrl } from './ssrf-guard.ts'
import { NOT_SENT_ERROR } from './dispatcher.ts'
import { ATTEMPTS_SHOWN, presentDelivery, presentDeliveryDetail, presentWebhookSubscription } from './webhook.presenter.ts'
import {
  WEBHOOK_HEALTH_WINDOW_HOURS,
  type CreateWebhookInput,
  type UpdateWebhookInput,
  type WebhookDeliveryDetailView,
  type WebhookDeliveryView,
  type WebhookHealthView,
  type WebhookSubscriptionView,
} from './webhook.schemas.ts'
import { newWebhookSecret } from './webhook-signing.ts'

/** How long the previous secret keeps signing after a rotation (docs/contract.md, Webhook delivery). */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000

export interface WebhookServiceOptions {
  db: Db
  events: EventLog
  /**
   * Real time: deliveries and their bookkeeping happen now, whatever a store's test clock says; what
   * the merchant reads (created_at, updated_at, a test event's time) is on the store's clock.
   */
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

  /**
   * How far the store's clock stands from real time (0 for a real store). Retries and failing run on
   * real time; shown, they keep their distance from now on the store's clock (a retry in 4 minutes is
   * 4 minutes after the store's now), so a test store's page reads one clock. Exactly 0 for a store on
   * real time, not two readings of the clock apart: a retry shown a millisecond early is not yet due.
   */
  const storeClockOffset = (store: StoreRow) => (store.test_clock_now === null ? 0 : store.test_clock_now.getTime() - clock.now().getTime())

  async function deliveryViews(store: StoreRow, rows: Parameters<typeof presentDelivery>[0][]): Promise<WebhookDeliveryView[]> {
    if (rows.length === 0) return []
    const attempts = await repo.attemptsOf(db, rows.map((row) => row.id))
    const byDelivery = new Map<string, WebhookAttemptRow[]>()
    for (const attempt of attempts) {
      const list = byDelivery.get(attempt.delivery_id) ?? []
      if (list.length < ATTEMPTS_SHOWN) list.push(attempt)
      byDelivery.set(attempt.delivery_id, list)
    }
    const offset = storeClockOffset(store)
    return rows.map((row) => presentDelivery(row, byDelivery.get(row.id) ?? [], offset))
  }

  /** Sends one stored event to one endpoint again, whatever became of earlier deliveries. */
  async function queueDelivery(store: StoreRow, endpoint: WebhookSubscriptionRow, eventId: string): Promise<WebhookDeliveryView> {
    const now = clock.now()
    // Made at the store's time (what the merchant reads), sent at once in real time.
    const storeTime = storeNow(store, clock)
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
      created_at: storeTime,
      updated_at: now,
    }))
    onWork?.()
    return (await deliveryViews(store, [row]))[0]!
  }

  return {
    async list(store: StoreRow, page: PageRequest): Promise<Page<WebhookSubscriptionView>> {
      return listPage(page, (bounds) => repo.listEndpoints(db, store.id, bounds), presentWebhookSubscription)
    },

    async create(store: StoreRow, input: CreateWebhookInput): Promise<WebhookSubscriptionView & { secret: string }> {
      await assertUrlAllowed(store, input.url)
      const now = storeNow(store, clock)
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
      const changes: Record<string, unknown> = { updated_at: storeNow(store, clock) }
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
      await repo.updateEndpoint(db, store.id, id, { secret, previous_secret: endpoint.secret, previous_secret_expires_at: expires, updated_at: storeNow(store, clock) })
      return { object: 'webhook_secret' as const, secret, previous_secret_expires_at: toRfc3339(expires) }
    },

    /** A `webhook.test` event, delivered to this endpoint only (whatever its event_types). */
    async sendTest(store: StoreRow, id: string, actor: Actor): Promise<WebhookDeliveryView> {
      const endpoint = await requireEndpoint(store, id)
      const event = await db.transaction().execute(async (trx) => {
        const recorded = await events.record(trx, {
          storeId: store.id,
          eventType: 'webhook.test',
          occurredAt: storeNow(store, clock),
          data: { object: 'webhook_test', webhook_subscription_id: endpoint.id },
          entityId: endpoint.id,
          actor,
        })
        await markFannedOut(trx, [recorded.id])
        return recorded
      })
      return queueDelivery(store, endpoint, event.id)
    },

    async listDeliveries(store: StoreRow, id: string, query: PageRequest & { status?: 'pending' | 'succeeded' | 'failed' | undefined }): Promise<Page<WebhookDeliveryView>> {
      await requireEndpoint(store, id)
      const page = await listPage(query, (bounds) => repo.listDeliveries(db, id, { ...bounds, status: query.status }), (row) => row)
      return { data: await deliveryViews(store, page.data), next_cursor: page.next_cursor }
    },

    /**
     * One delivery for the inspector: the body sent and each attempt's headers, status and answer;
     * the signatures only with `showSignatures` (keys that may act, see HIDDEN_SIGNATURE).
     */
    async delivery(store: StoreRow, id: string, deliveryId: string, { showSignatures }: { showSignatures: boolean }): Promise<WebhookDeliveryDetailView> {
      await requireEndpoint(store, id)
      const row = await repo.findDelivery(db, id, deliveryId)
      if (!row) throw notFound('webhook delivery', deliveryId)
      const [attempts, payload] = await Promise.all([repo.attemptsOf(db, [row.id]), eventPayload(db, store.id, row.event_id)])
      if (payload === undefined) throw notFound('event', row.event_id)
      return presentDeliveryDetail(row, attempts.slice(0, ATTEMPTS_SHOWN), payload, { showSignatures, storeClockOffsetMs: storeClockOffset(store) })
    },

    /** How the endpoint is doing: its attempts of the last 24 hours (real time), whether it is failing now, what waits. */
    async health(store: StoreRow, id: string): Promise<WebhookHealthView> {
      const endpoint = await requireEndpoint(store, id)
      const since = new Date(clock.now().getTime() - WEBHOOK_HEALTH_WINDOW_HOURS * 3_600_000)
      const figures = await repo.endpointHealth(db, id, since, NOT_SENT_ERROR)
      // Failing and retrying run on real time; shown at their distance from the store's now (storeClockOffset).
      const offset = storeClockOffset(store)
      const onStoreClock = (at: Date | null) => (at === null ? null : toRfc3339(new Date(at.getTime() + offset)))
      return {
        object: 'webhook_health',
        webhook_subscription_id: endpoint.id,
        status: endpoint.status,
        disabled_reason: endpoint.disabled_reason,
        window_hours: WEBHOOK_HEALTH_WINDOW_HOURS,
        attempts: figures.attempts,
        succeeded: figures.succeeded,
        failed: figures.attempts - figures.succeeded,
        success_rate: figures.attempts === 0 ? null : figures.succeeded / figures.attempts,
        failing: endpoint.failing_since !== null,
        failing_since: onStoreClock(endpoint.failing_since),
        failures_since_success: figures.failuresSinceSuccess,
        last_success_at: toRfc3339OrNull(figures.lastSuccessAt),
        last_failure: figures.lastFailure
          ? { attempted_at: toRfc3339(figures.lastFailure.attempted_at), status_code: figures.lastFailure.status_code, error: figures.lastFailure.error }
          : null,
        pending: figures.pending,
        next_retry_at: onStoreClock(figures.nextRetryAt),
      }
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
