import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import type { StoreRow } from '../../../src/db/database.ts'
import { AppError } from '../../../src/lib/errors.ts'
import { createPlatformClient, createStoredInstruments, parseInstrument, type PlatformClient } from '../../../src/modules/platform/index.ts'
import { startBigCommerceSimulator, type BigCommerceSimulator } from '../../helpers/bigcommerce-simulator.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
import { assertProblem } from '../../helpers/problem.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, ADDRESS, checkout, checkoutBody, postCheckout } from '../subscriptions/fixtures.ts'

/**
 * Stored instruments on a store that charges through BigCommerce (docs/contract.md, "The commerce
 * platform"; docs/platform-api.md §6.3), against the BigCommerce simulator: checkout and every later
 * instrument change take only a stored card of the paying customer, the portal lists those cards,
 * and a platform that cannot answer refuses the request (503) without changing anything.
 */

const HASH = `instr${process.pid}`
const ACCESS_TOKEN = 'stored-instruments-token-SECRET-6620'
const TOKEN_KEY = randomBytes(32)
// Fixed tokens of 64 characters with letters between the digits: a random hex token can hold a
// Luhn-valid run of digits the card guard would (rightly) refuse in a request body.
const token = (seed: string) => `tok${seed}`.padEnd(64, 'x')
const ADA_VISA = token('adavisa')
const ADA_MASTERCARD = token('adamc')
const GRACE_AMEX = token('graceamex')
const ADA = 11
const GRACE = 12
const INSTRUMENT_FIELDS = ['brand', 'expiry_month', 'expiry_year', 'is_default', 'last_4', 'token']

