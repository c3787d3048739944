/**
 * The authentication cache (src/modules/stores/auth-cache.ts) answers from memory only while the
 * database says nothing changed: every change below is made straight in the database, the way another
 * module (or another process) would, through the query builder, inside a WITH or as raw SQL, and the
 * very next request must see it. Runs on both databases.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import { sha256Hex } from '../../../src/lib/secrets.ts'
import { LOCAL_WRITE_QUIET_MS } from '../../../src/modules/stores/index.ts'
import { createShopWithPlan } from '../../helpers/catalog.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
import { call, buildTestApp, type TestApp } from '../../helpers/test-app.ts'
import { checkoutThroughApi } from '../../helpers/subscriptions.ts'

describe('the authentication cache forgets what changed', () => {
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

  test('a session signed out in the database is refused on the next request', async () => {
    const session = await signInSubscriber(t.app, t.db, shop.store.id, subscriberId)
    assert.equal((await me(session.auth)).statusCode, 200)
    assert.equal((await me(session.auth)).statusCode, 200, 'answered again (from memory)')
    const { jti, exp } = JSON.parse(Buffer.from(session.accessToken.split('.')[1]!, 'base64url').toString()) as { jti: string; exp: number }
    await t.db.insertInto('revoked_sessions').values({ jti, expires_at: new Date(exp * 1000) }).execute()
    assert.equal((await me(session.auth)).statusCode, 401)
  })

  test('a store changed in the database is read fresh by the next portal and admin request', async () => {
    const session = await signInSubscriber(t.app, t.db, shop.store.id, subscriberId)
    assert.equal((await adminStore(shop.auth)).json.timezone, 'UTC')
    assert.equal((await me(session.auth)).statusCode, 200)
    await t.db.updateTable('stores').set({ timezone: 'Europe/Paris' }).where('id', '=', shop.store.id).execute()
    assert.equal((await adminStore(shop.auth)).json.timezone, 'Europe/Paris')
    const clock = new Date('2031-05-06T07:08:09.000Z')
    await t.db.updateTable('stores').set({ test_clock_now: clock }).where('id', '=', shop.store.id).execute()
    const testClock = await call(t.app, { method: 'GET', url: '/api/v1/admin/test-clock', headers: shop.auth })
    assert.equal(testClock.json.now, clock.toISOString())
    await t.db.updateTable('stores').set({ timezone: 'UTC', test_clock_now: null }).where('id', '=', shop.store.id).execute()
  })

  /** A key's first use records it (a write to admin_api_keys): wait out the quiet time after it, so the key is cached. */
  async function cachedKey(name: string): Promise<{ key: string; auth: Record<string, string> }> {
    const extra = await call(t.app, { method: 'POST', url: '/api/v1/admin/api-keys', headers: shop.auth, payload: { name } })
    assert.equal(extra.statusCode, 201, extra.body)
    const auth = { authorization: `Bearer ${extra.json.key}` }
    assert.equal((await adminStore(auth)).statusCode, 200)
    await sleep(LOCAL_WRITE_QUIET_MS + 50)
    assert.equal((await adminStore(auth)).statusCode, 200)
    assert.equal((await adminStore(auth)).statusCode, 200, 'answered again (from memory)')
    return { key: extra.json.key, auth }
  }

  test('an admin key revoked in the database is refused on the next request', async () => {
    const { key, auth } = await cachedKey('second')
    await t.db.updateTable('admin_api_keys').set({ revoked_at: new Date() }).where('key_hash', '=', sha256Hex(key)).execute()
    assert.equal((await adminStore(auth)).statusCode, 401)
  })

  test('an admin key revoked by a raw SQL statement of this process is refused on the next request', async () => {
    const { key, auth } = await cachedKey('raw')
    await sql`UPDATE admin_api_keys SET revoked_at = now() WHERE key_hash = ${sha256Hex(key)}`.execute(t.db)
    assert.equal((await adminStore(auth)).statusCode, 401)
  })

  test('a session signed out through a WITH (a SELECT around the insert) is refused on the next request', async () => {
    const session = await signInSubscriber(t.app, t.db, shop.store.id, subscriberId)
    assert.equal((await me(session.auth)).statusCode, 200)
    assert.equal((await me(session.auth)).statusCode, 200, 'answered again (from memory)')
    const { jti, exp } = JSON.parse(Buffer.from(session.accessToken.split('.')[1]!, 'base64url').toString()) as { jti: string; exp: number }
    await t.db
      .with('revoked', (db) => db.insertInto('revoked_sessions').values({ jti, expires_at: new Date(exp * 1000) }).returning('jti'))
      .selectFrom('revoked')
      .selectAll()
      .execute()
    assert.equal((await me(session.auth)).statusCode, 401)
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
