import pg from 'pg'
import { randomBytes } from 'node:crypto'
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.ts'
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
    const handle = await connectDatabase({ dataDir: 'memory://' })
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
