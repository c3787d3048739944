import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { SignJWT } from 'jose'
import { assertProblem } from '../../helpers/problem.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'

/**
 * A console session ends (docs/contract.md, console sessions): at sign-out, when the app is
 * uninstalled, when the store's connection is removed; a load payload opens one session, never a
 * second; and a console session cannot mint an admin key that would outlive it. Each case failed
 * before: the session stayed good for its whole hour whatever happened to the store.
 */

const CLIENT_ID = 'ends-client-id-1'
const CLIENT_SECRET = 'ends-client-secret-SECRET-5510-abc'
const TOKEN = 'store-api-token-SECRET-0002'

function platformPayload(storeHash: string, jti: string | null = crypto.randomUUID()): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  const jwt = new SignJWT({ user: { id: 1, email: 'owner@example.com' }, owner: { id: 1, email: 'owner@example.com' }, url: '/' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setAudience(CLIENT_ID)
    .setIssuer('bc')
    .setSubject(`stores/${storeHash}`)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
  if (jti !== null) jwt.setJti(jti)
  return jwt.sign(new TextEncoder().encode(CLIENT_SECRET))
}

describe('console sessions end', () => {
  let t: TestApp
  let seq = 0

  before(async () => {
    t = await buildTestApp({ env: { PLATFORM_CLIENT_ID: CLIENT_ID, PLATFORM_CLIENT_SECRET: CLIENT_SECRET } })
  })
  after(() => t.close())

  async function connectedStore(): Promise<StoreWithKey> {
    const shop = await createStoreWithKey(t.db, { storeHash: `ends${Date.now().toString(36)}${++seq}` })
    const connected = await call(t.app, { method: 'PUT', url: '/api/v1/admin/platform-connection', headers: shop.auth, payload: { access_token: TOKEN } })
    assert.equal(connected.statusCode, 200, connected.body)
    return shop
  }
  const loadWith = (payload: string) => call(t.app, { method: 'GET', url: `/platform/load?signed_payload_jwt=${encodeURIComponent(payload)}` })
  async function open(shop: StoreWithKey): Promise<string> {
    const response = await loadWith(await platformPayload(shop.store.store_hash))
    assert.equal(response.statusCode, 303, response.body)
    return /console_session=([A-Za-z0-9_.-]+)$/.exec(String(response.headers.location))![1]!
  }
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
  const storeWith = (token: string) => call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: bearer(token) })

  test('sign-out ends the session at once: 204, then 401 on every admin route; another session of the store goes on', async () => {
    const shop = await connectedStore()
    const session = await open(shop)
    const other = await open(shop)
    assert.equal((await storeWith(session)).statusCode, 200)
    const out = await call(t.app, { method: 'DELETE', url: '/api/v1/admin/console-session', headers: bearer(session) })
    assert.equal(out.statusCode, 204, out.body)
    assertProblem(await storeWith(session), 401, 'invalid_token')
    assertProblem(await call(t.app, { method: 'DELETE', url: '/api/v1/admin/console-session', headers: bearer(session) }), 401, 'invalid_token')
    assert.equal((await storeWith(other)).statusCode, 200, 'only the session signed out ends')
    // An admin key is not a session: nothing to sign out.
    assertProblem(await call(t.app, { method: 'DELETE', url: '/api/v1/admin/console-session', headers: shop.auth }), 409, 'invalid_state')
  })

  test('uninstalling the app ends every console session of the store, not another store\'s', async () => {
    const shop = await connectedStore()
    const neighbour = await connectedStore()
    const sessions = [await open(shop), await open(shop)]
    const theirs = await open(neighbour)
    const uninstalled = await call(t.app, { method: 'GET', url: `/platform/uninstall?signed_payload_jwt=${encodeURIComponent(await platformPayload(shop.store.store_hash))}` })
    assert.equal(uninstalled.statusCode, 204, uninstalled.body)
    for (const session of sessions) assertProblem(await storeWith(session), 401, 'invalid_token')
    assert.equal((await storeWith(theirs)).statusCode, 200)
    // Installed and connected again, the old sessions stay ended; a new load opens a new one.
    assert.equal((await call(t.app, { method: 'PUT', url: '/api/v1/admin/platform-connection', headers: shop.auth, payload: { access_token: TOKEN } })).statusCode, 200)
    assertProblem(await storeWith(sessions[0]!), 401, 'invalid_token')
    assert.equal((await storeWith(await open(shop))).statusCode, 200)
  })

  test('removing the store\'s connection ends its console sessions, even the one that removed it', async () => {
    const shop = await connectedStore()
    const session = await open(shop)
    const removed = await call(t.app, { method: 'DELETE', url: '/api/v1/admin/platform-connection', headers: bearer(session) })
    assert.equal(removed.statusCode, 200, removed.body)
    assertProblem(await storeWith(session), 401, 'invalid_token')
  })

  test('a load payload opens one session: the same payload again is refused, and so is one without a jti replayed', async () => {
    const shop = await connectedStore()
    const payload = await platformPayload(shop.store.store_hash)
    assert.equal((await loadWith(payload)).statusCode, 303)
    assertProblem(await loadWith(payload), 401, 'invalid_token')
    const anonymous = await platformPayload(shop.store.store_hash, null)
    assert.equal((await loadWith(anonymous)).statusCode, 303)
    assertProblem(await loadWith(anonymous), 401, 'invalid_token')
    const sessions = await t.db.selectFrom('console_sessions').select('jti').where('store_id', '=', shop.store.id).execute()
    assert.equal(sessions.length, 2, 'one session per payload')
  })

  test('a console session cannot create an admin key (403); an admin key can', async () => {
    const shop = await connectedStore()
    const session = await open(shop)
    assertProblem(await call(t.app, { method: 'POST', url: '/api/v1/admin/api-keys', headers: bearer(session), payload: { name: 'outlive the app' } }), 403, 'forbidden')
    const keys = await t.db.selectFrom('admin_api_keys').select('name').where('store_id', '=', shop.store.id).execute()
    assert.ok(!keys.some((key) => key.name === 'outlive the app'))
    const made = await call(t.app, { method: 'POST', url: '/api/v1/admin/api-keys', headers: shop.auth, payload: { name: 'erp sync' } })
    assert.equal(made.statusCode, 201, made.body)
  })

  test('a session whose row is gone (issued before sessions were kept, or purged) is refused, whatever its signature', async () => {
    const shop = await connectedStore()
    const session = await open(shop)
    await t.db.deleteFrom('console_sessions').where('store_id', '=', shop.store.id).execute()
    assertProblem(await storeWith(session), 401, 'invalid_token')
  })

  test('an uninstall landing between the load\'s connected check and the session it opens leaves no working session', async () => {
    const shop = await connectedStore()
    const connections = t.services.modules.platform.service.connections
    const original = connections.status
    connections.status = async (storeId: string) => {
      const answer = await original(storeId)
      connections.status = original
      // The uninstall callback is handled now, on another request.
      const uninstalled = await call(t.app, { method: 'GET', url: `/platform/uninstall?signed_payload_jwt=${encodeURIComponent(await platformPayload(shop.store.store_hash))}` })
      assert.equal(uninstalled.statusCode, 204)
      return answer
    }
    let loaded
    try {
      loaded = await loadWith(await platformPayload(shop.store.store_hash))
    } finally {
      connections.status = original
    }
    const session = /console_session=([A-Za-z0-9_.-]+)$/.exec(String(loaded.headers.location ?? ''))?.[1]
    if (session) assertProblem(await storeWith(session), 401, 'invalid_token')
    const open = await t.db.selectFrom('console_sessions').select('jti').where('store_id', '=', shop.store.id).where('ended_at', 'is', null).execute()
    assert.deepEqual(open, [], 'no open session of an uninstalled store')
  })

  test('a console session cannot get a key back by replaying an Idempotency-Key; no answer holding a key is stored', async () => {
    const shop = await connectedStore()
    const made = await call(t.app, { method: 'POST', url: '/api/v1/admin/api-keys', headers: { ...shop.auth, 'idempotency-key': 'erp-sync-key-1' }, payload: { name: 'erp sync' } })
    assert.equal(made.statusCode, 201, made.body)
    const stored = await t.db.selectFrom('idempotency_keys').select('response_body').where('key', '=', 'erp-sync-key-1').execute()
    assert.ok(!stored.some((row) => String(row.response_body).includes(made.json.key)), 'the key is stored only as its hash')
    const session = await open(shop)
    const replay = await call(t.app, { method: 'POST', url: '/api/v1/admin/api-keys', headers: { ...bearer(session), 'idempotency-key': 'erp-sync-key-1' }, payload: { name: 'erp sync' } })
    assertProblem(replay, 403, 'forbidden')
    assert.ok(!replay.body.includes(made.json.key))
  })

  test('a payload without a jti replayed with its signature written another way (padding, spare bits, spaces) is the same payload', async () => {
    const shop = await connectedStore()
    const payload = await platformPayload(shop.store.store_hash, null)
    assert.equal((await loadWith(payload)).statusCode, 303)
    for (const variant of [`${payload}=`, `${payload} `, payload.replace(/\.([^.]*)$/, (_, sig: string) => `.${sig.slice(0, 10)} ${sig.slice(10)}`)]) {
      const answer = await loadWith(variant)
      assert.notEqual(answer.statusCode, 303, `opened a second session with ${JSON.stringify(variant.slice(-12))}`)
    }
  })
})
