import assert from 'node:assert/strict'
import { createDecipheriv, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, beforeEach, describe, test } from 'node:test'
import { SignJWT } from 'jose'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { assertInvalidField, assertProblem } from '../../helpers/problem.ts'
import { createTestRenewals } from '../../helpers/billing.ts'
import { fixedClock } from '../../../src/lib/clock.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { checkout, checkoutBody } from '../subscriptions/fixtures.ts'

const CLIENT_ID = 'client-id-4471'
const CLIENT_SECRET = 'client-secret-SECRET-9923-abcdef'
const TOKEN_KEY = randomBytes(32)
const APP_TOKEN = 'app-access-token-SECRET-5510'
const API_ACCOUNT_TOKEN = 'api-account-token-SECRET-7781'
const CODE = 'auth-code-SECRET-3301'
const SCOPES = 'store_v2_orders store_v2_transactions_read_only store_payments_access_token_create'
const PUBLIC_URL = 'https://billing.example.test'

interface Seen { method: string; url: string; headers: IncomingMessage['headers']; body: any }

/** Plays the platform's login host: POST /oauth2/token trades a code for a store's token. */
function startLoginHost() {
  const seen: Seen[] = []
  const server = createServer(async (req, res) => {
    let raw = ''
    for await (const chunk of req) raw += chunk
    const body = raw ? JSON.parse(raw) : undefined
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body })
    const reply = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(payload))
    }
    if (req.method !== 'POST' || req.url !== '/oauth2/token') return reply(404, { error: 'not found' })
    if (body?.code !== CODE || body?.client_secret !== CLIENT_SECRET) return reply(400, { error: 'invalid_grant' })
    reply(200, {
      access_token: APP_TOKEN,
      scope: body.scope,
      user: { id: 1, username: 'owner', email: 'owner@example.com' },
      owner: { id: 1, username: 'owner', email: 'owner@example.com' },
      context: body.context,
      account_uuid: 'acct-1',
    })
  })
  return { server, seen }
}

async function jwt(claims: Record<string, unknown>, options: { secret?: string; alg?: string; expiresIn?: string | number; notBefore?: number } = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  return new SignJWT({ user: { id: 1, email: 'owner@example.com', locale: 'en' }, owner: { id: 1, email: 'owner@example.com' }, url: '/', channel_id: null, ...claims })
    .setProtectedHeader({ alg: options.alg ?? 'HS256', typ: 'JWT' })
    .setIssuedAt(now)
    .setNotBefore(options.notBefore ?? now)
    .setExpirationTime(options.expiresIn ?? now + 86_400)
    .setJti(crypto.randomUUID())
    .sign(new TextEncoder().encode(options.secret ?? CLIENT_SECRET))
}

/** The stored form, as docs/contract.md describes it: base64(iv 12 bytes | ciphertext | tag 16 bytes), the store id as additional data. */
function decrypt(stored: string, storeId: string): string {
  const bytes = Buffer.from(stored, 'base64')
  const decipher = createDecipheriv('aes-256-gcm', TOKEN_KEY, bytes.subarray(0, 12))
  decipher.setAAD(Buffer.from(storeId))
  decipher.setAuthTag(bytes.subarray(bytes.length - 16))
  return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString('utf8')
}

