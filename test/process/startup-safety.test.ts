// What `npm start` refuses or tightens before it serves anyone (docs/contract.md, Running it), proved
// against real processes on temporary DATA_DIRs: mail for sign-in links, the embedded database's file
// modes, and demo data that only a fresh local database gets, its admin key printed once.
import assert from 'node:assert/strict'
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { newDataDir } from '../helpers/data-dir.ts'
import { startServer, startServerExpectingFailure } from '../helpers/server-process.ts'

// Nothing listens there: no test here sends mail, and a transport connects only to send.
const SMTP_URL = 'smtp://127.0.0.1:9'
const DEMO_KEY = /Demo admin key\s+(sk_test_\S+)/
const BOOTSTRAP = { BOOTSTRAP_STORE_HASH: 'live-shop', BOOTSTRAP_ADMIN_API_KEY: 'sk_live_startup_safety_0123456789abcdef', BOOTSTRAP_STORE_MODE: 'live' }

/** Every file and directory under dir (dir included) with its permission bits. */
function modesUnder(dir: string): Array<{ path: string; mode: number; directory: boolean }> {
  const found = [{ path: dir, mode: statSync(dir).mode & 0o777, directory: true }]
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name)
    const stat = statSync(path)
    found.push({ path, mode: stat.mode & 0o777, directory: stat.isDirectory() })
  }
  return found
}

const octal = (mode: number) => `0${mode.toString(8)}`

describe('starting the service safely', () => {
  let root: string

  const copies: string[] = []
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'billing-startup-'))
  })
  after(() => {
    for (const dir of [root, ...copies]) rmSync(dir, { recursive: true, force: true })
  })
  // Past the first test, a DATA_DIR holding a database initdb made (test/helpers/data-dir.ts): the same start, 5 s sooner.
  const copiedDataDir = async (name: string) => {
    const dir = await newDataDir(`billing-${name}-`)
    copies.push(dir)
    return dir
  }

  test('a fresh local start: DATA_DIR 0700 with no file open to others, demo data with its key printed once, one warning about mail', async () => {
    const dataDir = join(root, 'fresh', 'data')
    // Exactly as `npm start` on a new clone: an empty directory, and no test-only Node flags.
    const first = await startServer({ DATA_DIR: dataDir, LOG_LEVEL: 'info' }, 60_000, [])
    let key: string
    try {
      const output = first.output()
      key = DEMO_KEY.exec(output)?.[1] ?? assert.fail(`no demo key printed:\n${output}`)
      assert.equal(output.match(/SMTP_URL is not set/g)?.length, 1, `one warning about mail:\n${output}`)
      assert.equal((await fetch(`${first.origin}/api/v1/admin/store`, { headers: { authorization: `Bearer ${key}` } })).status, 200)
    } finally {
      assert.equal(await first.stop(), 0)
    }
    const modes = modesUnder(dataDir)
    assert.ok(modes.length > 10, 'the embedded database wrote its files')
    assert.equal(octal(modes[0]!.mode), '0700', 'DATA_DIR is private')
    const open = modes.filter((entry) => (entry.mode & 0o077) !== 0).map((entry) => `${entry.path} ${octal(entry.mode)}`)
    assert.deepEqual(open, [], 'no file or directory under DATA_DIR is open to group or others')

    const second = await startServer({ DATA_DIR: dataDir })
    try {
      const output = second.output()
      assert.doesNotMatch(output, /sk_test_/, 'a later start never prints the demo key')
      assert.match(output, /Demo store\s+demo-store .*printed when it was created/)
      assert.equal((await fetch(`${second.origin}/api/v1/admin/store`, { headers: { authorization: `Bearer ${key}` } })).status, 200, 'the printed key still works')
      const products = await fetch(`${second.origin}/api/v1/products?store_hash=demo-store`)
      assert.equal(((await products.json()) as { data: unknown[] }).data.length, 2, 'the demo catalogue was not made twice')
    } finally {
      await second.stop()
    }
  })

  test('an existing database without the demo store does not get one', async () => {
    const dataDir = await copiedDataDir('no-demo')
    const first = await startServer({ DATA_DIR: dataDir, SEED_DEMO_DATA: 'false' })
    await first.stop()
    const second = await startServer({ DATA_DIR: dataDir })
    try {
      assert.doesNotMatch(second.output(), /Demo/)
      const products = await fetch(`${second.origin}/api/v1/products?store_hash=demo-store`)
      assert.deepEqual(((await products.json()) as { data: unknown[] }).data, [], 'no demo catalogue')
    } finally {
      await second.stop()
    }
  })

  test('production on an existing DATA_DIR open to others: tightened to 0700 and logged, and no demo data', async () => {
    const dataDir = await copiedDataDir('loose')
    chmodSync(dataDir, 0o755)
    const server = await startServer({ DATA_DIR: dataDir, NODE_ENV: 'production', SMTP_URL, ...BOOTSTRAP })
    try {
      const output = server.output()
      assert.match(output, /DATA_DIR .*0755.*0700/, `the tightening is logged:\n${output}`)
      assert.doesNotMatch(output, /Demo|sk_test_/)
      const products = await fetch(`${server.origin}/api/v1/products?store_hash=demo-store`)
      assert.deepEqual(((await products.json()) as { data: unknown[] }).data, [], 'no demo store in production')
    } finally {
      await server.stop()
    }
    assert.equal(octal(statSync(dataDir).mode & 0o777), '0700')

    // The live store is in this database now: no start without SMTP_URL, in development either.
    const refused = await startServerExpectingFailure({ DATA_DIR: dataDir }, 90_000)
    assert.notEqual(refused.code, 0)
    assert.match(refused.output, /SMTP_URL/)
    assert.match(refused.output, /live/)
  })

  test('production or a live bootstrap store without SMTP_URL refuses to start, naming it', async () => {
    const dataDir = await copiedDataDir('refused')
    for (const env of [{ NODE_ENV: 'production' }, BOOTSTRAP]) {
      const result = await startServerExpectingFailure({ DATA_DIR: dataDir, ...env })
      assert.notEqual(result.code, 0)
      assert.match(result.output, /SMTP_URL/)
    }
  })
})
