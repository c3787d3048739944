import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { createTestDatabase, onPostgres, scratchUrl } from '../helpers/database.ts'
import { newDataDir } from '../helpers/data-dir.ts'
import { startServer, startServerExpectingFailure } from '../helpers/server-process.ts'
import type { DatabaseHandle } from '../../src/db/connect.ts'

const BOOTSTRAP_KEY = 'sk_test_bootstrap_key_for_tests_0123456789'

describe('the service as a process (npm start)', () => {
  let dataDir: string
  let scratch: DatabaseHandle | undefined
  let env: Record<string, string>

  before(async () => {
    // On PGlite, a copy of a database initdb made (test/helpers/data-dir.ts); startup-safety starts on an empty directory.
    dataDir = onPostgres ? mkdtempSync(join(tmpdir(), 'billing-start-')) : await newDataDir('billing-start-')
    env = { DATA_DIR: dataDir }
    if (onPostgres) {
      // The scratch database is migrated already; the server must cope with that as well as with a fresh one.
      scratch = await createTestDatabase()
      env = { ...env, DATABASE_URL: scratchUrl(scratch)!, SEED_DEMO_DATA: 'true' }
    }
  })
  after(async () => {
    await scratch?.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  test('starts with demo data, answers /healthz and the storefront with demo plans, and prints where to look', async () => {
    const server = await startServer(env)
    try {
      const output = server.output()
      assert.match(output, /API reference\s+http:\/\/127\.0\.0\.1:\d+\/docs/)
      assert.match(output, /Demo admin key\s+sk_test_[A-Za-z0-9_-]{43}/)
      const health = await fetch(`${server.origin}/healthz`)
      assert.equal(health.status, 200)
      const plans = await fetch(`${server.origin}/api/v1/storefront/plans?store_hash=demo-store&platform_product_id=112`)
      assert.equal(plans.status, 200)
      const body = (await plans.json()) as { data: unknown[] }
      assert.equal(body.data.length, 4)
      const key = /Demo admin key\s+(\S+)/.exec(output)![1]
      const store = await fetch(`${server.origin}/api/v1/admin/store`, { headers: { authorization: `Bearer ${key}` } })
      assert.equal(store.status, 200)
      process.stdout.write(`# started in ${Math.round(server.startMs)} ms on ${onPostgres ? 'PostgreSQL' : 'PGlite'}\n`)
      assert.ok(server.startMs < 30_000)
    } finally {
      assert.equal(await server.stop('SIGTERM'), 0, 'SIGTERM shuts down cleanly with exit code 0')
    }
  })

  test('a restart keeps the data, and the demo admin key is printed only when it is made', async () => {
    const first = await startServer(env)
    assert.doesNotMatch(first.output(), /Demo admin key|sk_test_/, 'the demo store was made by the first start, and its key printed then')
    assert.match(first.output(), /Demo store\s+demo-store/)
    assert.equal(await first.stop(), 0)
    const second = await startServer(env)
    try {
      assert.doesNotMatch(second.output(), /sk_test_/)
      const products = await fetch(`${second.origin}/api/v1/products?store_hash=demo-store`)
      assert.equal(((await products.json()) as { data: unknown[] }).data.length, 2, 'the demo catalogue was not created twice')
    } finally {
      await second.stop()
    }
  })

  test('bootstrap variables make that store and key work, on every start', async () => {
    // A live store needs mail for its sign-in links; nothing is sent here (a transport connects only to send).
    const bootstrapEnv = { ...env, BOOTSTRAP_STORE_HASH: 'boot-store', BOOTSTRAP_ADMIN_API_KEY: BOOTSTRAP_KEY, BOOTSTRAP_STORE_MODE: 'live', SMTP_URL: 'smtp://127.0.0.1:9' }
    for (let start = 0; start < 2; start++) {
      const server = await startServer(bootstrapEnv)
      try {
        const response = await fetch(`${server.origin}/api/v1/admin/store`, { headers: { authorization: `Bearer ${BOOTSTRAP_KEY}` } })
        assert.equal(response.status, 200)
        const store = (await response.json()) as { store_hash: string; mode: string }
        assert.equal(store.store_hash, 'boot-store')
        assert.equal(store.mode, 'live')
        const demo = await fetch(`${server.origin}/api/v1/products?store_hash=demo-store`)
        assert.equal(((await demo.json()) as { data: unknown[] }).data.length, 2, 'other stores are left as they were')
      } finally {
        await server.stop()
      }
    }
  })

  test('a bad configuration value stops the start with a message naming the variable', async () => {
    const result = await startServerExpectingFailure({ ...env, PORT: 'not-a-port' })
    assert.notEqual(result.code, 0)
    assert.match(result.output, /PORT/)
  })
})

describe('the embedded database directory', { skip: onPostgres ? 'PGlite only: PostgreSQL allows many processes' : false }, () => {
  let dataDir: string

  before(async () => {
    dataDir = await newDataDir('billing-lock-')
  })
  after(() => rmSync(dataDir, { recursive: true, force: true }))

  test('a second process on the same DATA_DIR fails with a clear error, and the first keeps serving', async () => {
    const first = await startServer({ DATA_DIR: dataDir })
    try {
      const second = await startServerExpectingFailure({ DATA_DIR: dataDir })
      assert.notEqual(second.code, 0)
      assert.match(second.output, /DATA_DIR .* is in use by process \d+/)
      assert.equal((await fetch(`${first.origin}/healthz`)).status, 200)
    } finally {
      await first.stop()
    }
  })

  test('a process killed with SIGKILL leaves a lock the next start takes over, with the data intact', async () => {
    const first = await startServer({ DATA_DIR: dataDir, BOOTSTRAP_STORE_HASH: 'lock-store', BOOTSTRAP_ADMIN_API_KEY: BOOTSTRAP_KEY })
    await first.stop('SIGKILL')
    const second = await startServer({ DATA_DIR: dataDir })
    try {
      const store = await fetch(`${second.origin}/api/v1/admin/store`, { headers: { authorization: `Bearer ${BOOTSTRAP_KEY}` } })
      assert.equal(store.status, 200)
    } finally {
      await second.stop()
    }
  })
})

describe('several processes on one PostgreSQL database', { skip: onPostgres ? false : 'needs DATABASE_URL' }, () => {
  test('start together, migrate once, and serve the same data', async () => {
    const scratch = await createTestDatabase()
    // Start from an empty schema so both processes race to migrate it.
    await sql`DROP SCHEMA public CASCADE`.execute(scratch.db)
    await sql`CREATE SCHEMA public`.execute(scratch.db)
    const dataDir = mkdtempSync(join(tmpdir(), 'billing-pg-'))
    const env = { DATABASE_URL: scratchUrl(scratch)!, DATA_DIR: dataDir, BOOTSTRAP_STORE_HASH: 'shared', BOOTSTRAP_ADMIN_API_KEY: BOOTSTRAP_KEY }
    const [a, b] = await Promise.all([startServer({ ...env, ROLE: 'api' }), startServer({ ...env, ROLE: 'worker' })])
    try {
      const created = await fetch(`${a.origin}/api/v1/admin/products`, {
        method: 'POST',
        headers: { authorization: `Bearer ${BOOTSTRAP_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ platform_product_id: 'seen-by-both', name: 'Shared' }),
      })
      assert.equal(created.status, 201)
      const { id } = (await created.json()) as { id: string }
      const read = await fetch(`${b.origin}/api/v1/admin/products/${id}`, { headers: { authorization: `Bearer ${BOOTSTRAP_KEY}` } })
      assert.equal(read.status, 200)
    } finally {
      await Promise.all([a.stop(), b.stop()])
      await scratch.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