describe('connecting a store to BigCommerce', () => {
  const login = startLoginHost()
  let t: TestApp

  before(async () => {
    login.server.listen(0, '127.0.0.1')
    await once(login.server, 'listening')
    t = await buildTestApp({
      env: {
        PLATFORM_LOGIN_URL: `http://127.0.0.1:${(login.server.address() as AddressInfo).port}`,
        PLATFORM_CLIENT_ID: CLIENT_ID,
        PLATFORM_CLIENT_SECRET: CLIENT_SECRET,
        PLATFORM_TOKEN_KEY: TOKEN_KEY.toString('base64'),
        PLATFORM_API_TIMEOUT_MS: '2000',
        PUBLIC_URL,
      },
    })
  })
  beforeEach(() => {
    login.seen.length = 0
  })
  after(async () => {
    await t.close()
    login.server.closeAllConnections()
    login.server.close()
  })

  const connectionRow = (storeId: string) => t.db.selectFrom('platform_connections').selectAll().where('store_id', '=', storeId).executeTakeFirst()
  const install = (hash: string, code = CODE) =>
    call(t.app, { method: 'GET', url: `/platform/auth?code=${encodeURIComponent(code)}&scope=${encodeURIComponent(SCOPES)}&context=${encodeURIComponent(`stores/${hash}`)}&account_uuid=acct-1` })
  const load = (token: string) => call(t.app, { method: 'GET', url: `/platform/load?signed_payload_jwt=${encodeURIComponent(token)}` })
  const uninstall = (token: string) => call(t.app, { method: 'GET', url: `/platform/uninstall?signed_payload_jwt=${encodeURIComponent(token)}` })
  const getConnection = (shop: StoreWithKey) => call(t.app, { method: 'GET', url: '/api/v1/admin/platform-connection', headers: shop.auth })
  const putConnection = (shop: StoreWithKey, payload: unknown) => call(t.app, { method: 'PUT', url: '/api/v1/admin/platform-connection', headers: shop.auth, payload: payload as object })
  const assertNoSecretLogged = () => {
    const all = t.logs.join('\n')
    for (const secret of [APP_TOKEN, API_ACCOUNT_TOKEN, CODE, CLIENT_SECRET]) assert.ok(!all.includes(secret), `${secret.slice(0, 10)}... appears in the log`)
  }

  test('install exchanges the code at the login host and keeps the token encrypted; an unknown store is created live', async () => {
    const hash = `inst${Date.now().toString(36)}`
    const response = await install(hash)
    assert.equal(response.statusCode, 200, response.body)
    assert.match(String(response.headers['content-type']), /^text\/html/)
    assert.ok(!response.body.includes(APP_TOKEN))

    assert.equal(login.seen.length, 1)
    const [exchange] = login.seen as [Seen]
    assert.match(String(exchange.headers['content-type']), /^application\/json/)
    assert.deepEqual(exchange.body, {
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      code: CODE,
      scope: SCOPES,
      grant_type: 'authorization_code',
      redirect_uri: `${PUBLIC_URL}/platform/auth`,
      context: `stores/${hash}`,
    })

    const store = await t.db.selectFrom('stores').selectAll().where('store_hash', '=', hash).executeTakeFirstOrThrow()
    assert.deepEqual([store.mode, store.gateway], ['live', 'platform'])
    const row = await connectionRow(store.id)
    assert.ok(row?.access_token_ciphertext)
    assert.ok(!row.access_token_ciphertext.includes(APP_TOKEN) && !JSON.stringify(row).includes(APP_TOKEN), 'the token is not stored in the clear')
    assert.equal(decrypt(row.access_token_ciphertext, store.id), APP_TOKEN)
    assert.deepEqual([row.source, row.scopes, row.key_version, row.uninstalled_at], ['app', SCOPES, 1, null])

    // Installing again (new scopes, a new token) replaces the stored ciphertext with a fresh IV.
    assert.equal((await install(hash)).statusCode, 200)
    const again = await connectionRow(store.id)
    assert.notEqual(again!.access_token_ciphertext, row.access_token_ciphertext)
    assert.equal(decrypt(again!.access_token_ciphertext!, store.id), APP_TOKEN)
    assertNoSecretLogged()
  })

  test('install on an existing test store keeps its mode; a code the login host refuses connects nothing', async () => {
    const shop = await createStoreWithKey(t.db, { storeHash: `test${Date.now().toString(36)}` })
    assert.equal((await install(shop.store.store_hash)).statusCode, 200)
    const store = await t.db.selectFrom('stores').selectAll().where('id', '=', shop.store.id).executeTakeFirstOrThrow()
    assert.deepEqual([store.mode, store.gateway], ['test', 'test'])
    assert.equal((await getConnection(shop)).json.connected, true)

    const other = await createStoreWithKey(t.db, { storeHash: `refused${Date.now().toString(36)}` })
    const refused = await install(other.store.store_hash, 'some-other-code')
    assertProblem(refused, 401, 'invalid_token')
    assert.equal(await connectionRow(other.store.id), undefined)
    assertNoSecretLogged()
  })

  test('load with a valid signed payload answers a page with strict headers; forged, expired, foreign and malformed payloads are refused', async () => {
    const shop = await createStoreWithKey(t.db, { storeHash: `load${Date.now().toString(36)}` })
    await install(shop.store.store_hash)
    const sub = `stores/${shop.store.store_hash}`
    const ok = await load(await jwt({ aud: CLIENT_ID, iss: 'bc', sub }))
    // A connected store goes on into the console, signed in (test/api/console/console-session.test.ts).
    assert.equal(ok.statusCode, 303, ok.body)
    assert.match(String(ok.headers.location), /^\/console#console_session=[\w-]+\.[\w-]+\.[\w-]+$/)
    assert.match(String(ok.headers['content-security-policy']), /default-src 'none'/)
    assert.equal(ok.headers['referrer-policy'], 'no-referrer')
    assert.equal(ok.headers['cache-control'], 'no-store')

    const now = Math.floor(Date.now() / 1000)
    const cases: [string, Promise<string> | string, number, string][] = [
      ['another secret', jwt({ aud: CLIENT_ID, iss: 'bc', sub }, { secret: 'not-the-client-secret-at-all-000' }), 401, 'invalid_token'],
      ['expired', jwt({ aud: CLIENT_ID, iss: 'bc', sub }, { expiresIn: now - 3600, notBefore: now - 7200 }), 401, 'invalid_token'],
      ['not yet valid', jwt({ aud: CLIENT_ID, iss: 'bc', sub }, { notBefore: now + 3600 }), 401, 'invalid_token'],
      ['HS512', jwt({ aud: CLIENT_ID, iss: 'bc', sub }, { alg: 'HS512' }), 401, 'invalid_token'],
      ['not a JWT', 'not.a.jwt', 401, 'invalid_token'],
      ['unsigned', `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ aud: CLIENT_ID, iss: 'bc', sub, exp: now + 60 })).toString('base64url')}.`, 401, 'invalid_token'],
      ['another app', jwt({ aud: 'some-other-client', iss: 'bc', sub }), 403, 'forbidden'],
      ['another issuer', jwt({ aud: CLIENT_ID, iss: 'elsewhere', sub }), 403, 'forbidden'],
      ['no store', jwt({ aud: CLIENT_ID, iss: 'bc', sub: 'users/12' }), 403, 'forbidden'],
      ['a malformed store', jwt({ aud: CLIENT_ID, iss: 'bc', sub: 'stores/../x' }), 403, 'forbidden'],
    ]
    for (const [what, token, status, code] of cases) assertProblem(await load(await token), status, code, { what })
    for (const [what, token, status, code] of cases) assertProblem(await uninstall(await token), status, code, { what: `uninstall, ${what}` })
    assert.equal((await getConnection(shop)).json.connected, true, 'no refused uninstall disconnected the store')
  })

  test('uninstall deletes the token and stops the store billing; its data stays', async () => {
    const shop = await createStoreWithKey(t.db, { storeHash: `uninst${Date.now().toString(36)}` })
    await install(shop.store.store_hash)
    const product = await createProduct(t.app, shop.auth)
    const plan = await createPlan(t.app, shop.auth, product.id)
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(plan.id))

    const response = await uninstall(await jwt({ aud: CLIENT_ID, iss: 'bc', sub: `stores/${shop.store.store_hash}` }))
    assert.ok(response.statusCode === 200 || response.statusCode === 204, response.body)
    const row = await connectionRow(shop.store.id)
    assert.equal(row?.access_token_ciphertext, null)
    assert.ok(row?.uninstalled_at instanceof Date)
    const connection = await getConnection(shop)
    assert.equal(connection.json.connected, false)
    assert.equal(typeof connection.json.uninstalled_at, 'string')
    const store = await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: shop.auth })
    assert.equal(typeof store.json.billing_stopped_at, 'string')

    // Neither the test clock nor the renewal engine bills the store any more.
    const farAhead = new Date(Date.parse(subscription.next_charge_at) + 90 * 86_400_000).toISOString()
    const advanced = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to: farAhead } })
    assert.equal(advanced.statusCode, 200, advanced.body)
    await createTestRenewals(t.db, fixedClock(farAhead)).runDue({ storeId: shop.store.id })
    await createTestRenewals(t.db, fixedClock(farAhead)).runDue()
    const charges = await t.db.selectFrom('charges').select('id').where('store_id', '=', shop.store.id).execute()
    assert.equal(charges.length, 0, 'no charge was attempted')
    const attempts = await t.db.selectFrom('test_gateway_charges').select('idempotency_key').where('store_id', '=', shop.store.id).execute()
    assert.equal(attempts.length, 0)
    const kept = await call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${subscription.id}`, headers: shop.auth })
    assert.equal(kept.statusCode, 200)
    assert.equal(kept.json.status, subscription.status)

    // An uninstall for a store this service never heard of changes nothing.
    const unknown = await uninstall(await jwt({ aud: CLIENT_ID, iss: 'bc', sub: 'stores/neverseen0' }))
    assert.ok(unknown.statusCode === 200 || unknown.statusCode === 204)

    // Connecting again resumes billing.
    assert.equal((await install(shop.store.store_hash)).statusCode, 200)
    const resumed = await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: shop.auth })
    assert.equal(resumed.json.billing_stopped_at, null)
    assertNoSecretLogged()
  })

  test('PUT and GET /admin/platform-connection keep an API account token without ever showing it; DELETE disconnects', async () => {
    const shop = await createStoreWithKey(t.db)
    const empty = await getConnection(shop)
    assert.equal(empty.statusCode, 200, empty.body)
    assert.deepEqual(empty.json, { object: 'platform_connection', connected: false })

    const put = await putConnection(shop, { access_token: API_ACCOUNT_TOKEN })
    assert.equal(put.statusCode, 200, put.body)
    assert.equal(put.json.object, 'platform_connection')
    assert.equal(put.json.connected, true)
    assert.equal(put.json.source, 'api_account')
    assert.equal(typeof put.json.connected_at, 'string')
    const got = await getConnection(shop)
    assert.deepEqual(got.json, put.json)
    for (const response of [put, got]) assert.ok(!response.body.includes(API_ACCOUNT_TOKEN))
    const row = await connectionRow(shop.store.id)
    assert.equal(decrypt(row!.access_token_ciphertext!, shop.store.id), API_ACCOUNT_TOKEN)

    for (const [what, payload] of [
      ['empty', { access_token: '' }],
      ['spaces inside', { access_token: 'abc def' }],
      ['control character', { access_token: 'abc\u0007def' }],
      ['too long', { access_token: 'a'.repeat(1025) }],
      ['not a string', { access_token: 12 }],
      ['missing', {}],
      ['unknown field', { access_token: 'abc', scopes: 'x' }],
    ] as const) {
      assertProblem(await putConnection(shop, payload), 400, 'validation_failed', { what })
    }

    const deleted = await call(t.app, { method: 'DELETE', url: '/api/v1/admin/platform-connection', headers: shop.auth })
    assert.equal(deleted.statusCode, 200, deleted.body)
    assert.equal(deleted.json.connected, false)
    assert.equal((await connectionRow(shop.store.id))?.access_token_ciphertext, null)
    assertNoSecretLogged()
  })

  test('store setting gateway: test stores choose, live stores always use the platform', async () => {
    const shop = await createStoreWithKey(t.db)
    const patch = (who: StoreWithKey, payload: unknown) => call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: who.auth, payload: payload as object })
    assert.equal((await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: shop.auth })).json.gateway, 'test')
    const toPlatform = await patch(shop, { gateway: 'platform' })
    assert.equal(toPlatform.statusCode, 200, toPlatform.body)
    assert.equal(toPlatform.json.gateway, 'platform')
    assert.equal((await patch(shop, { gateway: 'test' })).json.gateway, 'test')
    assertInvalidField(await patch(shop, { gateway: 'stripe' }), '/body/gateway')

    const live = await createStoreWithKey(t.db, { mode: 'live' })
    assert.equal((await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: live.auth })).json.gateway, 'platform')
    assertInvalidField(await patch(live, { gateway: 'test' }), '/body/gateway')
    assert.equal((await patch(live, { gateway: 'platform' })).statusCode, 200)
  })
})

describe('the app routes without PLATFORM_CLIENT_ID and PLATFORM_CLIENT_SECRET', () => {
  let t: TestApp
  before(async () => {
    t = await buildTestApp()
  })
  after(() => t.close())

  test('answer 503 naming what to configure', async () => {
    for (const url of ['/platform/auth?code=x&scope=y&context=stores/abc', '/platform/load?signed_payload_jwt=a.b.c', '/platform/uninstall?signed_payload_jwt=a.b.c']) {
      const response = await call(t.app, { method: 'GET', url })
      assertProblem(response, 503, 'service_unavailable', { what: url })
      assert.match(response.json.detail, /PLATFORM_CLIENT_ID/)
    }
  })

  test('the app routes are not part of the versioned API document', async () => {
    const document = await call(t.app, { method: 'GET', url: '/api/v1/openapi.json' })
    assert.equal(document.statusCode, 200)
    assert.ok(!Object.keys(document.json.paths).some((path) => path.startsWith('/platform')))
    assert.ok(document.json.paths['/api/v1/admin/platform-connection'])
  })
})
