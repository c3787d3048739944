import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import { runCli as runCliInProcess } from '../../src/cli.ts'
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.ts'
import { sha256Hex } from '../../src/lib/secrets.ts'
import { createTestDatabase, onPostgres } from '../helpers/database.ts'
import { newDataDir } from '../helpers/data-dir.ts'
import { NODE_FLAGS } from '../helpers/server-process.ts'
import { buildTestApp, call, type TestApp } from '../helpers/test-app.ts'

const CLI_ENTRY = new URL('../../src/cli.ts', import.meta.url).pathname
const KEY_PATTERN = /sk_(?:test|live)_[A-Za-z0-9_-]{43}/

interface Target {
  /** What the CLI needs in its environment to reach this database. */
  env: Record<string, string>
  open(): Promise<DatabaseHandle>
  remove(): Promise<void>
}

/**
 * An empty, unmigrated database the CLI processes share: a fresh DATA_DIR, or with DATABASE_URL set a
 * scratch PostgreSQL database (plus a DATA_DIR, where `demo` keeps its key file).
 */
async function createTarget(): Promise<Target> {
  const adminUrl = process.env.DATABASE_URL
  // On PGlite, a copy of a database initdb made and nothing else (test/helpers/data-dir.ts): new to the CLI.
  const dataDir = adminUrl ? mkdtempSync(join(tmpdir(), 'sb-cli-')) : await newDataDir('sb-cli-')
  const removeDir = () => rmSync(dataDir, { recursive: true, force: true })
  if (!adminUrl) {
    return { env: { DATA_DIR: dataDir }, open: () => connectDatabase({ dataDir }), remove: async () => removeDir() }
  }
  const name = `sb_test_${process.pid}_${randomBytes(4).toString('hex')}`
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    env: { DATABASE_URL: url.toString(), DATA_DIR: dataDir },
    open: () => connectDatabase({ databaseUrl: url.toString(), poolSize: 2 }),
    remove: async () => {
      await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      removeDir()
    },
  }
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/** The environment a CLI run gets: the test's own, pointed at the target instead of any configured database. */
function cliEnv(target: Target): Record<string, string | undefined> {
  const { DATABASE_URL: _url, DATA_DIR: _dir, ...inherited } = process.env
  return { ...inherited, ...target.env }
}

/** The CLI as an operator runs it: a process of its own (exit code, stdout and stderr as the shell sees them). */
async function spawnCli(target: Target, ...args: string[]): Promise<CliResult> {
  const child = spawn(process.execPath, [...NODE_FLAGS, CLI_ENTRY, ...args], { env: cliEnv(target), stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const [code] = await once(child, 'close')
  return { code: code as number | null, stdout, stderr }
}

/**
 * The same command line run in this process on the file's open database: what each command does, prints and
 * exits with, without starting Node and opening the database again for every line (~3 s each). The process
 * boundary itself (the entry point, exit codes and streams as the shell sees them, the DATA_DIR lock) is
 * covered by the spawned runs below.
 */
function cliOn(target: Target, database: DatabaseHandle) {
  return async (...args: string[]): Promise<CliResult> => {
    let stdout = ''
    let stderr = ''
    const code = await runCliInProcess(args, { env: cliEnv(target), stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), database })
    return { code, stdout, stderr }
  }
}

/** The service in-process on the CLI's database: an app of its own each time, so no cache of an earlier one answers. */
async function getStore(database: DatabaseHandle, key: string): Promise<{ statusCode: number; json: any }> {
  const t = await buildTestApp({ database })
  try {
    return await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: { authorization: `Bearer ${key}` } })
  } finally {
    await t.close()
  }
}

