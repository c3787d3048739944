import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createAdminKey } from '../../src/modules/stores/index.ts'
import { idPrefixOf, operationsOf, UNKNOWN_ULID, type Operation } from '../helpers/fuzz.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../helpers/test-app.ts'

/**
 * Admin key scopes (docs/contract.md, Admin key scopes), every admin operation of the served OpenAPI
 * document with a key of every scope: an operation that lists the key's scope in `x-admin-scopes` runs
 * (whatever it answers then: unknown ids, empty bodies), one that does not is 403 `insufficient_scope`
 * before anything of it runs. Before, every key could do everything, mint keys included.
 */
const SCOPES = ['full', 'read_only', 'support'] as const
type Scope = (typeof SCOPES)[number]

describe('admin key scopes over every admin operation', () => {
  let t: TestApp
  let shop: StoreWithKey
  let doc: any
  let operations: (Operation & { scopes: Scope[] })[]
  const keys = {} as Record<Scope, string>

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    for (const scope of SCOPES) keys[scope] = (await createAdminKey(t.db, shop.store, `${scope} key`, scope)).key
    doc = (await call(t.app, { method: 'GET', url: '/api/v1/openapi.json' })).json
    operations = operationsOf(doc)
      .filter((op) => op.security === 'admin')
      .map((op) => ({ ...op, scopes: doc.paths[op.path][op.method.toLowerCase()]['x-admin-scopes'] as Scope[] }))
  })
  after(() => t.close())

  const urlOf = (op: Operation) => op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const param = op.pathParams.find((p) => p.name === name)
    const prefix = param ? idPrefixOf(param.schema) : undefined
    return prefix ? `${prefix}_${UNKNOWN_ULID}` : 'x'
  })

  test('every admin operation declares its scopes, full always among them; reads take every scope but keys; a read-only key changes nothing', () => {
    assert.ok(operations.length > 40, `${operations.length} admin operations`)
    for (const op of operations) {
      assert.ok(Array.isArray(op.scopes) && op.scopes.includes('full'), `${op.method} ${op.path}: ${JSON.stringify(op.scopes)}`)
      if (op.method !== 'GET' && op.path !== '/api/v1/admin/console-session') assert.ok(!op.scopes.includes('read_only'), `${op.method} ${op.path} changes something`)
    }
    const scopesOf = (method: string, path: string) => operations.find((op) => op.method === method && op.path === path)?.scopes
    assert.deepEqual(scopesOf('POST', '/api/v1/admin/charges/{id}/refund'), ['full', 'support'])
    assert.deepEqual(scopesOf('POST', '/api/v1/admin/subscriptions/{id}/pause'), ['full', 'support'])
    assert.deepEqual(scopesOf('PATCH', '/api/v1/admin/store'), ['full'])
    assert.deepEqual(scopesOf('POST', '/api/v1/admin/webhook-subscriptions'), ['full'])
    assert.deepEqual(scopesOf('POST', '/api/v1/admin/products'), ['full'])
    assert.deepEqual(scopesOf('PUT', '/api/v1/admin/platform-connection'), ['full'])
    assert.deepEqual(scopesOf('POST', '/api/v1/admin/api-keys'), ['full'])
    assert.deepEqual(scopesOf('GET', '/api/v1/admin/api-keys'), ['full', 'read_only'], 'a support desk does not see the keys')
    assert.deepEqual(scopesOf('GET', '/api/v1/admin/subscriptions'), ['full', 'read_only', 'support'])
  })

  test('every operation x every scope: the scopes it lists run it, the others are 403 insufficient_scope', async () => {
    const wrong: string[] = []
    // Disconnecting would end the store's billing for the cases after it: it goes last.
    const ordered = [...operations].sort((a, b) => Number(a.path === '/api/v1/admin/platform-connection' && a.method === 'DELETE') - Number(b.path === '/api/v1/admin/platform-connection' && b.method === 'DELETE'))
    for (const op of ordered) {
      for (const scope of SCOPES) {
        const answer = await call(t.app, {
          method: op.method as 'GET',
          url: urlOf(op),
          headers: { authorization: `Bearer ${keys[scope]}` },
          ...(op.body !== undefined ? { payload: {} } : {}),
        })
        const refused = answer.statusCode === 403 && answer.json?.code === 'insufficient_scope'
        if (op.scopes.includes(scope) === refused) wrong.push(`${scope} ${op.method} ${op.path}: ${answer.statusCode} ${answer.body.slice(0, 160)}`)
      }
    }
    assert.deepEqual(wrong, [])
  })

  test('a support key cannot make keys; a refusal says what the scope allows, and nothing is written', async () => {
    const support = { authorization: `Bearer ${keys.support}` }
    const refused = await call(t.app, { method: 'POST', url: '/api/v1/admin/api-keys', headers: support, payload: { name: 'escalate' } })
    assert.equal(refused.statusCode, 403, refused.body)
    assert.equal(refused.json.code, 'insufficient_scope')
    assert.match(refused.json.detail, /scope is support: it can only read, and act on subscriptions, charges and change requests/)
    const made = await t.db.selectFrom('admin_api_keys').select('name').where('store_id', '=', shop.store.id).execute()
    assert.ok(!made.some((key) => key.name === 'escalate'))
  })

  test('the last full key cannot be revoked while only narrower keys are left; a full key lists each key\'s scope', async () => {
    const listed = await call(t.app, { method: 'GET', url: '/api/v1/admin/api-keys', headers: shop.auth })
    const byName = new Map((listed.json.data as { id: string; name: string; scope: string }[]).map((key) => [key.name, key]))
    assert.equal(byName.get('read_only key')!.scope, 'read_only')
    assert.equal(byName.get('support key')!.scope, 'support')
    // Two full keys: the fixture's and the 'full key'. Revoke one, then the other is the last.
    const full = byName.get('full key')!
    assert.equal((await call(t.app, { method: 'DELETE', url: `/api/v1/admin/api-keys/${full.id}`, headers: shop.auth })).statusCode, 200)
    const own = (listed.json.data as { id: string; current: boolean }[]).find((key) => key.current)!
    const last = await call(t.app, { method: 'DELETE', url: `/api/v1/admin/api-keys/${own.id}`, headers: shop.auth })
    assert.equal(last.statusCode, 409, last.body)
    assert.match(last.json.detail, /last active full-scope key/)
  })

  test('two revocations at once of the store\'s two full keys: one goes, the other is refused; a full key is left', async () => {
    const other = await createStoreWithKey(t.db)
    const second = await createAdminKey(t.db, other.store, 'second full', 'full')
    const listed = (await call(t.app, { method: 'GET', url: '/api/v1/admin/api-keys', headers: other.auth })).json.data as { id: string }[]
    const answers = await Promise.all(listed.map((key) => call(t.app, { method: 'DELETE', url: `/api/v1/admin/api-keys/${key.id}`, headers: { authorization: `Bearer ${second.key}` } })))
    assert.deepEqual(answers.map((answer) => answer.statusCode).sort(), [200, 409])
    const active = await t.db.selectFrom('admin_api_keys').select('id').where('store_id', '=', other.store.id).where('revoked_at', 'is', null).execute()
    assert.equal(active.length, 1)
  })
})
