import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { createAdminKey, listAdminKeys } from '../../../src/modules/stores/index.ts'
import { createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'

type Reply = Awaited<ReturnType<typeof call>>

/** A 401 is problem+json `unauthenticated` and tells the client which scheme to use. */
function assertUnauthenticated(response: Reply, what: string): void {
  assert.equal(response.statusCode, 401, `${what}: expected 401, got ${response.statusCode}: ${response.body}`)
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/, `${what}: content type is problem+json`)
  assert.equal(response.headers['www-authenticate'], 'Bearer', `${what}: WWW-Authenticate: Bearer`)
  assert.equal(response.json.type, 'urn:problem-type:unauthenticated', `${what}: problem type`)
  assert.equal(typeof response.json.title, 'string', `${what}: problem title`)
  assert.equal(response.json.status, 401, `${what}: problem status`)
  assert.equal(typeof response.json.detail, 'string', `${what}: problem detail`)
  assert.equal(response.json.code, 'unauthenticated', `${what}: problem code`)
  assert.equal(response.json.request_id, response.headers['x-request-id'], `${what}: request_id matches X-Request-Id`)
}

/** A key of the right shape that no store issued. */
const strangerKey = () => `sk_test_${randomBytes(32).toString('base64url')}`

describe('admin API keys: Authorization: Bearer <key> on /api/v1/admin', () => {
  let t: TestApp
  let shop: StoreWithKey
  let other: StoreWithKey

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    other = await createStoreWithKey(t.db)
  })
  after(() => t.close())

  const productCount = async () => Number((await t.db.selectFrom('products').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)

  test('without Authorization every admin route is 401 unauthenticated with WWW-Authenticate: Bearer', async () => {
    const routes: Array<{ method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; url: string; payload?: object }> = [
      { method: 'GET', url: '/api/v1/admin/store' },
      { method: 'PATCH', url: '/api/v1/admin/store', payload: { name: 'x' } },
      { method: 'GET', url: '/api/v1/admin/products' },
      { method: 'POST', url: '/api/v1/admin/products', payload: { platform_product_id: 'anon', name: 'x' } },
      { method: 'GET', url: '/api/v1/admin/plans' },
      { method: 'DELETE', url: '/api/v1/admin/plans/plan_00000000000000000000000000' },
    ]
    for (const route of routes) {
      assertUnauthenticated(await call(t.app, route), `${route.method} ${route.url} without credentials`)
    }
  })

  test('a key no store issued is 401, and the answer never echoes the key', async () => {
    const key = strangerKey()
    const response = await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: { authorization: `Bearer ${key}` } })
    assertUnauthenticated(response, 'unknown key')
    assert.ok(!response.body.includes(key), 'the presented key is not echoed')
  })

  test("a near miss of a real key (one character changed, or the key's prefix only) is 401", async () => {
    const last = shop.key.at(-1) === 'A' ? 'B' : 'A'
    for (const key of [shop.key.slice(0, -1) + last, shop.key.slice(0, 12), `${shop.key} `.trim() + 'x', shop.key.toUpperCase()]) {
      assertUnauthenticated(await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: { authorization: `Bearer ${key}` } }), `key ${key.slice(0, 14)}...`)
    }
  })

  test('a malformed Authorization header is 401', async () => {
    for (const header of ['Basic xyz', `Basic ${Buffer.from(`${shop.key}:`).toString('base64')}`, 'Bearer', 'Bearer ', `Bearer ${shop.key} extra`, shop.key, `Token ${shop.key}`]) {
      assertUnauthenticated(await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: { authorization: header } }), `Authorization: ${header.slice(0, 20)}`)
    }
  })

  test('the scheme name is case-insensitive (RFC 9110): "bearer <key>" is accepted', async () => {
    const response = await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: { authorization: `bearer ${shop.key}` } })
    assert.equal(response.statusCode, 200, response.body)
  })

  test('a revoked key is 401 at once, while the store\'s other keys keep working', async () => {
    const second = await createAdminKey(t.db, shop.store, 'to revoke')
    const auth = { authorization: `Bearer ${second.key}` }
    assert.equal((await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: auth })).statusCode, 200, 'the new key works before revocation')

    const keys = await listAdminKeys(t.db, shop.store.id)
    const listed = keys.find((key) => key.name === 'to revoke')
    assert.ok(listed, 'listAdminKeys names the key')
    assert.equal(listed.id, second.id)
    // Through this process (the API), so its very next request sees it (docs/contract.md, "Sign-out and caches").
    const revoked = await call(t.app, { method: 'DELETE', url: `/api/v1/admin/api-keys/${listed.id}`, headers: shop.auth })
    assert.equal(revoked.statusCode, 200, revoked.body)

    assertUnauthenticated(await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: auth }), 'revoked key')
    assertUnauthenticated(
      await call(t.app, { method: 'POST', url: '/api/v1/admin/products', headers: auth, payload: { platform_product_id: 'revoked', name: 'x' } }),
      'revoked key on a write',
    )
    const stillGood = await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: shop.auth })
    assert.equal(stillGood.statusCode, 200, 'revoking one key leaves the store\'s other keys valid')
  })

  test("another store's key only ever sees its own store", async () => {
    const mine = await createProduct(t.app, shop.auth, { name: 'Mine' })

    const store = await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: other.auth })
    assert.equal(store.statusCode, 200)
    assert.equal(store.json.id, other.store.id, 'GET /admin/store answers the key\'s own store')
    assert.equal(store.json.store_hash, other.store.store_hash)

    const read = await call(t.app, { method: 'GET', url: `/api/v1/admin/products/${mine.id}`, headers: other.auth })
    assert.equal(read.statusCode, 404, `reading the first store's product is 404, got ${read.statusCode}`)
    assert.equal(read.json.code, 'not_found')
    assert.match(String(read.headers['content-type']), /^application\/problem\+json/)

    const list = await call(t.app, { method: 'GET', url: '/api/v1/admin/products?limit=100', headers: other.auth })
    assert.ok(!list.json.data.some((product: any) => product.id === mine.id), "the first store's product is not listed")

    const patch = await call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: other.auth, payload: { name: 'Other renamed' } })
    assert.equal(patch.json.id, other.store.id)
    const firstStore = await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: shop.auth })
    assert.notEqual(firstStore.json.name, 'Other renamed', "the first store's settings are untouched")
  })

  test('a request that fails authentication changes no data', async () => {
    const wrong = { authorization: `Bearer ${strangerKey()}` }
    const product = await createProduct(t.app, shop.auth, { name: 'Keep me' })
    const storeBefore = await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: shop.auth })
    const countBefore = await productCount()

    assertUnauthenticated(
      await call(t.app, { method: 'POST', url: '/api/v1/admin/products', headers: wrong, payload: { platform_product_id: 'intruder', name: 'Intruder' } }),
      'POST with a wrong key',
    )
    assertUnauthenticated(
      await call(t.app, { method: 'POST', url: '/api/v1/admin/products', headers: { ...wrong, 'idempotency-key': 'intruder-1' }, payload: { platform_product_id: 'intruder', name: 'Intruder' } }),
      'POST with a wrong key and an Idempotency-Key',
    )
    assertUnauthenticated(await call(t.app, { method: 'PATCH', url: `/api/v1/admin/products/${product.id}`, headers: wrong, payload: { name: 'Defaced' } }), 'PATCH with a wrong key')
    assertUnauthenticated(await call(t.app, { method: 'DELETE', url: `/api/v1/admin/products/${product.id}`, headers: wrong }), 'DELETE with a wrong key')
    assertUnauthenticated(await call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: wrong, payload: { name: 'Defaced' } }), 'PATCH store with a wrong key')

    assert.equal(await productCount(), countBefore, 'no product was created or deleted')
    const row = await t.db.selectFrom('products').select('name').where('id', '=', product.id).executeTakeFirst()
    assert.equal(row?.name, 'Keep me', 'the product is unchanged')
    const storeAfter = await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: shop.auth })
    assert.deepEqual(storeAfter.json, storeBefore.json, 'the store settings are unchanged')
    const idempotency = await t.db.selectFrom('idempotency_keys').select('key').where('key', '=', 'intruder-1').execute()
    assert.deepEqual(idempotency, [], 'an unauthenticated request claims no idempotency key')
  })

  test('keys are stored only as a hash: no column of admin_api_keys holds the raw key', async () => {
    const fresh = await createStoreWithKey(t.db)
    const secretPart = fresh.key.slice('sk_test_'.length)
    const rows = await t.db.selectFrom('admin_api_keys').selectAll().execute()
    assert.ok(rows.length >= 3, 'there are keys to inspect')
    for (const row of rows) {
      for (const [column, value] of Object.entries(row)) {
        const text = value instanceof Date ? value.toISOString() : String(value)
        assert.ok(!text.includes(fresh.key), `admin_api_keys.${column} holds the raw key`)
        assert.ok(!text.includes(secretPart), `admin_api_keys.${column} holds the key's secret part`)
        assert.ok(!text.includes(shop.key) && !text.includes(other.key), `admin_api_keys.${column} holds another raw key`)
      }
    }
    const stored = rows.filter((row) => row.store_id === fresh.store.id)
    assert.equal(stored.length, 1)
    assert.match(stored[0]!.key_hash, /^[0-9a-f]{64}$/, 'key_hash is a digest')
    assert.ok(secretPart.length - (stored[0]!.key_prefix.length - 'sk_test_'.length) >= 22, 'the stored prefix reveals at most a few characters of the secret')
  })

  test('keys carry at least 128 random bits and no two are alike', async () => {
    const keys = [shop.key, other.key, (await createAdminKey(t.db, shop.store)).key, (await createAdminKey(t.db, shop.store)).key]
    for (const key of keys) {
      assert.match(key, /^sk_test_[A-Za-z0-9_-]+$/, `a test-mode key is sk_test_ + base64url: ${key.slice(0, 10)}...`)
      const secret = Buffer.from(key.slice('sk_test_'.length), 'base64url')
      assert.ok(secret.length >= 16, `the key's random part decodes to ${secret.length} bytes, at least 16 are needed`)
    }
    assert.equal(new Set(keys).size, keys.length, 'every key is different')
  })

  test('public routes need no key, and a stranger\'s key does not make them fail', async () => {
    const anonymous = await call(t.app, { method: 'GET', url: `/api/v1/products?store_hash=${shop.store.store_hash}` })
    assert.equal(anonymous.statusCode, 200, `anonymous public read: ${anonymous.body}`)
    assert.equal(anonymous.headers['www-authenticate'], undefined)
    const withStrangerKey = await call(t.app, {
      method: 'GET',
      url: `/api/v1/products?store_hash=${shop.store.store_hash}`,
      headers: { authorization: `Bearer ${strangerKey()}` },
    })
    assert.equal(withStrangerKey.statusCode, 200, `public read with an unknown key: ${withStrangerKey.body}`)
  })
})
