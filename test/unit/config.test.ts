import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { loadConfig } from '../../src/config.ts'

describe('configuration', () => {
  test('defaults to the embedded database under ./data on port 3000 with demo data', () => {
    const config = loadConfig({})
    assert.equal(config.databaseUrl, undefined)
    assert.equal(config.dataDir, './data')
    assert.equal(config.port, 3000)
    assert.equal(config.seedDemoData, true)
    assert.ok(Object.isFrozen(config))
  })

  test('with DATABASE_URL demo data is off unless asked for', () => {
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).seedDemoData, false)
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://u@h/db', SEED_DEMO_DATA: 'true' }).seedDemoData, true)
  })

  test('a bad value fails at boot naming the variable', () => {
    assert.throws(() => loadConfig({ PORT: 'eighty' }), /PORT/)
    assert.throws(() => loadConfig({ DATABASE_URL: 'mysql://x' }), /DATABASE_URL/)
    assert.throws(() => loadConfig({ ROLE: 'boss' }), /ROLE/)
  })

  test('bootstrap store and key come together', () => {
    assert.throws(() => loadConfig({ BOOTSTRAP_STORE_HASH: 'abc' }), /BOOTSTRAP_ADMIN_API_KEY/)
    const config = loadConfig({ BOOTSTRAP_STORE_HASH: 'abc', BOOTSTRAP_ADMIN_API_KEY: 'k'.repeat(32) })
    assert.deepEqual(config.bootstrap, { storeHash: 'abc', adminApiKey: 'k'.repeat(32), mode: 'test' })
  })
})
