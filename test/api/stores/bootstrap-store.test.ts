// The bootstrap store and key (docs/contract.md, Tenancy and credentials): made sure of at every start,
// but a key an operator revoked stays revoked.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ensureBootstrapStore, listAdminKeys, revokeAdminKey } from '../../../src/modules/stores/index.ts'
import { createTestDatabase } from '../../helpers/database.ts'
import { buildTestApp, call, type TestApp } from '../../helpers/test-app.ts'
import type { DatabaseHandle } from '../../../src/db/connect.ts'

const BOOTSTRAP = { storeHash: 'bootstrap-revoked', adminApiKey: 'sk_test_bootstrap_revoked_0123456789abcdef', mode: 'test' } as const
const auth = { authorization: `Bearer ${BOOTSTRAP.adminApiKey}` }

describe('BOOTSTRAP_ADMIN_API_KEY', () => {
  let database: DatabaseHandle
  let t: TestApp

  before(async () => {
    database = await createTestDatabase()
    t = await buildTestApp({ database })
  })
  after(async () => {
    await t.close()
    await database.close()
  })

  test('a revoked bootstrap key stays revoked at every later start', async () => {
    const store = await ensureBootstrapStore(database.db, BOOTSTRAP)
    assert.equal((await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: auth })).statusCode, 200, 'the key works once bootstrapped')

    // Revoked as `npm run cli -- key revoke <key_id>` does.
    const [key] = await listAdminKeys(database.db, store.id)
    assert.ok(key)
    await revokeAdminKey(database.db, key.id, new Date())
    // The CLI is another process: this app sees the revocation within a second; told here so the test needs no wait.
    t.services.modules.stores.service.auth.forgetKey(key.key_hash)
    assert.equal((await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: auth })).statusCode, 401)

    // The next starts run ensureBootstrapStore again, each with a fresh app.
    const warnings: string[] = []
    for (let start = 0; start < 2; start++) {
      const again = await ensureBootstrapStore(database.db, BOOTSTRAP, { warn: (message) => warnings.push(message) })
      assert.equal(again.id, store.id)
      const restarted = await buildTestApp({ database })
      try {
        const response = await call(restarted.app, { method: 'GET', url: '/api/v1/admin/store', headers: auth })
        assert.equal(response.statusCode, 401, `start ${start + 1}: the revoked key was accepted again`)
        assert.equal(response.json.code, 'unauthenticated')
      } finally {
        await restarted.close()
      }
    }
    const keys = await listAdminKeys(database.db, store.id)
    assert.equal(keys.length, 1, 'no new key was made in its place')
    assert.ok(keys[0]!.revoked_at, 'still revoked')
    assert.equal(warnings.length, 2, 'each start says the configured key is revoked')
    assert.match(warnings[0]!, /BOOTSTRAP_ADMIN_API_KEY .*revoked/)
    assert.ok(!warnings[0]!.includes(BOOTSTRAP.adminApiKey), 'the key itself is not logged')
  })
})
