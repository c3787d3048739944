import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import pg from 'pg'

export interface BenchDatabase {
  engine: 'pglite' | 'postgres'
  /** Environment that points the service at this database. */
  env: Record<string, string>
  /** Engine and where it runs, for the report. */
  description: string
  dispose(): Promise<void>
}

/**
 * A database of the bench's own, never the developer's: a fresh PGlite directory under the OS temp
 * dir, or a scratch database on the DATABASE_URL server, dropped on dispose.
 */
export async function prepareBenchDatabase(databaseUrl: string | undefined): Promise<BenchDatabase> {
  return databaseUrl ? scratchPostgres(databaseUrl) : freshPglite()
}

async function freshPglite(): Promise<BenchDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-pglite-'))
  return {
    engine: 'pglite',
    env: { DATA_DIR: dir },
    description: `PGlite ${pgliteVersion()} (embedded, fresh directory)`,
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  }
}

// The package's exports hide its package.json, so read it from node_modules directly.
function pgliteVersion(): string {
  const file = new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url)
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version
}

async function scratchPostgres(serverUrl: string): Promise<BenchDatabase> {
  const name = `bench_${randomBytes(6).toString('hex')}`
  await onServer(serverUrl, async (client) => void (await client.query(`CREATE DATABASE ${name}`)))
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    engine: 'postgres',
    env: { DATABASE_URL: url.toString() },
    description: `PostgreSQL server at ${url.host} (scratch database)`,
    dispose: () => onServer(serverUrl, async (client) => void (await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))),
  }
}

/** One client on `url` for `work`, ended after it. */
export async function onServer<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}
