/**
 * Two service processes on one PostgreSQL database, each caching what authenticates requests
 * (src/modules/stores/auth-cache.ts): a sign-out, a revoked key and a store change made through one,
 * or written straight into the database, are seen by the other within the contract's bound
 * (docs/contract.md, "Sign-out and caches": one second). PostgreSQL only: the embedded database
 * serves one process.
 *
 * These waits are on the wall clock, polled: the servers are separate processes running on real
 * time, so no injected clock reaches them (test/api/portal/auth-cache.test.ts proves the same bound
 * with injected time, in process).
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
// wall clock: two real server processes; the bound under test is the other process's cache lifetime in real time.
import { setTimeout as sleep } from 'node:timers/promises'
import type { DatabaseHandle } from '../../src/db/connect.ts'
import { randomToken, sha256Hex } from '../../src/lib/secrets.ts'
import { createShopWithPlan } from '../helpers/catalog.ts'
import { createTestDatabase, onPostgres, scratchUrl } from '../helpers/database.ts'
import { startServer, type RunningServer } from '../helpers/server-process.ts'
import { checkoutThroughApi } from '../helpers/subscriptions.ts'
import { buildTestApp, call, type TestApp } from '../helpers/test-app.ts'

const BOUND_MS = 1_000

describe('caches across processes', { skip: !onPostgres && 'PostgreSQL only: the embedded database serves one process' }, () => {
  let database: DatabaseHandle
  let t: TestApp
  let shop: Awaited<ReturnType<typeof createShopWithPlan>>
  let subscriberId: string
  let a: RunningServer
  let b: RunningServer

  before(async () => {
    database = await createTestDatabase()
    t = await buildTestApp({ database })
    shop = await createShopWithPlan(t)
    subscriberId = await checkoutThroughApi(t.app, shop)
    const env = { DATABASE_URL: scratchUrl(database)!, SEED_DEMO_DATA: 'false', ROLE: 'api' }
    ;[a, b] = await Promise.all([startServer(env), startServer(env)])
  })
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()])
    await t?.close()
    await database?.close()
  })

  const get = (server: RunningServer, path: string, token: string) => fetch(`${server.origin}${path}`, { headers: { authorization: `Bearer ${token}` } })

  async function signIn(server: RunningServer): Promise<string> {
    const oneTime = randomToken(32)
    await database.db
      .insertInto('magic_link_tokens')
      .values({ token_hash: sha256Hex(oneTime), store_id: shop.store.id, subscriber_id: subscriberId, expires_at: new Date(Date.now() + 15 * 60_000) })
      .execute()
    const verified = await fetch(`${server.origin}/api/v1/portal/auth/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: oneTime }) })
    assert.equal(verified.status, 200)
    return ((await verified.json()) as { access_token: string }).access_token
  }

  /** Milliseconds until `probe` holds, polling; fails past the bound. */
  async function within(what: string, probe: () => Promise<boolean>): Promise<number> {
    const started = performance.now()
    for (;;) {
      if (await probe()) return performance.now() - started
      if (performance.now() - started > BOUND_MS) assert.fail(`${what}: not seen within ${BOUND_MS} ms`)
      // wall clock: polls another process (its entries expire in its own real time, which no clock here moves).
      await sleep(5)
    }
  }

  test('a sign-out through one process is refused by the other within the bound', async () => {
    const session = await signIn(a)
    for (const server of [a, b, b]) assert.equal((await get(server, '/api/v1/portal/me', session)).status, 200)
    const logout = await fetch(`${a.origin}/api/v1/portal/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${session}` } })
    assert.equal(logout.status, 204)
    assert.equal((await get(a, '/api/v1/portal/me', session)).status, 401, 'the process that signed out refuses at once')
    const ms = await within('sign-out on the other process', async () => (await get(b, '/api/v1/portal/me', session)).status === 401)
    process.stdout.write(`# sign-out seen by the other process after ${ms.toFixed(1)} ms\n`)
  })

  test('a key revoked through one process is refused by the other within the bound', async () => {
    const created = await fetch(`${a.origin}/api/v1/admin/api-keys`, { method: 'POST', headers: { ...shop.auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'second' }) })
    assert.equal(created.status, 201)
    const { id, key } = (await created.json()) as { id: string; key: string }
    for (const server of [b, b]) assert.equal((await get(server, '/api/v1/admin/store', key)).status, 200)
    const revoked = await fetch(`${a.origin}/api/v1/admin/api-keys/${id}`, { method: 'DELETE', headers: shop.auth })
    assert.ok(revoked.status < 300, `revoke answered ${revoked.status}`)
    const ms = await within('revocation on the other process', async () => (await get(b, '/api/v1/admin/store', key)).status === 401)
    process.stdout.write(`# key revocation seen by the other process after ${ms.toFixed(1)} ms\n`)
  })

  test("a store's settings changed through one process are read by the other within the bound", async () => {
    const zoneOn = async (server: RunningServer) => ((await (await get(server, '/api/v1/admin/store', shop.key)).json()) as { timezone: string }).timezone
    assert.equal(await zoneOn(b), 'UTC')
    const patched = await fetch(`${a.origin}/api/v1/admin/store`, { method: 'PATCH', headers: { ...shop.auth, 'content-type': 'application/json' }, body: JSON.stringify({ timezone: 'Asia/Tokyo' }) })
    assert.equal(patched.status, 200)
    await within('the store change on the other process', async () => (await zoneOn(b)) === 'Asia/Tokyo')
  })

  test('a sign-out written straight into the database (neither process made it) is refused by both within the bound', async () => {
    const session = await signIn(b)
    for (const server of [a, a, b, b]) assert.equal((await get(server, '/api/v1/portal/me', session)).status, 200)
    const { jti, exp } = JSON.parse(Buffer.from(session.split('.')[1]!, 'base64url').toString()) as { jti: string; exp: number }
    await database.db.insertInto('revoked_sessions').values({ jti, expires_at: new Date(exp * 1000) }).execute()
    const [onA, onB] = await Promise.all([a, b].map((server) => within(`the sign-out on ${server.origin}`, async () => (await get(server, '/api/v1/portal/me', session)).status === 401)))
    process.stdout.write(`# a sign-out made in the database seen after ${onA!.toFixed(1)} and ${onB!.toFixed(1)} ms\n`)
  })
})
