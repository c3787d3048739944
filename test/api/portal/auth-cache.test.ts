/**
 * What authenticates requests is kept in process for under a second (src/modules/stores/auth-cache.ts;
 * docs/contract.md, "Sign-out and caches"). A change made through this process (sign-out, a revoked
 * key, store settings, the test clock, a platform disconnect) is seen by its very next request; a
 * change made anywhere else is seen once the entry has aged out, proved here with an injected time
 * source instead of sleeping. Runs on both databases.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { KyselyPlugin, PluginTransformResultArgs, QueryResult, UnknownRow } from 'kysely'
import { sha256Hex } from '../../../src/lib/secrets.ts'
import { createAuthCache, createStore, ENTRY_TTL_MS } from '../../../src/modules/stores/index.ts'
import { createShopWithPlan } from '../../helpers/catalog.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
import { call, buildTestApp, createStoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { checkoutThroughApi } from '../../helpers/subscriptions.ts'

const sessionClaims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { jti: string; exp: number }

describe("this process's own changes are seen by its next request", () => {
  let t: TestApp
  let shop: Awaited<ReturnType<typeof createShopWithPlan>>
  let subscriberId: string

  before(async () => {
    t = await buildTestApp()
    shop = await createShopWithPlan(t)
    subscriberId = await checkoutThroughApi(t.app, shop)
  })
  after(() => t.close())

  const me = (auth: Record<string, string>) => call(t.app, { method: 'GET', url: '/api/v1/portal/me', headers: auth })
  const adminStore = (auth: Record<string, string>) => call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: auth })

  test('a session signed out is refused on the next request', async () => {
    const session = await signInSubscriber(t.app, t.db, shop.store.id, subscriberId)
    assert.equal((await me(session.auth)).statusCode, 200)
    assert.equal((await me(session.auth)).statusCode, 200, 'answered again (from memory)')
    assert.equal((await call(t.app, { method: 'POST', url: '/api/v1/portal/auth/logout', headers: session.auth })).statusCode, 204)
    assert.equal((await me(session.auth)).statusCode, 401)
  })

  test("a store's settings and test clock changed are read by the next admin request", async () => {
    assert.equal((await adminStore(shop.auth)).json.timezone, 'UTC')
    const patched = await call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: shop.auth, payload: { timezone: 'Europe/Paris' } })
    assert.equal(patched.statusCode, 200, patched.body)
    assert.equal((await adminStore(shop.auth)).json.timezone, 'Europe/Paris')

    const before = await call(t.app, { method: 'GET', url: '/api/v1/admin/test-clock', headers: shop.auth })
    const target = new Date(Date.parse(before.json.now) + 86_400_000).toISOString()
    const advanced = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to: target } })
    assert.equal(advanced.statusCode, 200, advanced.body)
    const testClock = await call(t.app, { method: 'GET', url: '/api/v1/admin/test-clock', headers: shop.auth })
    assert.equal(testClock.json.now, target)
  })

  test('an admin key revoked is refused on the next request', async () => {
    const extra = await call(t.app, { method: 'POST', url: '/api/v1/admin/api-keys', headers: shop.auth, payload: { name: 'second' } })
    assert.equal(extra.statusCode, 201, extra.body)
    const auth = { authorization: `Bearer ${extra.json.key}` }
    assert.equal((await adminStore(auth)).statusCode, 200)
    assert.equal((await adminStore(auth)).statusCode, 200, 'answered again (from memory)')
    const revoked = await call(t.app, { method: 'DELETE', url: `/api/v1/admin/api-keys/${extra.json.id}`, headers: shop.auth })
    assert.equal(revoked.statusCode, 200, revoked.body)
    assert.equal((await adminStore(auth)).statusCode, 401)
  })

  test('a store disconnected from the platform shows its billing stopped on the next request', async () => {
    const other = await createStoreWithKey(t.db)
    assert.equal((await adminStore(other.auth)).json.billing_stopped_at, null)
    const disconnected = await call(t.app, { method: 'DELETE', url: '/api/v1/admin/platform-connection', headers: other.auth })
    assert.equal(disconnected.statusCode, 200, disconnected.body)
    assert.notEqual((await adminStore(other.auth)).json.billing_stopped_at, null)
  })

  test('a change rolled back leaves the answers as they were', async () => {
    const session = await signInSubscriber(t.app, t.db, shop.store.id, subscriberId)
    await t.db.transaction().execute(async (trx) => {
      await trx.updateTable('stores').set({ name: 'Never committed' }).where('id', '=', shop.store.id).execute()
      throw new Error('roll back')
    }).catch(() => {})
    assert.notEqual((await adminStore(shop.auth)).json.name, 'Never committed')
    assert.equal((await me(session.auth)).statusCode, 200)
  })
})

/** A time source the test moves by hand; it starts well above 0 (lru-cache takes a start of 0 for "no TTL"). */
function manualTime(start = 1_000_000) {
  let now = start
  return { now: () => now, advance: (ms: number) => void (now += ms) }
}

