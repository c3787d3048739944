// What configuration refuses before anything starts (docs/contract.md, Running it): production and
// live stores need real mail; demo data never comes near production.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { loadConfig } from '../../src/config.ts'

const SMTP_URL = 'smtp://mail.example.test:587'

describe('mail for sign-in links', () => {
  test('NODE_ENV=production without SMTP_URL is refused, naming the variable', () => {
    assert.throws(() => loadConfig({ NODE_ENV: 'production' }), /SMTP_URL/)
    assert.equal(loadConfig({ NODE_ENV: 'production', SMTP_URL }).smtpUrl, SMTP_URL)
  })

  test('a live bootstrap store without SMTP_URL is refused, whatever NODE_ENV says', () => {
    const live = { BOOTSTRAP_STORE_HASH: 'live-shop', BOOTSTRAP_ADMIN_API_KEY: 'k'.repeat(32), BOOTSTRAP_STORE_MODE: 'live' }
    assert.throws(() => loadConfig(live), /SMTP_URL/)
    assert.equal(loadConfig({ ...live, SMTP_URL }).bootstrap?.mode, 'live')
    assert.equal(loadConfig({ ...live, BOOTSTRAP_STORE_MODE: 'test' }).smtpUrl, undefined, 'a test-mode store may log its links')
  })

  test('SMTP_REQUIRE_TLS is a boolean, off by default', () => {
    assert.equal(loadConfig({}).smtpRequireTls, false)
    assert.equal(loadConfig({ SMTP_URL, SMTP_REQUIRE_TLS: 'true' }).smtpRequireTls, true)
    assert.throws(() => loadConfig({ SMTP_REQUIRE_TLS: 'sometimes' }), /SMTP_REQUIRE_TLS/)
  })
})

describe('demo data', () => {
  test('by default only on a freshly created embedded database outside production', () => {
    assert.equal(loadConfig({}).seedDemoData, 'when-created')
    assert.equal(loadConfig({ NODE_ENV: 'test' }).seedDemoData, 'when-created')
    assert.equal(loadConfig({ NODE_ENV: 'production', SMTP_URL }).seedDemoData, 'never')
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).seedDemoData, 'never')
  })

  test('SEED_DEMO_DATA decides outside production, and true is refused in production', () => {
    assert.equal(loadConfig({ SEED_DEMO_DATA: 'false' }).seedDemoData, 'never')
    assert.equal(loadConfig({ SEED_DEMO_DATA: 'true' }).seedDemoData, 'always')
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://u@h/db', SEED_DEMO_DATA: 'true' }).seedDemoData, 'always')
    assert.throws(() => loadConfig({ NODE_ENV: 'production', SMTP_URL, SEED_DEMO_DATA: 'true' }), /SEED_DEMO_DATA/)
    assert.equal(loadConfig({ NODE_ENV: 'production', SMTP_URL, SEED_DEMO_DATA: 'false' }).seedDemoData, 'never')
  })
})
