// How the benches that drive the service's modules in this process (renewals, webhooks) start: their
// settings for the engine DATABASE_URL selects, the machine's background load, and a migrated database
// of their own, connected with the bench's pool and cleaned up however the bench ends.
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { connectDatabase, type DatabaseHandle, type Engine } from '../../src/db/connect.ts'
import type { Db } from '../../src/db/database.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { prepareBenchDatabase } from './bench-database.ts'
import { deferCleanup } from './cleanup.ts'
import { backgroundCpuBusy } from './report.ts'
import { serverVersion } from './seeding.ts'

export interface OpenedBenchDatabase {
  db: Db
  engine: Engine
  /** PostgreSQL's server_version (PGlite's, embedded). */
  version: string
  /** For the report: the engine and where it runs, its server_version, and the pool. */
  description: string
}

export interface DatabaseBench<S> extends OpenedBenchDatabase {
  settings: S
  startedAt: Date
  /** How busy the machine's CPUs were before the bench started anything (backgroundCpuBusy). */
  background: string
}

/**
 * Runs a database bench's `main` on its start: `readSettings` for the engine (PostgreSQL when DATABASE_URL
 * is set, PGlite otherwise), the background load, then openBenchDatabase. Nothing more when `readSettings`
 * answers undefined (after --help).
 */
export async function runDatabaseBench<S extends { pool: number }>(readSettings: (engine: Engine) => S | undefined, main: (bench: DatabaseBench<S>) => Promise<void>): Promise<void> {
  const serverUrl = process.env.DATABASE_URL || undefined
  const settings = readSettings(serverUrl ? 'postgres' : 'pglite')
  if (!settings) return
  const startedAt = new Date()
  const background = await backgroundCpuBusy()
  await main({ settings, startedAt, background, ...(await openBenchDatabase(serverUrl, settings.pool)) })
}

/**
 * A scratch database on the `serverUrl` PostgreSQL server (a fresh PGlite directory without one),
 * connected with a pool of `pool` and migrated; closed and dropped by the bench's cleanup.
 */
export async function openBenchDatabase(serverUrl: string | undefined, pool: number): Promise<OpenedBenchDatabase> {
  const engine: Engine = serverUrl ? 'postgres' : 'pglite'
  const database = await prepareBenchDatabase(serverUrl)
  deferCleanup(database.dispose)
  const handle = await connectDatabase({ databaseUrl: database.env.DATABASE_URL, dataDir: database.env.DATA_DIR, poolSize: pool })
  deferCleanup(() => closeDatabase(handle, serverUrl, database.env.DATABASE_URL))
  const db = handle.db
  await migrateToLatest(db)
  const version = await serverVersion(db)
  const description = `${database.description}, server_version ${version}${engine === 'postgres' ? `, pool of ${pool}` : ', one connection'}`
  return { db, engine, version, description }
}

/** Closes the pool and lets its sockets go before the scratch database is dropped WITH (FORCE). */
async function closeDatabase(handle: DatabaseHandle, serverUrl: string | undefined, benchUrl: string | undefined): Promise<void> {
  await handle.close()
  if (!serverUrl || !benchUrl) return
  const name = new URL(benchUrl).pathname.slice(1)
  const client = new pg.Client({ connectionString: serverUrl })
  await client.connect()
  try {
    for (let waited = 0; waited < 5_000; waited += 20) {
      const { rows } = await client.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = $1', [name])
      if (rows[0]!.n === 0) break
      await sleep(20)
    }
  } finally {
    await client.end()
  }
}
