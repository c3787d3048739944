import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { loadConfig } from '../../src/config.ts'

describe('configuration', () => {
  test('defaults to the embedded database under ./data on port 3000, with demo data when it is created', () => {
    const config = loadConfig({})
    assert.equal(config.databaseUrl, undefined)
    assert.equal(config.dataDir, './data')
    assert.equal(config.port, 3000)
    assert.equal(config.seedDemoData, 'when-created')
    assert.ok(Object.isFrozen(config))
  })

  test('with DATABASE_URL demo data is off unless asked for', () => {
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).seedDemoData, 'never')
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://u@h/db', SEED_DEMO_DATA: 'true' }).seedDemoData, 'always')
  })

  test('a bad value fails at boot naming the variable', () => {
    assert.throws(() => loadConfig({ PORT: 'eighty' }), /PORT/)
    assert.throws(() => loadConfig({ DATABASE_URL: 'mysql://x' }), /DATABASE_URL/)
    assert.throws(() => loadConfig({ ROLE: 'boss' }), /ROLE/)
  })

  test('a charge lease shorter than the longest gateway sequence is refused at boot', () => {
    // Four platform calls one after another (order, access token, payment, lookup), each up to its timeout.
    assert.throws(() => loadConfig({ BILLING_CHARGE_LEASE_MS: '59999' }), /BILLING_CHARGE_LEASE_MS \(59999\) must be at least .*60000 ms/)
    assert.equal(loadConfig({ BILLING_CHARGE_LEASE_MS: '60000' }).billing.chargeLeaseMs, 60_000)
    assert.throws(() => loadConfig({ BILLING_CHARGE_LEASE_MS: '1000', PLATFORM_API_TIMEOUT_MS: '300' }), /BILLING_CHARGE_LEASE_MS/)
    assert.equal(loadConfig({ BILLING_CHARGE_LEASE_MS: '1000', PLATFORM_API_TIMEOUT_MS: '250' }).billing.chargeLeaseMs, 1_000)
    // The test gateway is called twice at most (a charge, then a replay under the same key).
    assert.throws(() => loadConfig({ TEST_GATEWAY_LATENCY_MS: '30001' }), /TEST_GATEWAY_LATENCY_MS/)
    assert.equal(loadConfig({}).billing.unknownGraceMs, 24 * 3_600_000)
  })

  test('bootstrap store and key come together', () => {
    assert.throws(() => loadConfig({ BOOTSTRAP_STORE_HASH: 'abc' }), /BOOTSTRAP_ADMIN_API_KEY/)
    const config = loadConfig({ BOOTSTRAP_STORE_HASH: 'abc', BOOTSTRAP_ADMIN_API_KEY: 'k'.repeat(32) })
    assert.deepEqual(config.bootstrap, { storeHash: 'abc', adminApiKey: 'k'.repeat(32), mode: 'test' })
  })

  test('TRUST_PROXY is off by default, takes a hop count or a list of addresses and CIDRs, and refuses anything else naming the variable', () => {
    assert.equal(loadConfig({}).trustProxy, false)
    assert.equal(loadConfig({ TRUST_PROXY: '0' }).trustProxy, false)
    assert.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false)
    assert.equal(loadConfig({ TRUST_PROXY: '1' }).trustProxy, 1)
    assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2)
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.0.2.7,2001:db8::/32' }).trustProxy, ['10.0.0.0/8', '192.0.2.7', '2001:db8::/32'])
    assert.deepEqual(loadConfig({ TRUST_PROXY: 'loopback,uniquelocal' }).trustProxy, ['loopback', 'uniquelocal'])
    for (const bad of ['true', '-1', '1.5', 'proxy.example.com', '10.0.0.0/33', '300.1.1.1', '10.0.0.1,', 'ffff::/129']) {
      assert.throws(() => loadConfig({ TRUST_PROXY: bad }), /TRUST_PROXY/, `TRUST_PROXY=${bad} is refused`)
    }
  })

  test('METRICS_TOKEN is optional and, when set, long enough to guess at no better than chance', () => {
    assert.equal(loadConfig({}).metricsToken, undefined)
    assert.equal(loadConfig({ METRICS_TOKEN: 'm'.repeat(32) }).metricsToken, 'm'.repeat(32))
    assert.throws(() => loadConfig({ METRICS_TOKEN: 'short' }), /METRICS_TOKEN/)
  })

  test('sign-in link limits: per email from one address, per email overall, per address', () => {
    assert.deepEqual(loadConfig({}).magicLinkLimits, { perEmail: 5, perEmailTotal: 20, perAddress: 30, windowMs: 900_000 })
    assert.equal(loadConfig({ MAGIC_LINK_MAX_PER_EMAIL_TOTAL: '50' }).magicLinkLimits.perEmailTotal, 50)
    assert.throws(() => loadConfig({ MAGIC_LINK_MAX_PER_EMAIL_TOTAL: '0' }), /MAGIC_LINK_MAX_PER_EMAIL_TOTAL/)
  })

  test('BigCommerce: hosts default to the platform, the app client is set whole, the token key is 32 bytes, PLATFORM_CREDENTIALS is refused', () => {
    const config = loadConfig({})
    assert.deepEqual([config.billing.platformApiUrl, config.billing.platformPaymentsUrl, config.platform.loginUrl], ['https://api.bigcommerce.com', 'https://payments.bigcommerce.com', 'https://login.bigcommerce.com'])
    assert.equal(config.platform.app, undefined)
    assert.equal(config.platform.tokenKey, undefined)
    assert.deepEqual(loadConfig({ PLATFORM_CLIENT_ID: 'id', PLATFORM_CLIENT_SECRET: 'secret' }).platform.app, { clientId: 'id', clientSecret: 'secret' })
    assert.throws(() => loadConfig({ PLATFORM_CLIENT_ID: 'id' }), /PLATFORM_CLIENT_ID and PLATFORM_CLIENT_SECRET/)
    const key = Buffer.alloc(32, 7)
    assert.deepEqual(loadConfig({ PLATFORM_TOKEN_KEY: key.toString('hex') }).platform.tokenKey, key)
    assert.deepEqual(loadConfig({ PLATFORM_TOKEN_KEY: key.toString('base64') }).platform.tokenKey, key)
    assert.deepEqual(loadConfig({ PLATFORM_TOKEN_KEY: key.toString('base64url') }).platform.tokenKey, key)
    for (const bad of ['short', Buffer.alloc(31).toString('base64'), 'zz'.repeat(32)]) {
      assert.throws(() => loadConfig({ PLATFORM_TOKEN_KEY: bad }), (error: Error) => /PLATFORM_TOKEN_KEY/.test(error.message) && !error.message.includes(bad))
    }
    assert.throws(() => loadConfig({ PLATFORM_API_URL: 'ftp://x' }), /PLATFORM_API_URL/)
    assert.throws(() => loadConfig({ PLATFORM_CREDENTIALS: '{}' }), /PLATFORM_CREDENTIALS is no longer read/)
  })
})