describe('stored instruments of platform customers (BigCommerce simulator)', () => {
  let sim: BigCommerceSimulator
  let t: TestApp
  let shop: StoreWithKey
  let planId: string

  before(async () => {
    sim = await startBigCommerceSimulator()
    sim.addStore({ hash: HASH, accessToken: ACCESS_TOKEN })
    sim.addCustomer(HASH, {
      id: ADA,
      email: 'ada@example.com',
      instruments: [
        { token: ADA_VISA, brand: 'VISA', last_4: '4242', expiry_month: 4, expiry_year: 2031, is_default: true },
        { token: ADA_MASTERCARD, brand: 'MASTERCARD', last_4: '4444', expiry_month: 11, expiry_year: 2029, is_default: false },
      ],
    })
    sim.addCustomer(HASH, { id: GRACE, email: 'grace@example.com', instruments: [{ token: GRACE_AMEX, brand: 'AMEX', last_4: '0005' }] })

    t = await buildTestApp({
      env: {
        PLATFORM_API_URL: sim.apiUrl,
        PLATFORM_PAYMENTS_URL: sim.paymentsUrl,
        PLATFORM_LOGIN_URL: sim.loginUrl,
        PLATFORM_TOKEN_KEY: TOKEN_KEY.toString('hex'),
        PLATFORM_API_TIMEOUT_MS: '2000',
      },
    })
    // A test-mode store (a sandbox store on the platform) connected and switched to the platform gateway.
    shop = await createStoreWithKey(t.db, { storeHash: HASH })
    const connected = await call(t.app, { method: 'PUT', url: '/api/v1/admin/platform-connection', headers: shop.auth, payload: { access_token: ACCESS_TOKEN } })
    assert.equal(connected.statusCode, 200, connected.body)
    const switched = await call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: shop.auth, payload: { gateway: 'platform' } })
    assert.equal(switched.statusCode, 200, switched.body)
    const product = await createProduct(t.app, shop.auth)
    planId = (await createPlan(t.app, shop.auth, product.id)).id
  })
  after(async () => {
    await t?.close()
    await sim?.close()
  })

  const platformCheckout = (card: string, overrides: Record<string, unknown> = {}) =>
    checkoutBody(planId, { payment_instrument_id: card, platform_customer_id: ADA, billing_address: ADDRESS, ...overrides })
  const subscriptionRow = (id: string) => t.db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
  const nothingIngested = async (orderId: string) => {
    const claims = await t.db.selectFrom('checkouts').select('platform_order_id').where('store_id', '=', shop.store.id).where('platform_order_id', '=', orderId).execute()
    const subscriptions = await t.db.selectFrom('subscriptions').select('id').where('store_id', '=', shop.store.id).where('platform_order_id', '=', orderId).execute()
    assert.deepEqual([claims.length, subscriptions.length], [0, 0], `nothing of order ${orderId} was written`)
  }
  const listInstruments = (auth: Record<string, string>) => call(t.app, { method: 'GET', url: '/api/v1/portal/payment-instruments', headers: auth })
  const portalChange = (auth: Record<string, string>, id: string, instrument: string) =>
    call(t.app, { method: 'POST', url: `/api/v1/portal/subscriptions/${id}/payment-instrument`, headers: auth, payload: { payment_instrument_id: instrument } })

  test('checkout with a stored card of the customer succeeds and the subscription shows its brand and last 4', async () => {
    const [subscription] = await checkout(t.app, shop.auth, platformCheckout(ADA_MASTERCARD))
    assert.equal(subscription.payment_instrument_id, ADA_MASTERCARD)
    assert.deepEqual(subscription.payment_instrument, { brand: 'MASTERCARD', last_4: '4444' })
    assert.equal(subscription.platform_customer_id, String(ADA))
    const read = await call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${subscription.id}`, headers: shop.auth })
    assert.deepEqual(read.json.payment_instrument, { brand: 'MASTERCARD', last_4: '4444' })
    // Never more of the card than brand and last 4.
    for (const secret of ['424242', '2029']) assert.ok(!JSON.stringify(read.json.payment_instrument).includes(secret))
  })

  test("another customer's card, an unknown customer, or any other string is 400 invalid_payment_instrument and creates nothing", async () => {
    const cases: Array<[string, Record<string, unknown>]> = [
      ["another customer's card", platformCheckout(GRACE_AMEX)],
      ['an unknown customer', platformCheckout(ADA_VISA, { platform_customer_id: 999 })],
      ['an invented token', platformCheckout('instr_belongs_to_someone_else')],
    ]
    for (const [what, body] of cases) {
      const response = await postCheckout(t.app, shop.auth, body)
      assertProblem(response, 400, 'invalid_payment_instrument', { what, path: '/body/payment_instrument_id' })
      await nothingIngested(String(body.platform_order_id))
    }
  })

  test('a platform store needs platform_customer_id and billing_address (400 validation_failed naming each)', async () => {
    const noCustomer = platformCheckout(ADA_VISA)
    delete noCustomer.platform_customer_id
    assertProblem(await postCheckout(t.app, shop.auth, noCustomer), 400, 'validation_failed', { path: '/body/platform_customer_id' })
    const noAddress = platformCheckout(ADA_VISA, { billing_address: null })
    assertProblem(await postCheckout(t.app, shop.auth, noAddress), 400, 'validation_failed', { path: '/body/billing_address' })
    const neither = checkoutBody(planId, { payment_instrument_id: ADA_VISA })
    const both = await postCheckout(t.app, shop.auth, neither)
    assertProblem(both, 400, 'validation_failed', { path: '/body/platform_customer_id' })
    assertProblem(both, 400, 'validation_failed', { path: '/body/billing_address' })
    for (const body of [noCustomer, noAddress, neither]) await nothingIngested(body.platform_order_id)
  })

  test("the portal lists the subscriber's stored cards (token, brand, last 4, expiry, default; never more)", async () => {
    const [subscription] = await checkout(t.app, shop.auth, platformCheckout(ADA_VISA))
    const portal = await signInSubscriber(t.app, t.db, shop.store.id, subscription.subscriber_id)
    const response = await listInstruments(portal.auth)
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.json.gateway, 'platform')
    assert.deepEqual(response.json.data, [
      { token: ADA_VISA, brand: 'VISA', last_4: '4242', expiry_month: 4, expiry_year: 2031, is_default: true },
      { token: ADA_MASTERCARD, brand: 'MASTERCARD', last_4: '4444', expiry_month: 11, expiry_year: 2029, is_default: false },
    ])
    for (const instrument of response.json.data) assert.deepEqual(Object.keys(instrument).sort(), INSTRUMENT_FIELDS)
    assert.ok(!response.body.includes('issuer_identification_number') && !response.body.includes('billing_address'))
  })

  test("the admin lists the cards a subscription may change to: its paying customer's, as the portal does (GET .../subscriptions/{id}/payment-instruments)", async () => {
    const [subscription] = await checkout(t.app, shop.auth, platformCheckout(ADA_MASTERCARD))
    const adminList = (id: string) => call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${id}/payment-instruments`, headers: shop.auth })
    const listed = await adminList(subscription.id)
    assert.equal(listed.statusCode, 200, listed.body)
    assert.equal(listed.json.gateway, 'platform')
    assert.deepEqual(listed.json.data.map((card: any) => [card.token, card.brand, card.last_4]), [[ADA_VISA, 'VISA', '4242'], [ADA_MASTERCARD, 'MASTERCARD', '4444']])
    for (const instrument of listed.json.data) assert.deepEqual(Object.keys(instrument).sort(), INSTRUMENT_FIELDS)
    // The same list the subscriber sees, and a card of it is what the admin's change takes.
    const portal = await signInSubscriber(t.app, t.db, shop.store.id, subscription.subscriber_id)
    assert.deepEqual(listed.json, (await listInstruments(portal.auth)).json)
    const changed = await act(t.app, shop.auth, subscription.id, 'payment-instrument', { payment_instrument_id: listed.json.data[0].token })
    assert.equal(changed.statusCode, 200, changed.body)
    assert.deepEqual(changed.json.payment_instrument, { brand: 'VISA', last_4: '4242' })
    // Another store's subscription is not found; a platform that cannot say is 503 and nothing else.
    const other = await createStoreWithKey(t.db)
    assertProblem(await call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${subscription.id}/payment-instruments`, headers: other.auth }), 404, 'not_found')
    sim.failNext('getCustomerStoredInstruments', 500, { afterProcessing: false, times: 1 })
    assertProblem(await adminList(subscription.id), 503, 'platform_unavailable')
  })

  test("the portal's instrument change takes a listed card and refuses another customer's; the admin's too", async () => {
    const [subscription] = await checkout(t.app, shop.auth, platformCheckout(ADA_VISA))
    const portal = await signInSubscriber(t.app, t.db, shop.store.id, subscription.subscriber_id)

    const changed = await portalChange(portal.auth, subscription.id, ADA_MASTERCARD)
    assert.equal(changed.statusCode, 200, changed.body)
    assert.equal(changed.json.payment_instrument_id, ADA_MASTERCARD)
    assert.deepEqual(changed.json.payment_instrument, { brand: 'MASTERCARD', last_4: '4444' })
    assert.equal(changed.json.platform_customer_id, String(ADA))

    const before = await subscriptionRow(subscription.id)
    assertProblem(await portalChange(portal.auth, subscription.id, GRACE_AMEX), 400, 'invalid_payment_instrument', { path: '/body/payment_instrument_id' })
    assertProblem(await act(t.app, shop.auth, subscription.id, 'payment-instrument', { payment_instrument_id: GRACE_AMEX }), 400, 'invalid_payment_instrument', { what: 'admin' })
    assert.deepEqual(await subscriptionRow(subscription.id), before, 'a refused change changes nothing')

    const admin = await act(t.app, shop.auth, subscription.id, 'payment-instrument', { payment_instrument_id: ADA_VISA })
    assert.equal(admin.statusCode, 200, admin.body)
    assert.deepEqual(admin.json.payment_instrument, { brand: 'VISA', last_4: '4242' })
  })

  test("a gift's recipient has no customer of their own: the list is empty, and a change is checked against the buyer's customer", async () => {
    const [gift] = await checkout(t.app, shop.auth, platformCheckout(ADA_VISA, { gift: { recipient_email: `friend-${process.pid}@example.com` } }))
    const portal = await signInSubscriber(t.app, t.db, shop.store.id, gift.subscriber_id)
    const listed = await listInstruments(portal.auth)
    assert.equal(listed.statusCode, 200, listed.body)
    assert.deepEqual(listed.json, { gateway: 'platform', data: [] })
    assertProblem(await portalChange(portal.auth, gift.id, GRACE_AMEX), 400, 'invalid_payment_instrument')
  })

  test('a platform that fails (500) or rate limits past the budget gives 503 platform_unavailable and changes nothing', async () => {
    const [subscription] = await checkout(t.app, shop.auth, platformCheckout(ADA_VISA))
    const portal = await signInSubscriber(t.app, t.db, shop.store.id, subscription.subscriber_id)
    const before = await subscriptionRow(subscription.id)

    sim.failNext('getCustomerStoredInstruments', 500, { afterProcessing: false, times: 3 })
    const body = platformCheckout(ADA_MASTERCARD)
    assertProblem(await postCheckout(t.app, shop.auth, body), 503, 'platform_unavailable', { what: 'checkout' })
    await nothingIngested(body.platform_order_id)
    assertProblem(await portalChange(portal.auth, subscription.id, ADA_MASTERCARD), 503, 'platform_unavailable', { what: 'change' })
    assertProblem(await listInstruments(portal.auth), 503, 'platform_unavailable', { what: 'list' })
    assert.deepEqual(await subscriptionRow(subscription.id), before)

    // A 429 asking for longer than a person can wait: refused at once, with Retry-After.
    sim.rateLimitNext(1, { resetMs: 20_000, operation: 'getCustomerStoredInstruments' })
    const limited = await portalChange(portal.auth, subscription.id, ADA_MASTERCARD)
    assertProblem(limited, 503, 'platform_unavailable', { what: 'rate limited' })
    assert.equal(limited.headers['retry-after'], '20')
    assert.deepEqual(await subscriptionRow(subscription.id), before)

    // The same checkout, once the platform answers again, goes through (503s are not kept against an idempotency key).
    const [created] = await checkout(t.app, shop.auth, body)
    assert.deepEqual(created.payment_instrument, { brand: 'MASTERCARD', last_4: '4444' })
  })

  test('a platform that cannot be reached, or a store not connected, is 503 platform_unavailable', async () => {
    const store = { ...shop.store, gateway: 'platform' } as StoreRow
    const down = createPlatformClient({ apiUrl: 'http://127.0.0.1:9', paymentsUrl: 'http://127.0.0.1:9', timeoutMs: 1_000 })
    try {
      const unreachable = createStoredInstruments({ client: down, accessOf: async () => ({ storeHash: HASH, accessToken: ACCESS_TOKEN }) })
      await assert.rejects(unreachable.requireInstrument(store, String(ADA), ADA_VISA), (error: unknown) => error instanceof AppError && error.code === 'platform_unavailable' && error.status === 503)
      const disconnected = createStoredInstruments({ client: down, accessOf: async () => undefined })
      await assert.rejects(disconnected.list(store, String(ADA)), (error: unknown) => error instanceof AppError && error.code === 'platform_unavailable' && /not connected/.test(error.message))
    } finally {
      await down.close()
    }
  })

  test('a test-gateway store keeps its behaviour: any instrument id, no platform call, an empty portal list', async () => {
    const testShop = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, testShop.auth)
    const plan = await createPlan(t.app, testShop.auth, product.id)
    const requests = sim.requests.length
    const [subscription] = await checkout(t.app, testShop.auth, checkoutBody(plan.id))
    assert.equal(subscription.payment_instrument, null)
    const portal = await signInSubscriber(t.app, t.db, testShop.store.id, subscription.subscriber_id)
    const listed = await listInstruments(portal.auth)
    assert.equal(listed.statusCode, 200, listed.body)
    assert.deepEqual(listed.json, { gateway: 'test', data: [] })
    const changed = await portalChange(portal.auth, subscription.id, 'instr_anything_declined')
    assert.equal(changed.statusCode, 200, changed.body)
    assert.equal(sim.requests.length, requests, 'the platform was not asked')
  })

  test('every request the service sent was one the platform accepts', () => {
    // Asking for an unknown customer's instruments is the one refusal the service cannot avoid (the
    // simulator answers it 404 and records it); it is what makes the instrument unknown.
    const unknownCustomer = (v: (typeof sim.violations)[number]) => v.status === 404 && v.operation === 'getCustomerStoredInstruments' && v.url.endsWith('/v3/customers/999/stored-instruments')
    assert.equal(sim.violations.filter(unknownCustomer).length, 1)
    assert.deepEqual(sim.violations.filter((v) => !unknownCustomer(v)), [])
  })
})

describe('stored instruments as the reference shapes them', () => {
  const PAYPAL = { type: 'stored_paypal_account', token: token('paypal'), is_default: false, email: 'ada@example.com' }
  const BANK = { type: 'stored_bank_account', token: token('bank'), is_default: false, masked_account_number: '*****6789', issuer: 'BANK OF AUSTIN' }
  const CARD = { type: 'stored_card', token: token('card'), is_default: true, brand: 'VISA', expiry_month: 1, expiry_year: 2030, issuer_identification_number: '424242', last_4: '4242', billing_address: { address1: '1 Main Street' } }

  test('only what may be shown is kept: no BIN, billing address, PayPal email or masked account number', () => {
    assert.deepEqual(parseInstrument(CARD), { type: 'stored_card', token: CARD.token, is_default: true, brand: 'VISA', last_4: '4242', expiry_month: 1, expiry_year: 2030 })
    assert.deepEqual(parseInstrument(PAYPAL), { type: 'stored_paypal_account', token: PAYPAL.token, is_default: false })
    assert.deepEqual(parseInstrument(BANK), { type: 'stored_bank_account', token: BANK.token, is_default: false, issuer: 'BANK OF AUSTIN', last_4: '6789' })
    assert.equal(parseInstrument({ type: 'stored_card' }), undefined, 'no token, no instrument')
    assert.equal(parseInstrument({ type: 'gift_card', token: 'x' }), undefined)
  })

  test('a PayPal or bank account of the customer is refused: renewals pay with stored cards only', async () => {
    const client: PlatformClient = {
      call: async () => ({ sent: true, answer: { statusCode: 200, body: [PAYPAL, BANK, CARD], headers: {} }, rateLimitedFor: 0 }),
      longestCallMs: 0,
      close: async () => {},
    }
    const instruments = createStoredInstruments({ client, accessOf: async () => ({ storeHash: 'h', accessToken: 't' }) })
    const store = { id: 'store_x', gateway: 'platform' } as StoreRow
    for (const refused of [PAYPAL.token, BANK.token]) {
      await assert.rejects(instruments.requireInstrument(store, '5', refused), (error: unknown) => error instanceof AppError && error.code === 'invalid_payment_instrument')
    }
    assert.equal((await instruments.requireInstrument(store, '5', CARD.token)).last_4, '4242')
  })
})
