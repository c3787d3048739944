import pg from 'pg'
// wall clock: the PostgreSQL server ends closed sessions on its own time (below).
import { setTimeout as sleep } from 'node:timers/promises'
import { Kysely, PGliteDialect, sql } from 'kysely'
import { PGlite } from '@electric-sql/pglite'
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { connectDatabase, PGLITE_EXTENSIONS, PGLITE_PARSERS, type DatabaseHandle } from '../../src/db/connect.ts'
import { FifoPGliteDialect } from '../../src/db/pglite-fifo-dialect.ts'
import type { Database, Db } from '../../src/db/database.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'

/** True when the suite runs against real PostgreSQL (DATABASE_URL set), false on embedded PGlite. */
export const onPostgres = Boolean(process.env.DATABASE_URL)

/**
 * A migrated, empty database of its own: in-memory PGlite by default, or a scratch PostgreSQL
 * database created for this caller and dropped on close, so runs never see each other's rows.
 */
export async function createTestDatabase(): Promise<DatabaseHandle> {
  const adminUrl = process.env.DATABASE_URL
  if (!adminUrl) return embeddedTestDatabase()
  const name = `sb_test_${process.pid}_${randomBytes(4).toString('hex')}`
  const template = await migratedTemplate(adminUrl)
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`)
  await admin.end()
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  const handle = await connectDatabase({ databaseUrl: url.toString(), poolSize: 5, onIdleConnectionError: () => {} })
  // A no-op on the migrated copy; it keeps a template that fell behind the migrations from going unnoticed.
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

/**
 * In-memory PGlite databases whose last user closed them, emptied, for the next caller in this process.
 * Why: loading the migrated copy costs ~1-2 s of CPU, and the shared test lanes (scripts/test.ts) make
 * about fifty databases per process, one after another. One goes back only when it is exactly as
 * migrated (its tables, columns, constraints, indexes, triggers and their state, functions, schemas,
 * roles and session settings: a test that added a refusing trigger or a constraint hands back one that
 * is closed instead) and then has every table truncated with its sequences restarted, so the next user
 * sees what a fresh copy holds. A handle once closed reaches nothing: its queries throw, as on a closed
 * PGlite.
 */
const idle: PGlite[] = []
let pristine: Promise<string> | undefined
/** How many embedded test databases this process loaded from the migrated copy, and how many it reused. */
export const embeddedDatabases = { loaded: 0, reused: 0 }

/** Everything a test could change about the database but its rows, as one hash. */
const SHAPE = `
  SELECT md5(string_agg(x, '|' ORDER BY x)) AS shape FROM (
    SELECT 'c ' || n.nspname || '.' || c.relname || ' ' || c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
    UNION ALL SELECT 'a ' || a.attrelid::regclass || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull::text || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE c.relnamespace = 'public'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
    UNION ALL SELECT 'k ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid) || ' ' || convalidated::text FROM pg_constraint WHERE connamespace = 'public'::regnamespace
    UNION ALL SELECT 'i ' || pg_get_indexdef(indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid WHERE c.relnamespace = 'public'::regnamespace
    UNION ALL SELECT 't ' || pg_get_triggerdef(oid) || ' ' || tgenabled::text FROM pg_trigger WHERE NOT tgisinternal
    UNION ALL SELECT 'p ' || n.nspname || '.' || p.proname || ' ' || md5(p.prosrc) || ' ' || p.provolatile::text || ' ' || p.prosecdef::text || ' ' || coalesce(p.proconfig::text, '')
      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
    UNION ALL SELECT 'y ' || t.typname || ' ' || t.typtype::text FROM pg_type t WHERE t.typnamespace = 'public'::regnamespace
    UNION ALL SELECT 'e ' || enumtypid::regtype || ' ' || enumlabel FROM pg_enum
    UNION ALL SELECT 'v ' || c.relname || ' ' || pg_get_viewdef(c.oid) FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('v', 'm')
    UNION ALL SELECT 'w ' || ev_class::regclass || ' ' || rulename FROM pg_rewrite WHERE ev_class::regclass::text NOT LIKE 'pg\_%' AND rulename <> '_RETURN'
    UNION ALL SELECT 'o ' || polrelid::regclass || ' ' || polname FROM pg_policy
    UNION ALL SELECT 'l ' || c.relname || ' ' || c.relrowsecurity::text FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relrowsecurity
    UNION ALL SELECT 'q ' || seqrelid::regclass || ' ' || seqstart || ' ' || seqincrement || ' ' || seqcycle::text FROM pg_sequence
    UNION ALL SELECT 'm ' || count(*)::text FROM kysely_migration
    UNION ALL SELECT 'h ' || pg_listening_channels()
    UNION ALL SELECT 'u ' || count(*)::text FROM pg_prepared_statements
    UNION ALL SELECT 'z ' || count(*)::text FROM pg_cursors
    UNION ALL SELECT 'n ' || nspname FROM pg_namespace
    UNION ALL SELECT 'r ' || rolname || ' ' || rolsuper::text || ' ' || rolcanlogin::text FROM pg_roles
    UNION ALL SELECT 's ' || name || '=' || setting FROM pg_settings WHERE source NOT IN ('default', 'override', 'configuration file', 'environment variable', 'command line', 'client')
    UNION ALL SELECT 'x ' || count(*)::text FROM pg_locks WHERE locktype = 'advisory'
  ) AS shape(x)`

const shapeOf = async (pglite: PGlite): Promise<string> => (await pglite.query<{ shape: string }>(SHAPE)).rows[0]!.shape

async function embeddedTestDatabase(): Promise<DatabaseHandle> {
  let pglite = idle.pop()
  if (pglite) embeddedDatabases.reused++
  else embeddedDatabases.loaded++
  if (!pglite) {
    pglite = await PGlite.create('memory://', { parsers: PGLITE_PARSERS, extensions: PGLITE_EXTENSIONS, loadDataDir: await migratedPgliteDump() })
    if (!pristine) {
      pristine = shapeOf(pglite)
      // Awaited at the first close; a failure there closes that instance instead of pooling it.
      pristine.catch(() => {})
    }
  }
  const own = pglite
  let closed = false
  let recycled: Promise<void> | undefined
  // Back to the pool when exactly as migrated, emptied; else closed. Once, however the handle is closed.
  const recycle = () =>
    (recycled ??= (async () => {
      closed = true
      if (own.closed) return
      try {
        if ((await shapeOf(own)) !== (await pristine)) throw new Error('changed')
        await own.query(`DO $$ BEGIN
          EXECUTE (SELECT 'TRUNCATE ' || string_agg(format('%I', tablename), ', ') || ' RESTART IDENTITY CASCADE' FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'kysely\\_%');
        END $$`)
        idle.push(own)
        // An idle instance keeps a timer of PostgreSQL's armed, which keeps the process alive: one not
        // taken within a second (the next file of a shared lane takes it at once) is closed.
        // wall clock: how long an emptied database waits for its next user before it is closed.
        setTimeout(() => {
          const at = idle.indexOf(own)
          if (at < 0) return
          idle.splice(at, 1)
          own.close().catch(() => {})
        }, 1_000).unref()
      } catch {
        await own.close()
      }
    })())
  // What Kysely's driver is given: the instance until this handle closes (Kysely's destroy() or close()).
  const view = new Proxy(own, {
    get(target, property) {
      if (property === 'closed') return closed || target.closed
      if (property === 'close') return recycle
      const value = Reflect.get(target, property, target) as unknown
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        if (closed) throw new Error('this test database was closed')
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
  const db = new Kysely<Database>({ dialect: new FifoPGliteDialect({ pglite: view }) })
  // A no-op on the migrated copy; it keeps a dump that fell behind the migrations from going unnoticed.
  await migrateToLatest(db)
  return {
    db,
    engine: 'pglite',
    location: 'memory',
    close: async () => {
      await db.destroy()
      await recycle()
    },
  }
}

/**
 * A PostgreSQL database migrated once per set of migrations (named by their hash, like the PGlite copy
 * below), from which each scratch database is copied: CREATE DATABASE ... TEMPLATE copies its files,
 * faster than running every migration again for each test file. It is built under a name of its own
 * and renamed when complete, so a test process never copies one half made; two processes building it
 * at once both finish, and the second drops its own.
 */
function migratedTemplate(adminUrl: string): Promise<string> {
  // A failed build is not kept: the next caller tries again.
  templateName ??= buildTemplate(adminUrl).catch((error: unknown) => {
    templateName = undefined
    throw error
  })
  return templateName
}
let templateName: Promise<string> | undefined

async function buildTemplate(adminUrl: string): Promise<string> {
  const name = `sb_template_${migrationsHash()}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
    if (exists.rowCount) return name
    const building = `${name}_${process.pid}_${randomBytes(4).toString('hex')}`
    await admin.query(`CREATE DATABASE ${building}`)
    const url = new URL(adminUrl)
    url.pathname = `/${building}`
    try {
      const handle = await connectDatabase({ databaseUrl: url.toString(), poolSize: 1 })
      try {
        await migrateToLatest(handle.db)
      } finally {
        await handle.close()
      }
    } catch (error) {
      // Half built: never left behind to be mistaken for a template.
      await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`)
      throw error
    }
    try {
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`)
    } catch (error) {
      // Another process finished first (duplicate_database): its template is as good.
      if ((error as { code?: string }).code !== '42P04') throw error
      await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`)
    }
    return name
  } finally {
    await admin.end()
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

/** A hash of the migrations' names and source (and `salt`): 16 hex digits, for names of migrated copies. */
// Read when this module loads, as the migrations themselves are: a migration edited while a test
// process runs must not give that process's old migrations a cache name made from the new text.
const MIGRATION_FILES = (() => {
  const migrationsDir = new URL('../../src/db/migrations/', import.meta.url)
  return readdirSync(migrationsDir).sort().map((name) => ({ name, text: readFileSync(new URL(name, migrationsDir)) }))
})()

function migrationsHash(salt = ''): string {
  const hash = createHash('sha256').update(salt)
  for (const { name, text } of MIGRATION_FILES) hash.update(name).update(text)
  return hash.digest('hex').slice(0, 16)
}

/**
 * Where a copy of a PGlite database made by this version of PGlite and these migrations is kept:
 * node_modules/.cache/subscription-billing/pglite-<hash><suffix>, shared by every test process.
 */
function pgliteCachePath(suffix: string): string {
  const pgliteVersion = createHash('sha256').update(readFileSync(new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url))).digest('hex')
  return fileURLToPath(new URL(`../../node_modules/.cache/subscription-billing/pglite-${migrationsHash(pgliteVersion)}${suffix}`, import.meta.url))
}

async function readMigratedPgliteDump(): Promise<Blob> {
  const file = await cachedPglite('.tar', async (partial) => {
    const pglite = await PGlite.create({ extensions: PGLITE_EXTENSIONS })
    const db = new Kysely<any>({ dialect: new PGliteDialect({ pglite }) })
    await migrateToLatest(db)
    const dump = Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer())
    await db.destroy()
    writeFileSync(partial, dump)
  })
  return new Blob([readFileSync(file)])
}

/**
 * The path of pgliteCachePath(suffix), made by `build` (a file or a directory at the path it is given)
 * when it is not there yet: built aside and renamed when complete, so a concurrent test process never
 * reads half of one; a process that loses the race to another keeps the other's, which is as good.
 */
export async function cachedPglite(suffix: string, build: (partial: string) => Promise<void>): Promise<string> {
  const path = pgliteCachePath(suffix)
  if (existsSync(path)) return path
  mkdirSync(dirname(path), { recursive: true })
  const partial = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`
  try {
    await build(partial)
    try {
      renameSync(partial, path)
    } catch (error) {
      // A directory cannot replace another: another process finished first.
      if (!existsSync(path)) throw error
    }
    return path
  } finally {
    rmSync(partial, { recursive: true, force: true })
  }
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
