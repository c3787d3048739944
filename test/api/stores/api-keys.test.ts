import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { assertProblem } from '../../helpers/problem.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'

/** The store's admin API keys through the API (docs/contract.md, Tenancy and credentials). */
describe('admin API keys', () => {
  let t: TestApp
  let shop: StoreWithKey
  let other: StoreWithKey

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    other = await createStoreWithKey(t.db)
  })
  after(() => t.close())

  const list = (auth = shop.auth) => call(t.app, { method: 'GET', url: '/api/v1/admin/api-keys', headers: auth })

  test('a new key is shown once, works at once, and only its prefix is listed afterwards', async () => {
    const created = await call(t.app, { method: 'POST', url: '/api/v1/admin/api-keys', headers: shop.auth, payload: { name: 'reporting' } })
    assert.equal(created.statusCode, 201, created.body)
    assert.match(created.json.key, /^sk_test_/)
    assert.equal(created.json.prefix, created.json.key.slice(0, 12))
    const listed = await list()
    assert.equal(listed.statusCode, 200)
    assert.ok(!listed.body.includes(created.json.key), 'the key is never listed')
    assert.deepEqual(listed.json.data.map((key: { name: string; current: boolean }) => [key.name, key.current]).sort(), [['default', true], ['reporting', false]])
    const withNew = await list({ authorization: `Bearer ${created.json.key}` })
    assert.equal(withNew.statusCode, 200)
    assert.equal(withNew.json.data.find((key: { current: boolean }) => key.current).name, 'reporting')
  })

  test('a revoked key is refused at once; another store\'s key cannot be revoked; the last key stays', async () => {
    const created = await call(t.app, { method: 'POST', url: '/api/v1/admin/api-keys', headers: shop.auth, payload: { name: 'temporary' } })
    const auth = { authorization: `Bearer ${created.json.key}` }
    const foreign = await call(t.app, { method: 'DELETE', url: `/api/v1/admin/api-keys/${created.json.id}`, headers: other.auth })
    assertProblem(foreign, 404, 'not_found')
    const revoked = await call(t.app, { method: 'DELETE', url: `/api/v1/admin/api-keys/${created.json.id}`, headers: shop.auth })
    assert.equal(revoked.statusCode, 200, revoked.body)
    assert.ok(revoked.json.revoked_at)
    assertProblem(await list(auth), 401, 'unauthenticated')
    assertProblem(await call(t.app, { method: 'DELETE', url: `/api/v1/admin/api-keys/${created.json.id}`, headers: shop.auth }), 404, 'not_found')

    const keys = (await list(other.auth)).json.data
    assert.equal(keys.length, 1)
    assertProblem(await call(t.app, { method: 'DELETE', url: `/api/v1/admin/api-keys/${keys[0].id}`, headers: other.auth }), 409, 'invalid_state')
    assert.equal((await list(other.auth)).statusCode, 200, 'the last key still works')
  })

  test('a name is required, 1 to 100 characters', async () => {
    for (const payload of [{}, { name: '' }, { name: 'x'.repeat(101) }, { name: 'ok', extra: 1 }]) {
      assertProblem(await call(t.app, { method: 'POST', url: '/api/v1/admin/api-keys', headers: shop.auth, payload }), 400, 'validation_failed')
    }
  })
})