/** Holds the results of the cache's reads until released: a read that has been answered but not yet returned. */
function gateReads() {
  let held: Array<() => void> = []
  let closed = false
  const plugin: KyselyPlugin = {
    transformQuery: ({ node }) => node,
    async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      if (closed) await new Promise<void>((resolve) => held.push(resolve))
      return result
    },
  }
  return {
    plugin,
    close: () => void (closed = true),
    async release(): Promise<void> {
      closed = false
      for (const resolve of held) resolve()
      held = []
    },
    waiting: () => held.length,
  }
}

describe('the cache itself, on a real database, with time injected', () => {
  let t: TestApp
  before(async () => {
    t = await buildTestApp()
  })
  after(() => t.close())

  test("another process's change to a store is seen once ENTRY_TTL_MS has passed since the read began, never later", async () => {
    const time = manualTime()
    const gate = gateReads()
    const cache = createAuthCache({ db: t.db.withPlugin(gate.plugin), time })
    const store = await createStore(t.db, { storeHash: `ttl-${process.pid}-${Date.now()}` })
    // The read starts at 0 and takes 300 ms to come back: its answer ages from when it was sent.
    gate.close()
    const reading = cache.store(store.id)
    while (gate.waiting() === 0) await new Promise((resolve) => setImmediate(resolve))
    time.advance(300)
    await gate.release()
    assert.equal((await reading)!.name, store.name)
    await t.db.updateTable('stores').set({ name: 'Renamed elsewhere' }).where('id', '=', store.id).execute()
    time.advance(ENTRY_TTL_MS - 300)
    assert.equal((await cache.store(store.id))!.name, store.name, 'still answered from memory within the bound')
    time.advance(1)
    assert.equal((await cache.store(store.id))!.name, 'Renamed elsewhere', `seen ${ENTRY_TTL_MS + 1} ms after the read began`)
  })

  test("another process's sign-out and key revocation are refused once ENTRY_TTL_MS has passed", async () => {
    const time = manualTime()
    const cache = createAuthCache({ db: t.db, time })
    const { store, key } = await createStoreWithKey(t.db)
    const jti = `jti-${process.pid}-${Date.now()}`
    assert.ok(await cache.portalStore(store.id, jti))
    assert.ok(await cache.adminKey(sha256Hex(key)))
    await t.db.insertInto('revoked_sessions').values({ jti, expires_at: new Date(Date.now() + 600_000) }).execute()
    await t.db.updateTable('admin_api_keys').set({ revoked_at: new Date() }).where('key_hash', '=', sha256Hex(key)).execute()
    time.advance(ENTRY_TTL_MS)
    assert.ok(await cache.portalStore(store.id, jti), 'within the bound, from memory')
    assert.ok(await cache.adminKey(sha256Hex(key)), 'within the bound, from memory')
    time.advance(1)
    assert.equal(await cache.portalStore(store.id, jti), undefined)
    assert.equal(await cache.adminKey(sha256Hex(key)), undefined)
  })

  test('a read under way when the store is forgotten does not put the old row back', async () => {
    const gate = gateReads()
    const cache = createAuthCache({ db: t.db.withPlugin(gate.plugin), time: manualTime() })
    const store = await createStore(t.db, { storeHash: `race-${process.pid}-${Date.now()}` })
    // A request reads the store; the database has answered with the old row, but the answer is not back yet.
    gate.close()
    const racing = cache.store(store.id)
    while (gate.waiting() === 0) await new Promise((resolve) => setImmediate(resolve))
    // Meanwhile this process changes the store and forgets it, as the services that write do.
    await t.db.updateTable('stores').set({ name: 'Changed' }).where('id', '=', store.id).execute()
    cache.forgetStore(store.id)
    await gate.release()
    assert.equal((await racing)!.name, store.name, 'the racing request itself saw the row as it was when it read')
    assert.equal((await cache.store(store.id))!.name, 'Changed', 'the next read is fresh, not the racing read kept')
  })

  test('the same race on a sign-out: a session check under way is not kept after the session is forgotten', async () => {
    const gate = gateReads()
    const cache = createAuthCache({ db: t.db.withPlugin(gate.plugin), time: manualTime() })
    const store = await createStore(t.db, { storeHash: `race-s-${process.pid}-${Date.now()}` })
    const jti = `jti-race-${process.pid}-${Date.now()}`
    gate.close()
    const racing = cache.portalStore(store.id, jti)
    while (gate.waiting() === 0) await new Promise((resolve) => setImmediate(resolve))
    await t.db.insertInto('revoked_sessions').values({ jti, expires_at: new Date(Date.now() + 600_000) }).execute()
    cache.forgetSession(jti)
    await gate.release()
    assert.ok(await racing, 'read before the sign-out')
    assert.equal(await cache.portalStore(store.id, jti), undefined, 'refused from the next check on')
  })

  test('the same race when only the session is asked about (the store already known): not kept after the sign-out', async () => {
    const gate = gateReads()
    const cache = createAuthCache({ db: t.db.withPlugin(gate.plugin), time: manualTime() })
    const store = await createStore(t.db, { storeHash: `race-b-${process.pid}-${Date.now()}` })
    assert.ok(await cache.portalStore(store.id, `jti-other-${process.pid}`), 'the store is now known')
    const jti = `jti-race-b-${process.pid}-${Date.now()}`
    gate.close()
    const racing = cache.portalStore(store.id, jti)
    while (gate.waiting() === 0) await new Promise((resolve) => setImmediate(resolve))
    await t.db.insertInto('revoked_sessions').values({ jti, expires_at: new Date(Date.now() + 600_000) }).execute()
    cache.forgetSession(jti)
    await gate.release()
    assert.ok(await racing, 'read before the sign-out')
    assert.equal(await cache.portalStore(store.id, jti), undefined, 'refused from the next check on')
  })

  test('sessions asked about together are each answered for themselves', async () => {
    const cache = createAuthCache({ db: t.db, time: manualTime() })
    const store = await createStore(t.db, { storeHash: `batch-${process.pid}-${Date.now()}` })
    assert.ok(await cache.portalStore(store.id, `jti-first-${process.pid}`))
    const jtis = Array.from({ length: 1_200 }, (_, i) => `jti-batch-${process.pid}-${Date.now()}-${i}`)
    const signedOut = new Set(jtis.filter((_, i) => i % 7 === 3))
    await t.db.insertInto('revoked_sessions').values([...signedOut].map((jti) => ({ jti, expires_at: new Date(Date.now() + 600_000) }))).execute()
    const answers = await Promise.all(jtis.map((jti) => cache.portalStore(store.id, jti)))
    for (const [i, jti] of jtis.entries()) assert.equal(answers[i] === undefined, signedOut.has(jti), jti)
  })

  test('admin keys asked about together are each answered with their own store, a revoked or unknown one with nothing', async () => {
    const cache = createAuthCache({ db: t.db, time: manualTime() })
    const shops = await Promise.all(Array.from({ length: 6 }, () => createStoreWithKey(t.db)))
    await t.db.updateTable('admin_api_keys').set({ revoked_at: new Date() }).where('key_hash', '=', sha256Hex(shops[2]!.key)).execute()
    const hashes = [...shops.map((shop) => sha256Hex(shop.key)), sha256Hex('sk_test_unknown'), sha256Hex(shops[0]!.key)]
    const answers = await Promise.all(hashes.map((hash) => cache.adminKey(hash)))
    for (const [i, shop] of shops.entries()) assert.equal(answers[i]?.store.id, i === 2 ? undefined : shop.store.id, `key ${i}`)
    assert.equal(answers[6], undefined, 'an unknown key')
    assert.equal(answers[7]?.store.id, shops[0]!.store.id, 'the same key twice in one turn')
  })

  test('only positive answers are kept: a key unknown a moment ago is accepted as soon as it exists', async () => {
    const cache = createAuthCache({ db: t.db, time: manualTime() })
    const { store } = await createStoreWithKey(t.db)
    const keyHash = sha256Hex(`sk_test_${process.pid}_${Date.now()}`)
    assert.equal(await cache.adminKey(keyHash), undefined)
    await t.db.insertInto('admin_api_keys').values({ id: `key_${Date.now()}`, store_id: store.id, name: 'late', key_hash: keyHash, key_prefix: 'sk_test_late' }).execute()
    assert.equal((await cache.adminKey(keyHash))?.store.id, store.id)
  })
})
