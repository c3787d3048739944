import assert from 'node:assert/strict'
import { after, before } from 'node:test'
import type { Agent } from 'undici'
import type { Db } from '../../../src/db/database.ts'
import type { App } from '../../../src/http/types.ts'
import { fixedClock, systemClock, type Clock } from '../../../src/lib/clock.ts'
import { createWebhookAgent, createWebhookDispatcher, type WebhookDispatcher } from '../../../src/modules/webhooks/index.ts'
import { createShopWithPlan } from '../../helpers/catalog.ts'
import { buildTestApp, call, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver.ts'
import { act, checkout, checkoutBody, closeTestApp } from '../subscriptions/fixtures.ts'

export type Auth = Record<string, string>

/** The service with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true, so 127.0.0.1 receivers can be registered. */
export function webhookTestApp(): Promise<TestApp> {
  return buildTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } })
}

export interface WebhookSuite {
  /** A receiver on 127.0.0.1 (startWebhookReceiver), closed after the suite. */
  receiver(...args: Parameters<typeof startWebhookReceiver>): Promise<WebhookReceiver>
  /** A dispatcher over the suite's database (testDispatcher), closed after the suite. */
  dispatcher(options?: Parameters<typeof testDispatcher>[1]): TestDispatcher
}

/**
 * The setup of a suite that delivers to real receivers: hooks on the enclosing describe that build the
 * webhookTestApp (handed to `onApp` before the tests run) and afterwards close every dispatcher and
 * receiver made through the answer, then the app.
 */
export function webhookSuite(onApp: (t: TestApp) => void): WebhookSuite {
  let t: TestApp
  const receivers: WebhookReceiver[] = []
  const dispatchers: TestDispatcher[] = []

  before(async () => {
    t = await webhookTestApp()
    onApp(t)
  })
  after(async () => {
    for (const dispatcher of dispatchers) await dispatcher.close()
    for (const receiver of receivers) await receiver.close()
    await closeTestApp(t)
  })

  return {
    async receiver(...args) {
      const started = await startWebhookReceiver(...args)
      receivers.push(started)
      return started
    },
    dispatcher(options = {}) {
      const made = testDispatcher(t.db, options)
      dispatchers.push(made)
      return made
    },
  }
}

export const endpointsUrl = '/api/v1/admin/webhook-subscriptions'

/** POST /webhook-subscriptions that must succeed; answers the created endpoint with its secret. */
export async function createEndpoint(app: App, auth: Auth, body: Record<string, unknown>): Promise<any> {
  const response = await call(app, { method: 'POST', url: endpointsUrl, headers: auth, payload: body })
  assert.equal(response.statusCode, 201, `creating a webhook subscription failed: ${response.body}`)
  return response.json
}

export function patchEndpoint(app: App, auth: Auth, id: string, body: Record<string, unknown>) {
  return call(app, { method: 'PATCH', url: `${endpointsUrl}/${id}`, headers: auth, payload: body })
}

export function getEndpoint(app: App, auth: Auth, id: string) {
  return call(app, { method: 'GET', url: `${endpointsUrl}/${id}`, headers: auth })
}

export function endpointAction(app: App, auth: Auth, id: string, action: string, payload?: Record<string, unknown>) {
  return call(app, { method: 'POST', url: `${endpointsUrl}/${id}/${action}`, headers: auth, ...(payload ? { payload } : {}) })
}

/** An endpoint's deliveries (newest first) through the admin API. */
export async function listDeliveries(app: App, auth: Auth, id: string, query = 'limit=100'): Promise<any[]> {
  const response = await call(app, { method: 'GET', url: `${endpointsUrl}/${id}/deliveries?${query}`, headers: auth })
  assert.equal(response.statusCode, 200, response.body)
  return response.json.data
}

/** The one delivery of `eventId` to endpoint `id`. */
export async function deliveryOf(app: App, auth: Auth, id: string, eventId: string): Promise<any> {
  const found = (await listDeliveries(app, auth, id)).filter((delivery) => delivery.event_id === eventId)
  assert.equal(found.length, 1, `expected one delivery of ${eventId}`)
  return found[0]
}

/** The event's payload column, exactly as stored. */
export async function storedPayload(db: Db, eventId: string): Promise<string> {
  const row = await db.selectFrom('events').select('payload').where('id', '=', eventId).executeTakeFirstOrThrow()
  return row.payload
}

/** A store's events as stored, in recorded order. */
export async function storeEvents(db: Db, storeId: string): Promise<{ id: string; event_type: string; entity_id: string; sequence: number; payload: string }[]> {
  return db.selectFrom('events').select(['id', 'event_type', 'entity_id', 'sequence', 'payload']).where('store_id', '=', storeId).orderBy('position').execute()
}