describe('the CLI as a process', () => {
  let target: Target

  before(async () => {
    target = await createTarget()
  })
  after(() => target.remove())

  test('migrate on a new database runs every migration, and a second run runs none', async () => {
    const first = await spawnCli(target, 'migrate')
    assert.equal(first.code, 0, first.stderr)
    assert.match(first.stdout, /migrated 0001-foundation/)
    const second = await spawnCli(target, 'migrate', '--json')
    assert.equal(second.code, 0, second.stderr)
    assert.deepEqual(JSON.parse(second.stdout), { ran: [] })
  })

  test('the key goes to stdout and the shown-once warning to stderr; a refusal exits 1 and a wrong call 2, with nothing on stdout', async () => {
    const created = await spawnCli(target, 'store', 'create', '--hash', 'shop-process')
    assert.equal(created.code, 0, created.stderr)
    assert.match(created.stdout, KEY_PATTERN)
    assert.match(created.stderr, /shown only once/)
    assert.doesNotMatch(created.stderr, KEY_PATTERN)
    const duplicate = await spawnCli(target, 'store', 'create', '--hash', 'shop-process')
    assert.equal(duplicate.code, 1)
    assert.match(duplicate.stderr, /store shop-process already exists/)
    assert.equal(duplicate.stdout, '')
    const wrong = await spawnCli(target, 'store', 'create', '--hash', 'x', '--bogus')
    assert.equal(wrong.code, 2)
    assert.match(wrong.stderr, /--bogus/)
    assert.equal(wrong.stdout, '')
  })

  test('on the embedded database the CLI refuses a DATA_DIR another process holds, exit 1', { skip: onPostgres && 'PostgreSQL has no DATA_DIR lock' }, async () => {
    const held = await target.open()
    try {
      const result = await spawnCli(target, 'store', 'list')
      assert.equal(result.code, 1)
      assert.match(result.stderr, new RegExp(`is in use by process ${process.pid}`))
    } finally {
      await held.close()
    }
  })
})

