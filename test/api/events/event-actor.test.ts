import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { SignJWT } from 'jose'
import pino from 'pino'
import { createJobRunner, type JobRunner } from '../../../src/jobs/runner.ts'
import type { PlatformAccess, PlatformClient } from '../../../src/modules/platform/index.ts'
import { SUBSCRIPTION_OPTION_NAME } from '../../../src/modules/storefront-orders/index.ts'
import { createServices, type Services } from '../../../src/services.ts'
import { startBigCommerceSimulator, type BigCommerceSimulator } from '../../helpers/bigcommerce-simulator.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
import { buildTestApp, call, createStoreWithKey, testConfig, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, checkout, checkoutBody, storedEvents } from '../subscriptions/fixtures.ts'

/**
 * Who did what (CONTRACT 17, docs/contract.md "Events: actor"): every event records its actor, in the
 * envelope as stored, delivered and listed. An admin key is named by its id and name, a console session
 * by its id, a subscriber by id and email, BigCommerce's order webhooks as the platform, the renewal
 * engine as the system; no credential ever appears in an event.
 */

const STORE_HASH = `actors${process.pid}`
const LIVE_HASH = `actorslive${process.pid}`
const TOKEN = 'actors-store-token-SECRET-5150'
const LIVE_TOKEN = 'actors-live-token-SECRET-5151'
const PUBLIC_URL = 'https://billing.example.test'
const SUB_PRODUCT = 701
const PLAN_OPTION = 11
const CUSTOMER_ID = 41
const BILLING = {
  first_name: 'Ada', last_name: 'Lovelace', street_1: '1 Analytical Street', city: 'London', state: 'Greater London',
  zip: 'N1 9GU', country: 'United Kingdom', country_iso2: 'GB', email: 'ada.actor@example.com',
}
const START = '2026-01-10T09:00:00.000Z'