export interface TestDispatcher extends WebhookDispatcher {
  agent: Agent
  close(): Promise<void>
}

/** A dispatcher as the worker builds it, with short defaults for tests; close() ends its agent. */
export function testDispatcher(db: Db, options: {
  clock?: Clock
  retrySchedule?: readonly number[]
  disableAfterMs?: number
  timeoutMs?: number
  batchSize?: number
  concurrency?: number
  allowPrivateNetworks?: boolean
} = {}): TestDispatcher {
  const agent = createWebhookAgent({ allowPrivateNetworks: options.allowPrivateNetworks ?? true })
  const dispatcher = createWebhookDispatcher({
    db,
    clock: options.clock ?? systemClock,
    agent,
    retrySchedule: options.retrySchedule ?? [60_000],
    disableAfterMs: options.disableAfterMs ?? 5 * 24 * 3_600_000,
    timeoutMs: options.timeoutMs ?? 5_000,
    ...(options.batchSize ? { batchSize: options.batchSize } : {}),
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
  })
  return { ...dispatcher, agent, close: () => agent.close() }
}

/**
 * Runs fan-out and delivery passes as the worker's loop does, until a pass finds nothing to do (or
 * `until` holds). Nothing waits for time: a delivery not yet due stays so until the test moves the
 * dispatcher's clock, so `until` still false once nothing is left to do fails at once.
 */
export async function drive(dispatcher: WebhookDispatcher, options: { until?: () => boolean } = {}): Promise<number> {
  let passes = 0
  for (;;) {
    passes += 1
    const fanned = await dispatcher.fanOut()
    const sent = await dispatcher.deliverDue()
    if (options.until?.()) return passes
    if (fanned + sent === 0) {
      if (!options.until) return passes
      throw new Error(`nothing left to dispatch after ${passes} passes, and the expected state was not reached`)
    }
  }
}

export interface Shop extends StoreWithKey {
  planId: string
}

/** A test-mode store (unless `mode` says) with a monthly plan: newShop(t, { mode }). */
export const newShop: (t: TestApp, options?: { mode?: 'test' | 'live' }) => Promise<Shop> = createShopWithPlan

/** One checkout of the shop's plan; answers the subscription. */
export async function subscribe(t: TestApp, shop: Shop, overrides: Record<string, unknown> = {}): Promise<any> {
  const [subscription] = await checkout(t.app, shop.auth, checkoutBody(shop.planId, overrides))
  return subscription
}

/** Removes endpoints a test made, so their leftover deliveries cannot reach a later test's dispatcher. */
export async function removeEndpoints(t: TestApp, auth: Auth): Promise<void> {
  const response = await call(t.app, { method: 'GET', url: `${endpointsUrl}?limit=100`, headers: auth })
  for (const endpoint of response.json?.data ?? []) {
    await call(t.app, { method: 'DELETE', url: `${endpointsUrl}/${endpoint.id}`, headers: auth })
  }
}

/**
 * At least `count` deliveries of the caller's own to `inbox` (which must answer 2xx): a shop of its own,
 * an endpoint on the lifecycle events, and checkouts paused and resumed. For a scan of every delivered
 * body that must not rest on what earlier tests happened to deliver.
 */
export async function deliverLifecycleEvents(t: TestApp, inbox: WebhookReceiver, dispatcher: WebhookDispatcher, count: number): Promise<void> {
  const shop = await newShop(t)
  const start = inbox.requests.length
  await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: ['subscription.created', 'subscription.activated', 'subscription.paused', 'subscription.resumed'] })
  try {
    // Four events each: created, activated, paused, resumed.
    for (let made = 0; made < count; made += 4) {
      const subscription = await subscribe(t, shop)
      for (const [action, payload] of [['pause', {}], ['resume', undefined]] as const) {
        const response = await act(t.app, shop.auth, subscription.id, action, payload)
        assert.equal(response.statusCode, 200, `${action}: ${response.body}`)
      }
    }
    await drive(dispatcher, { until: () => inbox.requests.length - start >= count })
  } finally {
    await removeEndpoints(t, shop.auth)
  }
}

/**
 * A dispatcher clock that stands still, a minute ahead of real time: deliveries the admin routes queue
 * (test pings, redeliveries, replays) are due at the real time they were asked for, so they must not
 * be ahead of the dispatcher's clock. A minute is well inside the receivers' 5-minute tolerance.
 */
export function dispatcherClock(): ReturnType<typeof fixedClock> {
  return fixedClock(new Date(Date.now() + 60_000))
}

export const SECOND = 1_000
export const MINUTE = 60 * SECOND
export const HOUR = 60 * MINUTE
