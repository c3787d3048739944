import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../helpers/test-app.ts'

describe('Idempotency-Key on POST', () => {
  let t: TestApp
  let shop: StoreWithKey
  let n = 0

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
  })
  after(() => t.close())

  const products = async (platformProductId: string) =>
    t.db.selectFrom('products').select('id').where('store_id', '=', shop.store.id).where('platform_product_id', '=', platformProductId).execute()

  const create = (key: string | undefined, payload: Record<string, unknown>, auth = shop.auth) =>
    call(t.app, {
      method: 'POST',
      url: '/api/v1/admin/products',
      headers: { ...auth, ...(key === undefined ? {} : { 'idempotency-key': key }) },
      payload,
    })

  test('the same key and body replay the first response with Idempotent-Replayed: true and create once', async () => {
    const key = `key-${++n}`
    const body = { platform_product_id: 'replay', name: 'Replay' }
    const first = await create(key, body)
    const second = await create(key, body)
    assert.equal(first.statusCode, 201)
    assert.equal(first.headers['idempotent-replayed'], undefined)
    assert.equal(second.statusCode, 201)
    assert.equal(second.headers['idempotent-replayed'], 'true')
    assert.equal(second.body, first.body)
    assert.match(String(second.headers['content-type']), /^application\/json/)
    assert.equal((await products('replay')).length, 1)
  })

  test('a retry whose JSON lists the same fields in another order is the same request: replayed, not a conflict', async () => {
    const key = `key-${++n}`
    const first = await create(key, { platform_product_id: 'reordered', name: 'Reordered' })
    const second = await create(key, { name: 'Reordered', platform_product_id: 'reordered' })
    assert.equal(second.statusCode, 201, second.body)
    assert.equal(second.headers['idempotent-replayed'], 'true')
    assert.equal(second.body, first.body)
    assert.equal((await products('reordered')).length, 1)
  })

  test('without a key a retry runs again (and here conflicts on the duplicate product)', async () => {
    const body = { platform_product_id: 'nokey', name: 'No key' }
    assert.equal((await create(undefined, body)).statusCode, 201)
    assert.equal((await create(undefined, body)).json.code, 'conflict')
  })

  test('the same key with a different body is 409 idempotency_conflict and runs nothing', async () => {
    const key = `key-${++n}`
    await create(key, { platform_product_id: 'first-body', name: 'A' })
    const response = await create(key, { platform_product_id: 'second-body', name: 'B' })
    assert.equal(response.statusCode, 409)
    assert.equal(response.json.code, 'idempotency_conflict')
    assert.equal((await products('second-body')).length, 0)
  })

  test('an error answer is replayed too, so a retry sees the same outcome', async () => {
    await create(undefined, { platform_product_id: 'taken', name: 'Taken' })
    const key = `key-${++n}`
    const first = await create(key, { platform_product_id: 'taken', name: 'Again' })
    const second = await create(key, { platform_product_id: 'taken', name: 'Again' })
    assert.equal(first.statusCode, 409)
    assert.equal(second.statusCode, 409)
    assert.equal(second.headers['idempotent-replayed'], 'true')
    assert.match(String(second.headers['content-type']), /^application\/problem\+json/)
  })

  test('two concurrent requests with one key create one product and give the same answer', async () => {
    const key = `key-${++n}`
    const body = { platform_product_id: 'concurrent', name: 'Concurrent' }
    const answers = await Promise.all([create(key, body), create(key, body), create(key, body)])
    assert.deepEqual(answers.map((a) => a.statusCode), [201, 201, 201])
    assert.equal(new Set(answers.map((a) => a.json.id)).size, 1, 'every answer names the one product')
    assert.equal(answers.filter((a) => a.headers['idempotent-replayed'] === 'true').length, 2)
    assert.equal((await products('concurrent')).length, 1)
  })

  test("keys are scoped per store: another store's identical key runs its own request", async () => {
    const other = await createStoreWithKey(t.db)
    const key = `key-${++n}`
    const body = { platform_product_id: 'scoped', name: 'Scoped' }
    const mine = await create(key, body)
    const theirs = await create(key, body, other.auth)
    assert.equal(theirs.statusCode, 201)
    assert.equal(theirs.headers['idempotent-replayed'], undefined)
    assert.notEqual(theirs.json.id, mine.json.id)
  })

  test('a key is kept 24 hours: after that the same key runs the request anew', async () => {
    const key = `key-${++n}`
    const first = await create(key, { platform_product_id: 'expiring', name: 'Expiring' })
    await t.db.updateTable('idempotency_keys').set({ created_at: new Date(Date.now() - 24 * 3600 * 1000 - 1000) }).where('key', '=', key).execute()
    const later = await create(key, { platform_product_id: 'expiring-2', name: 'Later' })
    assert.equal(later.statusCode, 201)
    assert.equal(later.headers['idempotent-replayed'], undefined)
    assert.notEqual(later.json.id, first.json.id)
  })

  test('a key longer than 255 characters is 400 validation_failed', async () => {
    const response = await create('k'.repeat(256), { platform_product_id: 'long-key', name: 'L' })
    assert.equal(response.statusCode, 400)
    assert.equal(response.json.code, 'validation_failed')
    assert.equal(response.json.errors[0].path, '/header/idempotency-key')
    assert.equal((await products('long-key')).length, 0)
  })
})
