import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { SignJWT } from 'jose'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
import { assertProblem } from '../../helpers/problem.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { checkout, checkoutBody } from '../subscriptions/fixtures.ts'

/**
 * Sign-in to the merchant console through the platform's load callback (docs/contract.md, console
 * sessions): a verified signed_payload_jwt for a connected store answers 303 to /console with a
 * one-hour console session in the fragment; that session opens the admin routes for its store only,
 * and nothing else: expired, forged, other-audience and portal tokens are 401 on admin routes, and a
 * console session is 401 on portal routes.
 */

const CLIENT_ID = 'console-client-id-1'
const CLIENT_SECRET = 'console-client-secret-SECRET-4410-abc'
const JWT_ISSUER = 'subscription-billing'

function platformPayload(storeHash: string, secret = CLIENT_SECRET): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  return new SignJWT({ user: { id: 1, email: 'owner@example.com' }, owner: { id: 1, email: 'owner@example.com' }, url: '/' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    // The platform names each payload (jti): a payload opens one console session.
    .setJti(crypto.randomUUID())
    .setAudience(CLIENT_ID)
    .setIssuer('bc')
    .setSubject(`stores/${storeHash}`)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(new TextEncoder().encode(secret))
}

describe('console sessions from the platform load callback', () => {
  let t: TestApp
  let shop: StoreWithKey
  let other: StoreWithKey
  let consoleKey: Uint8Array

  before(async () => {
    t = await buildTestApp({ env: { PLATFORM_CLIENT_ID: CLIENT_ID, PLATFORM_CLIENT_SECRET: CLIENT_SECRET, JWT_ISSUER } })
    shop = await createStoreWithKey(t.db, { storeHash: `cons${Date.now().toString(36)}` })
    other = await createStoreWithKey(t.db, { storeHash: `othr${Date.now().toString(36)}` })
    for (const s of [shop, other]) {
      assert.equal((await call(t.app, { method: 'PUT', url: '/api/v1/admin/platform-connection', headers: s.auth, payload: { access_token: 'store-api-token-SECRET-0001' } })).statusCode, 200)
    }
  })
  after(() => t.close())

  const load = async (storeHash: string) => call(t.app, { method: 'GET', url: `/platform/load?signed_payload_jwt=${encodeURIComponent(await platformPayload(storeHash))}` })
  const sessionOf = (location: string) => /^\/console#console_session=([A-Za-z0-9_.-]+)$/.exec(location)?.[1]
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
  const adminStore = (token: string) => call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: bearer(token) })
  /** The kept signing key (the test database keeps it in service_secrets once the first session was issued). */
  const keptKey = async () => {
    const row = await t.db.selectFrom('service_secrets').select('value').where('name', '=', 'console_session_signing_key').executeTakeFirstOrThrow()
    return new TextEncoder().encode(row.value)
  }
  const forge = async (claims: { sub?: string; aud?: string; iss?: string; iat?: number; exp?: number }, key: Uint8Array = consoleKey, alg = 'HS256') => {
    const now = Math.floor(Date.now() / 1000)
    const jwt = new SignJWT({}).setProtectedHeader({ alg, typ: 'JWT' }).setJti(crypto.randomUUID()).setIssuedAt(claims.iat ?? now).setExpirationTime(claims.exp ?? now + 600)
    if (claims.sub !== undefined) jwt.setSubject(claims.sub)
    jwt.setAudience(claims.aud ?? 'console').setIssuer(claims.iss ?? JWT_ISSUER)
    return jwt.sign(key)
  }

  test('load answers 303 to /console with a console session in the fragment, never in a query string; it signs into the admin routes as that store', async () => {
    const response = await load(shop.store.store_hash)
    assert.equal(response.statusCode, 303, response.body)
    const location = String(response.headers.location)
    assert.ok(!location.includes('?'), 'nothing in a query string')
    const token = sessionOf(location)
    assert.ok(token, `location ${location}`)
    assert.equal(response.headers['cache-control'], 'no-store')
    assert.equal(response.headers['referrer-policy'], 'no-referrer')
    assert.match(String(response.headers['content-security-policy']), /frame-ancestors https:\/\/\*\.bigcommerce\.com https:\/\/\*\.mybigcommerce\.com/)
    assert.ok(!t.logs.join('\n').includes(token), 'the session is never logged')

    const [, payload] = token.split('.')
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as Record<string, unknown>
    assert.equal(claims.aud, 'console')
    assert.equal(claims.sub, shop.store.id)
    assert.ok((claims.exp as number) - (claims.iat as number) <= 3600, 'at most an hour')

    const store = await adminStore(token)
    assert.equal(store.statusCode, 200, store.body)
    assert.equal(store.json.id, shop.store.id)
    // Its store only: another store's subscription is not found through it.
    const product = await createProduct(t.app, other.auth)
    const plan = await createPlan(t.app, other.auth, product.id)
    const [theirs] = await checkout(t.app, other.auth, checkoutBody(plan.id))
    assertProblem(await call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${theirs!.id}`, headers: bearer(token) }), 404, 'not_found')
    // It is no admin key: the key list marks none as the current one.
    const keys = await call(t.app, { method: 'GET', url: '/api/v1/admin/api-keys', headers: bearer(token) })
    assert.equal(keys.statusCode, 200, keys.body)
    assert.ok(keys.json.data.every((key: { current: boolean }) => !key.current))
    consoleKey = await keptKey()
  })

  test('an expired, forged, other-audience, other-issuer, too long or unknown-store console session is 401; so is a portal token on admin routes', async () => {
    const now = Math.floor(Date.now() / 1000)
    const sub = shop.store.id
    const cases: [string, Promise<string> | string][] = [
      ['expired', forge({ sub, iat: now - 7200, exp: now - 3600 })],
      ['forged (another key)', forge({ sub }, new TextEncoder().encode('not-the-kept-console-session-key-0000'))],
      ['another audience (portal)', forge({ sub, aud: 'portal' })],
      ['another issuer', forge({ sub, iss: 'elsewhere' })],
      ['longer than an hour', forge({ sub, iat: now, exp: now + 7200 })],
      ['HS512', forge({ sub }, consoleKey, 'HS512')],
      ['no store', forge({})],
      ['an unknown store', forge({ sub: 'store_00000000000000000000000000' })],
      ['unsigned', `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub, aud: 'console', iss: JWT_ISSUER, iat: now, exp: now + 60, jti: 'x' })).toString('base64url')}.`],
    ]
    for (const [what, token] of cases) assertProblem(await adminStore(await token), 401, 'invalid_token', { what })

    const product = await createProduct(t.app, shop.auth)
    const plan = await createPlan(t.app, shop.auth, product.id)
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(plan.id))
    const portal = await signInSubscriber(t.app, t.db, shop.store.id, subscription!.subscriber_id)
    assert.equal((await call(t.app, { method: 'GET', url: '/api/v1/portal/me', headers: portal.auth })).statusCode, 200)
    assertProblem(await adminStore(portal.accessToken), 401, 'invalid_token', { what: 'a portal session on an admin route' })
  })

  test('a console session is refused by portal routes; an admin key still signs in as before', async () => {
    const token = sessionOf(String((await load(shop.store.store_hash)).headers.location))!
    for (const url of ['/api/v1/portal/me', '/api/v1/portal/subscriptions']) {
      assertProblem(await call(t.app, { method: 'GET', url, headers: bearer(token) }), 401, 'invalid_token', { what: url })
    }
    assert.equal((await adminStore(shop.key)).statusCode, 200)
  })

  test('a store that is not connected gets the page, and no session', async () => {
    const lone = await createStoreWithKey(t.db, { storeHash: `lone${Date.now().toString(36)}` })
    const response = await load(lone.store.store_hash)
    assert.equal(response.statusCode, 200)
    assert.equal(response.headers.location, undefined)
    assert.match(response.body, /not connected/)
  })
})
