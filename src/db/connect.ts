import { PGlite } from '@electric-sql/pglite'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { join, resolve } from 'node:path'
import type { Database } from './database.ts'
import { FifoPGliteDialect } from './pglite-fifo-dialect.ts'
import { parseTimestamptz } from './timestamptz-parser.ts'
import { lockDataDir } from './data-dir-lock.ts'
import { secureDataDir, tightenTree } from './data-dir-permissions.ts'

export type Engine = 'pglite' | 'postgres'

export interface DatabaseHandle {
  db: Kysely<Database>
  engine: Engine
  /** Where the data lives, without credentials: for logs and the start banner. */
  location: string
  close(): Promise<void>
}

export interface ConnectOptions {
  /** PostgreSQL connection string; when absent the embedded database is used. */
  databaseUrl?: string | undefined
  /** Directory for the embedded database; `memory://` keeps it in memory (tests). */
  dataDir?: string
  poolSize?: number
  /**
   * How long getting a connection may take, a new one or a pooled one freed by another caller; then it
   * fails (and a request answers 503) instead of waiting on a server that does not answer. 5 s.
   */
  connectTimeoutMs?: number
  /** Told when the server drops an idle pooled connection (restart, failover); the pool replaces it. */
  onIdleConnectionError?: (error: Error) => void
  /** Told when DATA_DIR had to be made private (see secureDataDir); stderr when absent. */
  onNotice?: (message: string) => void
  /** An in-memory embedded database starts as a copy of this dump (PGlite's `dumpDataDir`) instead of empty. */
  loadDataDir?: Blob
}

const INT8_OID = 20
const NUMERIC_OID = 1700
const TIMESTAMPTZ_OID = 1184

/** How the embedded database's values are read: counts and sums (int8, numeric) as numbers, as on PostgreSQL below. */
export const PGLITE_PARSERS = { [INT8_OID]: Number, [NUMERIC_OID]: Number }

/**
 * The extensions every embedded database is opened with: pg_trgm's indexes serve the subscription
 * search (migration 0028), led by the store with btree_gin (0036), and an index of an extension works
 * only where the extension is loaded.
 */
export const PGLITE_EXTENSIONS = { pg_trgm, btree_gin }

export async function connectDatabase(options: ConnectOptions): Promise<DatabaseHandle> {
  return options.databaseUrl
    ? connectPostgres(options.databaseUrl, options.poolSize ?? 10, options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS, options.onIdleConnectionError)
    : connectPglite(options.dataDir ?? './data', options.onNotice, options.loadDataDir)
}

const CONNECT_TIMEOUT_MS = 5_000

function connectPostgres(url: string, max: number, connectTimeoutMs: number, onIdleConnectionError?: (error: Error) => void): DatabaseHandle {
  // Counts and sums come back as int8/numeric; every value we store fits a JS number exactly.
  const driverTimestamptz = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (text: string) => unknown
  const timestamptz = (text: string) => parseTimestamptz(text, driverTimestamptz)
  const types = {
    getTypeParser: (oid: number, format?: any) =>
      oid === INT8_OID || oid === NUMERIC_OID ? Number : oid === TIMESTAMPTZ_OID && format !== 'binary' ? timestamptz : pg.types.getTypeParser(oid, format),
  }
  // A server that stops answering (a host gone, a network dropping packets) fails a connect after the
  // timeout instead of holding the caller for the kernel's minutes; keepalive finds pooled connections
  // to such a server dead. A server restarting refuses or ends connections at once.
  const pool = new pg.Pool({ connectionString: url, max, types, connectionTimeoutMillis: connectTimeoutMs, keepAlive: true } as pg.PoolConfig)
  // Without a listener, an idle client killed by the server would crash the process.
  pool.on('error', (error) => onIdleConnectionError?.(error))
  // Nor may a client in use: the pool listens only while a client is idle, and a server that stops or
  // restarts (or a reset socket) ends the connections in use too, which node-postgres also emits as
  // 'error' on the client, a statement running or not. The statement in flight fails with the error,
  // a later one with "not queryable", and the pool drops the client when it is released.
  pool.on('connect', (client) => client.on('error', () => {}))
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  const parsed = new URL(url)
  return {
    db,
    engine: 'postgres',
    location: `postgres://${parsed.host}${parsed.pathname}`,
    close: () => db.destroy(),
  }
}

const toStderr = (message: string): void => void process.stderr.write(`${message}\n`)

async function connectPglite(dataDir: string, onNotice: (message: string) => void = toStderr, loadDataDir?: Blob): Promise<DatabaseHandle> {
  const inMemory = dataDir === 'memory://'
  if (!inMemory) secureDataDir(resolve(dataDir), onNotice)
  const release = inMemory ? () => {} : lockDataDir(resolve(dataDir))
  try {
    const pglite = await PGlite.create(inMemory ? undefined : join(resolve(dataDir), 'pglite'), {
      parsers: PGLITE_PARSERS,
      extensions: PGLITE_EXTENSIONS,
      ...(inMemory && loadDataDir ? { loadDataDir } : {}),
    })
    // PGlite sets some files' modes itself, whatever the umask (see tightenTree): once open, and again once closed.
    const tighten = () => (inMemory ? 0 : tightenTree(resolve(dataDir)))
    tighten()
    const db = new Kysely<Database>({ dialect: new FifoPGliteDialect({ pglite }) })
    return {
      db,
      engine: 'pglite',
      location: inMemory ? 'memory' : resolve(dataDir),
      close: async () => {
        try {
          await db.destroy()
          if (!pglite.closed) await pglite.close()
          tighten()
        } finally {
          release()
        }
      },
    }
  } catch (error) {
    release()
    throw error
  }
}
