import pg from 'pg'
// wall clock: the PostgreSQL server ends closed sessions on its own time (below).
import { setTimeout as sleep } from 'node:timers/promises'
import { Kysely, PGliteDialect, sql } from 'kysely'
import { PGlite } from '@electric-sql/pglite'
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.ts'
import type { Db } from '../../src/db/database.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'

/** True when the suite runs against real PostgreSQL (DATABASE_URL set), false on embedded PGlite. */
export const onPostgres = Boolean(process.env.DATABASE_URL)

/**
 * A migrated, empty database of its own: in-memory PGlite by default, or a scratch PostgreSQL
 * database created for this caller and dropped on close, so runs never see each other's rows.
 */
export async function createTestDatabase(): Promise<DatabaseHandle> {
  const adminUrl = process.env.DATABASE_URL
  if (!adminUrl) {
    const handle = await connectDatabase({ dataDir: 'memory://', loadDataDir: await migratedPgliteDump() })
    // A no-op on the migrated copy; it keeps a dump that fell behind the migrations from going unnoticed.
    await migrateToLatest(handle.db)
    return handle
  }
  const name = `sb_test_${process.pid}_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  const handle = await connectDatabase({ databaseUrl: url.toString(), poolSize: 5, onIdleConnectionError: () => {} })
  await migrateToLatest(handle.db)
  return {
    ...handle,
    close: async () => {
      await handle.close()
      const dropper = new pg.Client({ connectionString: adminUrl })
      await dropper.connect()
      // Servers a test started may still be closing their sessions; FORCE is the backstop, not the plan.
      for (let tries = 0; tries < 50; tries++) {
        const { rows } = await dropper.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name])
        if (rows[0].n === 0) break
        // wall clock: the PostgreSQL server ends the closed pools' sessions on its own time; polled, with a bound.
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await dropper.end()
    },
  }
}

/** The scratch database's own URL, for tests that start separate processes on it. */
export function scratchUrl(handle: DatabaseHandle): string | undefined {
  if (!process.env.DATABASE_URL) return undefined
  const url = new URL(process.env.DATABASE_URL)
  url.pathname = handle.location.slice(handle.location.lastIndexOf('/'))
  return url.toString()
}

/**
 * A new PGlite runs initdb (~1.3 s) and the migrations (~0.2 s); a copy of one already migrated loads in
 * ~0.3 s. The copy is made once per set of migrations (named by a hash of their source and PGlite's
 * version) and kept under node_modules/.cache, shared by every test process.
 */
function migratedPgliteDump(): Promise<Blob> {
  // One Blob per process: making one copies the 42 MB dump (~0.3 s of CPU), and in the shared test lane
  // (scripts/test.ts) one process loads it for every file. PGlite only reads it.
  loadedDump ??= readMigratedPgliteDump()
  return loadedDump
}
let loadedDump: Promise<Blob> | undefined

async function readMigratedPgliteDump(): Promise<Blob> {
  const migrationsDir = new URL('../../src/db/migrations/', import.meta.url)
  const hash = createHash('sha256').update(readFileSync(new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url)))
  for (const name of readdirSync(migrationsDir).sort()) hash.update(name).update(readFileSync(new URL(name, migrationsDir)))
  const file = fileURLToPath(new URL(`../../node_modules/.cache/subscription-billing/pglite-${hash.digest('hex').slice(0, 16)}.tar`, import.meta.url))
  if (!existsSync(file)) {
    const pglite = await PGlite.create()
    const db = new Kysely<any>({ dialect: new PGliteDialect({ pglite }) })
    await migrateToLatest(db)
    const dump = Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer())
    await db.destroy()
    mkdirSync(dirname(file), { recursive: true })
    // Written aside and renamed, so a concurrent test process never reads half a file.
    const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`
    writeFileSync(partial, dump)
    renameSync(partial, file)
  }
  return new Blob([readFileSync(file)])
}

const POOL_TAG = `extra-pool-${process.pid}`

/** The scratch database's URL, naming the extra pools so closePools can wait for exactly their sessions. */
export function taggedUrl(url: string): string {
  const tagged = new URL(url)
  tagged.searchParams.set('application_name', POOL_TAG)
  return tagged.toString()
}

/**
 * Closes extra pools opened on a taggedUrl. pg's pool.end() resolves before its sockets close; dropping
 * the scratch database WITH (FORCE) in that window makes the server kill them, and the pool re-emits that
 * as an unhandled 'error'. Wait them out (`db` is a connection of the test's own, to watch from).
 */
export async function closePools(db: Db, pools: DatabaseHandle[]): Promise<void> {
  await Promise.all(pools.map((pool) => pool.close()))
  for (let waited = 0; waited < 5_000; waited += 20) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where application_name = ${POOL_TAG}`.execute(db)
    if (rows[0]!.n === 0) return
    // wall clock: the PostgreSQL server ends the closed pools' sessions on its own time; polled, with a deadline.
    await sleep(20)
  }
}