describe('every event records who did it', () => {
  let sim: BigCommerceSimulator
  let t: TestApp
  let services: Services
  let runner: JobRunner
  let client: PlatformClient
  let shop: StoreWithKey & { planId: string }
  let supportKey: { id: string; key: string }
  let consoleToken: string
  let portalToken: string
  /** Every credential used in this file: none may appear in any event. */
  const secrets: string[] = []

  before(async () => {
    sim = await startBigCommerceSimulator({ app: { redirectUri: `${PUBLIC_URL}/platform/auth` } })
    sim.addStore({ hash: STORE_HASH, accessToken: TOKEN })
    sim.addStore({ hash: LIVE_HASH, accessToken: LIVE_TOKEN })
    sim.addProduct(LIVE_HASH, { id: SUB_PRODUCT, name: 'Coffee beans', price: 12, options: [{ id: PLAN_OPTION, display_name: SUBSCRIPTION_OPTION_NAME }] })
    const env = {
      PLATFORM_API_URL: sim.apiUrl, PLATFORM_PAYMENTS_URL: sim.paymentsUrl, PLATFORM_LOGIN_URL: sim.loginUrl,
      PLATFORM_TOKEN_KEY: randomBytes(32).toString('hex'), PLATFORM_API_TIMEOUT_MS: '2000', PUBLIC_URL,
      PLATFORM_CLIENT_ID: sim.app.clientId, PLATFORM_CLIENT_SECRET: sim.app.clientSecret,
    }
    t = await buildTestApp({ env })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    sim.routeWebhooksTo(`http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`)
    services = createServices({ database: t.database, config: testConfig(env), log: pino({ level: 'silent' }) })
    runner = createJobRunner({ db: t.db, handlers: services.modules.storefrontOrders.jobs!.filter(({ recurring }) => !recurring), log: pino({ level: 'silent' }) })
    client = services.modules.platform.service.client

    // A test-mode store on its test clock, connected (a console session needs a connected store).
    const store = await createStoreWithKey(t.db, { storeHash: STORE_HASH })
    await t.db.updateTable('stores').set({ test_clock_now: new Date(START) }).where('id', '=', store.store.id).execute()
    const product = await createProduct(t.app, store.auth)
    shop = { ...store, planId: (await createPlan(t.app, store.auth, product.id, { amount: 1500, interval: 'month' })).id }
    assert.equal((await call(t.app, { method: 'PUT', url: '/api/v1/admin/platform-connection', headers: shop.auth, payload: { access_token: TOKEN } })).statusCode, 200)
    const created = await call(t.app, { method: 'POST', url: '/api/v1/admin/api-keys', headers: shop.auth, payload: { name: 'Support bot', scope: 'support' } })
    assert.equal(created.statusCode, 201, created.body)
    supportKey = { id: created.json.id, key: created.json.key }

    const now = Math.floor(Date.now() / 1000)
    const payload = await new SignJWT({ user: { id: 1, email: 'owner@example.com' }, owner: { id: 1, email: 'owner@example.com' }, url: '/' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setJti(crypto.randomUUID()).setAudience(sim.app.clientId).setIssuer('bc')
      .setSubject(`stores/${STORE_HASH}`).setIssuedAt(now).setExpirationTime(now + 3600)
      .sign(new TextEncoder().encode(sim.app.clientSecret))
    const load = await call(t.app, { method: 'GET', url: `/platform/load?signed_payload_jwt=${encodeURIComponent(payload)}` })
    assert.equal(load.statusCode, 303, load.body)
    consoleToken = /console_session=([A-Za-z0-9_.-]+)$/.exec(String(load.headers.location))![1]!
    secrets.push(shop.key, supportKey.key, consoleToken, TOKEN, LIVE_TOKEN, sim.app.clientSecret, payload)
  })
  after(async () => {
    await services?.close()
    await t?.close()
    await sim?.close()
  })

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
  const lastEvent = async (entityId: string, type: string) => {
    const event = (await storedEvents(t.db, entityId)).filter((candidate) => candidate.event_type === type).at(-1)
    assert.ok(event, `a ${type} event about ${entityId}`)
    return event
  }

  test('an admin key is named by its id and name', async () => {
    const [sub] = await checkout(t.app, shop.auth, checkoutBody(shop.planId))
    assert.equal((await act(t.app, bearer(supportKey.key), sub.id, 'pause', {})).statusCode, 200)
    assert.deepEqual((await lastEvent(sub.id, 'subscription.paused')).actor, { type: 'admin_key', id: supportKey.id, label: 'Support bot' })
    // The checkout itself was the store's first key's.
    const firstKey = await t.db.selectFrom('admin_api_keys').select(['id', 'name']).where('store_id', '=', shop.store.id).where('id', '!=', supportKey.id).executeTakeFirstOrThrow()
    assert.deepEqual((await lastEvent(sub.id, 'subscription.created')).actor, { type: 'admin_key', id: firstKey.id, label: firstKey.name })
  })

  test('a console session is named by its session id, as "Console"', async () => {
    const [sub] = await checkout(t.app, shop.auth, checkoutBody(shop.planId))
    assert.equal((await act(t.app, bearer(consoleToken), sub.id, 'skip')).statusCode, 200)
    const actor = (await lastEvent(sub.id, 'subscription.skipped')).actor
    const session = await t.db.selectFrom('console_sessions').select('jti').where('store_id', '=', shop.store.id).executeTakeFirstOrThrow()
    assert.deepEqual(actor, { type: 'console', id: session.jti, label: 'Console' })
  })

  test('a portal action is named by the subscriber id and email', async () => {
    const [sub] = await checkout(t.app, shop.auth, checkoutBody(shop.planId))
    const portal = await signInSubscriber(t.app, t.db, shop.store.id, sub.subscriber_id)
    portalToken = portal.accessToken
    secrets.push(portalToken)
    const response = await call(t.app, { method: 'POST', url: `/api/v1/portal/subscriptions/${sub.id}/cancel`, headers: portal.auth, payload: { at_period_end: true } })
    assert.equal(response.statusCode, 200, response.body)
    const subscriber = await t.db.selectFrom('subscribers').select('email').where('id', '=', sub.subscriber_id).executeTakeFirstOrThrow()
    assert.deepEqual((await lastEvent(sub.id, 'subscription.updated')).actor, { type: 'subscriber', id: sub.subscriber_id, label: subscriber.email })
  })

  test('a renewal by the worker is the renewal engine, charge events included; scheduled work is named as such', async () => {
    const [sub] = await checkout(t.app, shop.auth, checkoutBody(shop.planId))
    assert.equal((await act(t.app, shop.auth, sub.id, 'cancel', { at_period_end: true })).statusCode, 200)
    const [renewing] = await checkout(t.app, shop.auth, checkoutBody(shop.planId))
    const advanced = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to: '2026-02-10T09:00:00.000Z' } })
    assert.equal(advanced.statusCode, 200, advanced.body)
    const renewals = { type: 'system', id: 'renewals', label: 'Renewal worker' }
    assert.deepEqual((await lastEvent(renewing.id, 'subscription.charged')).actor, renewals)
    const charge = (await lastEvent(renewing.id, 'subscription.charged')).data.latest_charge_id
    assert.deepEqual((await lastEvent(charge, 'charge.succeeded')).actor, renewals)
    assert.deepEqual((await lastEvent(sub.id, 'subscription.cancelled')).actor, { type: 'system', id: 'due_work', label: 'Scheduled work' })
  })

  test('a subscription started by a BigCommerce order webhook is the platform\'s', async () => {
    const live = await createStoreWithKey(t.db, { mode: 'live', storeHash: LIVE_HASH })
    const product = await createProduct(t.app, live.auth, { platform_product_id: String(SUB_PRODUCT) })
    const planId = (await createPlan(t.app, live.auth, product.id, { amount: 1200 })).id
    assert.equal((await call(t.app, { method: 'PUT', url: '/api/v1/admin/platform-connection', headers: live.auth, payload: { access_token: LIVE_TOKEN } })).statusCode, 200)
    secrets.push(live.key)
    for (let i = 0; i < 20 && (await runner.runOnce()) > 0; i++);

    const card = sim.addCustomer(LIVE_HASH, { id: CUSTOMER_ID, email: BILLING.email, instruments: [{}] }).instruments[0]!.token
    const access: PlatformAccess = { storeHash: LIVE_HASH, accessToken: LIVE_TOKEN }
    const made = await client.call(access, {
      method: 'POST', path: '/v2/orders',
      body: { status_id: 0, customer_id: CUSTOMER_ID, billing_address: BILLING, products: [{ product_id: SUB_PRODUCT, quantity: 1, product_options: [{ id: PLAN_OPTION, value: planId }] }] },
    })
    assert.ok(made.sent && made.answer.statusCode < 300, JSON.stringify(made))
    const orderId = (made.answer.body as { id: number }).id
    const pat = await client.call(access, { method: 'POST', path: '/v3/payments/access_tokens', body: { order: { id: orderId } } })
    assert.ok(pat.sent && pat.answer.statusCode === 201)
    const paid = await client.call(access, {
      method: 'POST', host: 'payments', path: '/payments', pat: (pat.answer.body as { data: { id: string } }).data.id,
      body: { payment: { instrument: { type: 'stored_card', token: card }, payment_method_id: 'stripe.card' } },
    })
    assert.ok(paid.sent && paid.answer.statusCode === 201)
    assert.equal((await sim.sendOrderWebhook(LIVE_HASH, orderId, 'store/order/statusUpdated'))[0]!.status, 200)
    for (let i = 0; i < 20 && (await runner.runOnce()) > 0; i++);

    const [subscription] = await t.db.selectFrom('subscriptions').select('id').where('platform_order_id', '=', String(orderId)).execute()
    assert.ok(subscription, 'the order started a subscription')
    assert.deepEqual((await lastEvent(subscription.id, 'subscription.created')).actor, { type: 'platform', label: 'BigCommerce order webhook' })
  })

  test('the actor is in the envelope as listed and as stored for delivery, and no credential appears in any event', async () => {
    const listed = await call(t.app, { method: 'GET', url: '/api/v1/admin/events?limit=100', headers: shop.auth })
    assert.equal(listed.statusCode, 200, listed.body)
    assert.ok(listed.json.data.length > 5)
    for (const event of listed.json.data) assert.ok(event.actor?.type, `${event.event_type} has an actor`)
    const one = await call(t.app, { method: 'GET', url: `/api/v1/admin/events/${listed.json.data[0].id}`, headers: shop.auth })
    assert.deepEqual(one.json.actor, listed.json.data[0].actor)

    // Deliveries send the stored payload byte for byte: it carries the actor, and nothing secret.
    const rows = await t.db.selectFrom('events').select(['payload']).execute()
    assert.ok(rows.every((row) => JSON.parse(row.payload).actor !== undefined))
    const everything = rows.map((row) => row.payload).join('\n')
    assert.ok(secrets.length >= 8)
    for (const secret of secrets) assert.ok(!everything.includes(secret), `a credential (${secret.slice(0, 6)}...) appears in an event`)
    // Nor any part of a token long enough to matter (a console session's signature, say).
    for (const token of [consoleToken, portalToken]) for (const part of token.split('.')) assert.ok(part.length < 16 || !everything.includes(part))
  })
})