describe('admin CLI', () => {
  let target: Target
  let database: DatabaseHandle
  let runCli: (...args: string[]) => Promise<CliResult>

  before(async () => {
    // A migrated test database (the spawned runs above migrate a new one), and a DATA_DIR for demo's key file.
    target = await createTarget()
    database = await createTestDatabase()
    runCli = cliOn(target, database)
  })
  after(async () => {
    await database.close()
    await target.remove()
  })

  async function runJson(...args: string[]): Promise<any> {
    const result = await runCli(...args, '--json')
    assert.equal(result.code, 0, `${args.join(' ')} failed: ${result.stderr}`)
    return JSON.parse(result.stdout)
  }

  test('migrate on an up-to-date database runs none', async () => {
    assert.deepEqual(await runJson('migrate'), { ran: [] })
    assert.match((await runCli('migrate')).stdout, /schema is up to date; no migrations ran/)
  })

  test('store create prints a first admin key, once, that authenticates as that store', async () => {
    const result = await runCli('store', 'create', '--hash', 'shop-a', '--name', 'Shop A', '--mode', 'live', '--timezone', 'Europe/Berlin')
    assert.equal(result.code, 0, result.stderr)
    const key = KEY_PATTERN.exec(result.stdout)?.[0]
    assert.ok(key, `no key in: ${result.stdout}`)
    assert.match(result.stderr, /shown only once/)
    const response = await getStore(database, key)
    assert.equal(response.statusCode, 200)
    assert.equal(response.json.store_hash, 'shop-a')
    assert.equal(response.json.name, 'Shop A')
    assert.equal(response.json.mode, 'live')
    assert.equal(response.json.timezone, 'Europe/Berlin')
  })

  test('store create with a store hash that exists exits 1 and says so', async () => {
    await runJson('store', 'create', '--hash', 'shop-dup', '--no-key')
    const result = await runCli('store', 'create', '--hash', 'shop-dup')
    assert.equal(result.code, 1)
    assert.match(result.stderr, /store shop-dup already exists/)
    assert.equal(result.stdout, '')
  })

  test('store create with a setting the domain refuses exits 1 naming the flag', async () => {
    const result = await runCli('store', 'create', '--hash', 'shop-tz', '--timezone', 'Mars/Olympus')
    assert.equal(result.code, 1)
    assert.match(result.stderr, /--timezone is not an IANA time zone/)
  })

  test('store create --no-key creates the store without any key', async () => {
    const created = await runJson('store', 'create', '--hash', 'shop-nokey', '--no-key')
    assert.equal(created.store.store_hash, 'shop-nokey')
    assert.equal(created.admin_key, null)
    assert.deepEqual((await runJson('key', 'list', '--store', 'shop-nokey')).keys, [])
  })

  test('key revoke makes a key created by key create fail with 401', async () => {
    await runJson('store', 'create', '--hash', 'shop-revoke', '--no-key')
    const created = await runJson('key', 'create', '--store', 'shop-revoke', '--name', 'ci')
    assert.match(created.key, KEY_PATTERN)
    assert.equal(created.name, 'ci')
    assert.equal((await getStore(database, created.key)).statusCode, 200)

    const revoked = await runCli('key', 'revoke', created.id)
    assert.equal(revoked.code, 0, revoked.stderr)
    assert.equal((await getStore(database, created.key)).statusCode, 401)
    const listed = await runJson('key', 'list', '--store', 'shop-revoke')
    assert.ok(listed.keys.find((k: any) => k.id === created.id).revoked_at)
  })

  test('key revoke of a key that does not exist or is already revoked exits 1', async () => {
    const result = await runCli('key', 'revoke', 'key_01JD2Y5T1P8Q0W9KZ3M6N4R7BC')
    assert.equal(result.code, 1)
    assert.match(result.stderr, /no active admin key key_01JD2Y5T1P8Q0W9KZ3M6N4R7BC/)
  })

  test('key list shows each key by id, name and prefix but never the key or its hash', async () => {
    const created = await runJson('store', 'create', '--hash', 'shop-list')
    const { key, id } = created.admin_key
    const text = await runCli('key', 'list', '--store', 'shop-list')
    const json = await runCli('key', 'list', '--store', 'shop-list', '--json')
    for (const output of [text.stdout, json.stdout]) {
      assert.ok(output.includes(id))
      assert.ok(output.includes(key.slice(0, 12)), 'the prefix tells keys apart')
      assert.ok(!output.includes(key), 'the key was printed')
      assert.ok(!output.includes(sha256Hex(key)), 'the key hash was printed')
    }
    assert.deepEqual(Object.keys(JSON.parse(json.stdout).keys[0]).sort(), ['created_at', 'id', 'key_prefix', 'last_used_at', 'name', 'revoked_at'])
  })

  test('key commands for a store that does not exist exit 1', async () => {
    const result = await runCli('key', 'create', '--store', 'no-such-store')
    assert.equal(result.code, 1)
    assert.match(result.stderr, /store no-such-store was not found/)
  })

  test('--json output of every command parses', async () => {
    const store = await runJson('store', 'create', '--hash', 'shop-json', '--mode', 'test')
    assert.equal(store.store.store_hash, 'shop-json')
    assert.equal(store.store.mode, 'test')
    assert.match(store.admin_key.key, /^sk_test_/)
    const stores = await runJson('store', 'list')
    assert.ok(stores.stores.some((s: any) => s.store_hash === 'shop-json' && s.id === store.store.id))
    const key = await runJson('key', 'create', '--store', 'shop-json')
    assert.equal(key.store_hash, 'shop-json')
    assert.equal((await runJson('key', 'list', '--store', 'shop-json')).keys.length, 2)
    assert.deepEqual(await runJson('key', 'revoke', key.id), { id: key.id, revoked: true })
    assert.ok(Array.isArray((await runJson('migrate')).ran))
    assert.ok(Array.isArray((await runJson('help')).commands))
  })

  test('an unknown command, unknown flag, missing flag or bad flag value exits 2 with the reason on stderr', async () => {
    const cases: [string[], RegExp][] = [
      [['frobnicate'], /unknown command "frobnicate"/],
      [['store'], /unknown command "store"; try store create, store list/],
      [['store', 'create', '--hash', 'x', '--bogus'], /--bogus/],
      [['key', 'list', '--hash', 'x'], /--hash/],
      [['store', 'create'], /--hash is required/],
      [['store', 'create', '--hash', 'x', '--mode', 'staging'], /--mode must be test or live/],
      [['store', 'create', '--hash', 'not a hash!'], /--hash must be/],
      [['key', 'revoke'], /key revoke <key_id>/],
      [['migrate', 'extra'], /usage: npm run cli -- migrate/],
    ]
    // None of these reaches the database, so they may run side by side even on PGlite.
    const results = await Promise.all(cases.map(([args]) => runCli(...args)))
    for (const [i, [args, message]] of cases.entries()) {
      const result = results[i]!
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`)
      assert.match(result.stderr, message)
      assert.equal(result.stdout, '')
    }
  })

  test('help, --help and no arguments print the usage and exit 0', async () => {
    for (const result of await Promise.all([['help'], ['--help'], []].map((args) => runCli(...args)))) {
      assert.equal(result.code, 0)
      assert.match(result.stdout, /Usage: npm run cli -- <command>/)
      assert.match(result.stdout, /store create --hash <store_hash>/)
    }
  })

  test('demo loads the demo store and prints an admin key; a second run finds it and prints a new key (keys are shown once)', async () => {
    const first = await runJson('demo')
    assert.equal(first.store_hash, 'demo-store')
    assert.equal(first.created, true)
    const second = await runJson('demo')
    assert.equal(second.created, false)
    assert.notEqual(second.admin_key, first.admin_key)
    for (const key of [first.admin_key, second.admin_key]) {
      const response = await getStore(database, key)
      assert.equal(response.statusCode, 200)
      assert.equal(response.json.store_hash, 'demo-store')
    }
  })
})
