/**
 * Review of issue 17 (src/db/change-feed.ts LocalWritesPlugin): only UpdateQueryNode / InsertQueryNode /
 * DeleteQueryNode roots are recognised as writes. A write this process makes as raw SQL, or inside a
 * CTE whose root is a SELECT, is never forgotten locally. On the embedded database nothing else tells
 * the cache (no listener), so a revoked key or signed-out session keeps being accepted for up to 60 s;
 * on PostgreSQL the next request races the notification. Contract (docs/contract.md §10): "A change
 * made through the same process is seen by its next request."
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { sql } from 'kysely'
import { sha256Hex } from '../../../src/lib/secrets.ts'
import { createShopWithPlan } from '../../helpers/catalog.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
import { checkoutInput } from '../../helpers/subscriptions.ts'
import { buildTestApp, call, type TestApp } from '../../helpers/test-app.ts'

let t: TestApp
let shop: Awaited<ReturnType<typeof createShopWithPlan>>
let subscriberId: string
before(async () => {
  t = await buildTestApp()
  shop = await createShopWithPlan(t)
  const created = await call(t.app, { method: 'POST', url: '/api/v1/admin/checkouts', headers: shop.auth, payload: checkoutInput(shop.planId) })
  assert.equal(created.statusCode, 201, created.body)
  subscriberId = created.json.data[0].subscriber_id
})
after(() => t.close())

const adminStore = (auth: Record<string, string>) => call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: auth })

test('an admin key revoked by a raw SQL statement of this process is refused on the next request', async () => {
  const extra = await call(t.app, { method: 'POST', url: '/api/v1/admin/api-keys', headers: shop.auth, payload: { name: 'raw' } })
  const auth = { authorization: `Bearer ${extra.json.key}` }
  assert.equal((await adminStore(auth)).statusCode, 200)
  assert.equal((await adminStore(auth)).statusCode, 200, 'again: now answered from memory (the first use recorded last_used_at, which cleared the key cache)')
  await sql`UPDATE admin_api_keys SET revoked_at = now() WHERE key_hash = ${sha256Hex(extra.json.key)}`.execute(t.db)
  assert.equal((await adminStore(auth)).statusCode, 401)
})

test('a session signed out through a CTE (root SELECT) is refused on the next request', async () => {
  const session = await signInSubscriber(t.app, t.db, shop.store.id, subscriberId)
  const me = () => call(t.app, { method: 'GET', url: '/api/v1/portal/me', headers: session.auth })
  assert.equal((await me()).statusCode, 200)
  const { jti, exp } = JSON.parse(Buffer.from(session.accessToken.split('.')[1]!, 'base64url').toString()) as { jti: string; exp: number }
  await t.db
    .with('revoked', (db) => db.insertInto('revoked_sessions').values({ jti, expires_at: new Date(exp * 1000) }).returning('jti'))
    .selectFrom('revoked')
    .selectAll()
    .execute()
  assert.equal((await me()).statusCode, 401)
})
