/**
 * The job runner's fair claim (src/jobs/fair-claim.ts) on PostgreSQL: EXPLAIN (ANALYZE, BUFFERS) of the
 * statements one claim runs, with one store's backlog of `--backlog` due jobs (default 50,000) beside 200
 * stores with 10 each and the recurring upkeep of no store. A scratch database is created and dropped.
 * With `--waiting N`, N further stores each hold one job retrying in an hour (a mail server down for them), named to come first in the walk:
 * the claim's walk passes them all (once round at most); it prints how many walk statements one claim took.
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/job-claim-plan.ts [--backlog 50000] [--waiting 0] [--no-analyze]
 */
import pg from 'pg'
import { Kysely, PostgresDialect, sql, type CompiledQuery } from 'kysely'
import { pino } from 'pino'
import { migrateToLatest } from '../src/db/migrate.ts'
import type { Database } from '../src/db/database.ts'
import { handleJob, jobKind, NoPayload } from '../src/jobs/job-kinds.ts'
import { createJobRunner } from '../src/jobs/runner.ts'

const args = process.argv.slice(2)
const backlog = Number(args[args.indexOf('--backlog') + 1] || 0) || 50_000
const analyze = !args.includes('--no-analyze')
const waiting = args.includes('--waiting') ? Number(args[args.indexOf('--waiting') + 1]) : 0
const adminUrl = process.env.DATABASE_URL
if (!adminUrl) throw new Error('set DATABASE_URL (PostgreSQL)')
const name = `job_claim_plan_${process.pid}`
const admin = new pg.Client({ connectionString: adminUrl })
await admin.connect()
await admin.query(`CREATE DATABASE ${name}`)
const url = new URL(adminUrl)
url.pathname = `/${name}`
const pool = new pg.Pool({ connectionString: url.toString(), max: 2 })
const captured: CompiledQuery[] = []
let capturing = false
const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: (event) => void (capturing && event.level === 'query' && captured.push(event.query)) })
try {
  await migrateToLatest(db)
  const send = jobKind('notifications.send', NoPayload)
  await sql`INSERT INTO jobs (kind, payload, store_id, run_at)
            SELECT 'notifications.send', '{}', 'store_big', now() - interval '1 hour' + g * interval '1 ms' FROM generate_series(1, ${backlog}) g`.execute(db)
  await sql`INSERT INTO jobs (kind, payload, store_id, run_at)
            SELECT 'notifications.send', '{}', 'store_' || lpad(s::text, 4, '0'), now() - interval '1 minute' FROM generate_series(1, 200) s, generate_series(1, 10)`.execute(db)
  await sql`INSERT INTO jobs (kind, payload, run_at, dedupe_key, max_attempts)
            SELECT 'upkeep.' || g, '{}', now() + interval '1 minute', 'recurring:' || g, 1000000 FROM generate_series(1, 5) g`.execute(db)
  await sql`INSERT INTO jobs (kind, payload, store_id, run_at)
            SELECT 'notifications.send', '{}', 'a_waiting_' || lpad(s::text, 6, '0'), now() + interval '1 hour' FROM generate_series(1, ${waiting}) s`.execute(db)
  if (analyze) await sql`ANALYZE jobs`.execute(db)
  const runner = createJobRunner({ db, handlers: [handleJob(send, async () => {})], log: pino({ level: 'silent' }), batchSize: 10 })
  capturing = true
  const started = performance.now()
  const ran = await runner.runOnce()
  const tookMs = performance.now() - started
  capturing = false
  const claimStatements = captured.filter((query) => /WITH RECURSIVE walk|WITH c AS/.test(query.sql))
  console.log(`backlog ${backlog} in one store + 200 x 10 + ${waiting} stores waiting, statistics ${analyze ? 'fresh (ANALYZE)' : 'none'}`)
  const walks = claimStatements.filter((query) => /WITH RECURSIVE walk/.test(query.sql)).length
  console.log(`one runOnce: ${ran} jobs, ${walks} walk statement(s), ${tookMs.toFixed(1)} ms (with the jobs run by a no-op handler)`)
  if (walks > 2) claimStatements.splice(1, walks - 2)
  for (const query of claimStatements) {
    const client = await pool.connect()
    try {
      await client.query('BEGIN')
      const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${query.sql}`, query.parameters as unknown[])
      await client.query('ROLLBACK')
      console.log(`\n-- ${/WITH RECURSIVE walk/.test(query.sql) ? 'walk' : 'claim'}`)
      for (const row of rows) console.log(row['QUERY PLAN'])
    } finally {
      client.release()
    }
  }
} finally {
  await db.destroy()
  await admin.query(`DROP DATABASE IF EXISTS ${name}`)
  await admin.end()
}
