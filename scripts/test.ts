/**
 * Runs the test suite (README, "Tests"): node:test's own runner, each file in a process of its own,
 * in an order chosen so the run ends on short files. `node --test` sorts files by name, which left the
 * SIGKILL and browser suites (a minute or more each) to start last and run alone at the end.
 *
 *   node scripts/test.ts                  every tier, on embedded PGlite (npm test)
 *   node scripts/test.ts --lane=postgres  what differs between engines, on DATABASE_URL (npm run test:db)
 *   node scripts/test.ts test/api/billing test/unit/calendar.test.ts   only these files or directories
 *
 * Options: --concurrency=N (or TEST_CONCURRENCY), --reporter=spec|dot|tap. The default is 2, one file per
 * core: a third file did not finish sooner (the process and browser suites' children are as busy as the
 * API files), it only stretched each file, the SIGKILL suites most (exactly-once 172 s at 2, 305 s at 3).
 */
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { enableCompileCache } from 'node:module'
import { join, relative, resolve } from 'node:path'
import { run } from 'node:test'
import { dot, spec, tap } from 'node:test/reporters'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../', import.meta.url))

/** Tiers, in the order their files start: the ones that wait on processes and browsers first. */
export const TIERS = ['test/process', 'test/browser', 'test/db', 'test/contract', 'test/api', 'test/unit']

/**
 * The longest files, longest first (from the per-file times this script prints at the end of a run),
 * so that no long file starts near the end: the rest are much shorter and fill in around them.
 */
export const LONGEST_FIRST = [
  'test/process/billing-exactly-once.test.ts',
  'test/process/cli.test.ts',
  'test/browser/console.test.ts',
  'test/process/webhooks-crash.test.ts',
  'test/browser/portal.test.ts',
  'test/api/portal/sign-in.test.ts',
  'test/process/server-process.test.ts',
  'test/process/graceful-shutdown.test.ts',
  'test/process/startup-safety.test.ts',
  'test/process/platform-crash.test.ts',
  'test/browser/portal-manage.test.ts',
  'test/browser/docs.test.ts',
  'test/api/portal/access-control.test.ts',
  'test/browser/portal-stored-cards.test.ts',
  'test/browser/widget.test.ts',
  'test/db/subscription-invariants.test.ts',
  'test/api/subscriptions/order-now.test.ts',
]

/**
 * The PostgreSQL pass (`npm run test:db`, which .ci/run runs with DATABASE_URL): what differs between the
 * engines, not everything twice. PGlite is PostgreSQL itself, so SQL that passes there passes here; what
 * can differ is concurrency (one connection there, a pool of them and several processes here), connection
 * loss, and the scratch-database plumbing.
 */
export const POSTGRES = [
  // Transactions, locks, SKIP LOCKED races between pools, the outbox, the auth cache across processes.
  'test/db',
  // Exactly-once under SIGKILL (12 kills, and two worker processes at once), webhooks at least once,
  // a platform slower than the lease with workers killed mid-payment, several processes on one database,
  // and a graceful stop that closes a connection pool (not one embedded connection) after its last request.
  'test/process/billing-exactly-once.test.ts',
  'test/process/webhooks-crash.test.ts',
  'test/process/slow-gateway.test.ts',
  'test/process/server-process.test.ts',
  'test/process/graceful-shutdown.test.ts',
  // A representative API slice over the SQL paths: subscription actions and checkout (row locks, batched
  // first pages, pool connections dropped by the server), renewals and dunning, refunds, webhook delivery
  // and fan-out, portal access control and the auth cache, idempotency keys, the event log.
  'test/api/subscriptions/actions.test.ts',
  'test/api/subscriptions/checkout.test.ts',
  'test/api/subscriptions/connection-loss.test.ts',
  'test/api/subscriptions/concurrent-lists.test.ts',
  'test/api/subscriptions/odd-ids-in-lists.test.ts',
  'test/api/billing/renewals.test.ts',
  'test/api/billing/refunds.test.ts',
  'test/api/webhooks/delivery.test.ts',
  'test/api/webhooks/fanout-queue.test.ts',
  'test/api/portal/access-control.test.ts',
  'test/api/portal/auth-cache.test.ts',
  'test/contract/idempotency.test.ts',
  'test/api/events/events.test.ts',
]

/** In test/db but left out of the PostgreSQL pass: it tests PGlite's own connection, whatever DATABASE_URL says. */
const EMBEDDED_ONLY = new Set(['test/db/pglite-fifo.test.ts'])

function testFiles(path: string): string[] {
  const absolute = resolve(ROOT, path)
  if (!existsSync(absolute)) throw new Error(`no such test file or directory: ${path}`)
  if (!statSync(absolute).isDirectory()) return [relative(ROOT, absolute)]
  return readdirSync(absolute, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => (entry.isDirectory() ? testFiles(join(path, entry.name)) : entry.name.endsWith('.test.ts') ? [join(path, entry.name)] : []))
    .map((file) => relative(ROOT, resolve(ROOT, file)))
}

/** The files of `paths`, each once, longest known first, then by tier (process first), then by name. */
export function ordered(paths: readonly string[]): string[] {
  const files = [...new Set(paths.flatMap(testFiles))]
  const rank = (file: string) => {
    const known = LONGEST_FIRST.indexOf(file)
    if (known >= 0) return known
    const tier = TIERS.findIndex((dir) => file.startsWith(`${dir}/`))
    return LONGEST_FIRST.length + (tier >= 0 ? tier : TIERS.length)
  }
  return files.map((file, index) => ({ file, index, rank: rank(file) })).sort((a, b) => a.rank - b.rank || a.index - b.index).map(({ file }) => file)
}

function option(name: string): string | undefined {
  const prefix = `--${name}=`
  return process.argv.find((arg) => arg.startsWith(prefix))?.slice(prefix.length)
}

async function main(): Promise<void> {
  const lane = option('lane') ?? 'all'
  const paths = process.argv.slice(2).filter((arg) => !arg.startsWith('--'))
  if (lane !== 'all' && lane !== 'postgres') throw new Error(`--lane is all or postgres, not ${lane}`)
  if (lane === 'postgres' && !process.env.DATABASE_URL) {
    console.error('npm run test:db runs the suites that differ between engines on PostgreSQL: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test); each file makes and drops its own scratch database')
    process.exit(2)
  }
  const files = paths.length > 0 ? ordered(paths) : lane === 'postgres' ? ordered(POSTGRES).filter((file) => !EMBEDDED_ONLY.has(file)) : ordered(TIERS)
  const concurrency = Number(option('concurrency') ?? process.env.TEST_CONCURRENCY ?? 2)
  const reporter = { spec, dot, tap }[option('reporter') ?? 'spec']
  if (!reporter) throw new Error('--reporter is spec, dot or tap')

  // Every test process, and every service or CLI process the suites start, compiles the same few hundred
  // modules: V8's code cache (content-checked, kept with the PGlite dump) saves ~0.3 s of CPU for each.
  process.env.NODE_COMPILE_CACHE ??= join(ROOT, 'node_modules/.cache/subscription-billing/compile-cache')
  enableCompileCache(process.env.NODE_COMPILE_CACHE)

  const started = performance.now()
  const perFile = new Map<string, number>()
  let failed = false
  const stream = run({ files: files.map((file) => join(ROOT, file)), concurrency })
  stream.on('test:fail', () => {
    failed = true
  })
  // Each file's process is a test of its own, named by its path: its time is the file's, start-up included.
  stream.on('test:complete', (data) => {
    if (data.nesting === 0 && data.file && data.name === data.file) perFile.set(data.file, data.details.duration_ms)
  })
  // The reporter's stream ends once the run has: then the summary.
  const report = stream.compose(reporter as Parameters<typeof stream.compose>[0]) as NodeJS.ReadableStream
  await new Promise<void>((done, fail) => {
    report.on('end', done).on('error', fail)
    report.pipe(process.stdout, { end: false })
  })
  const byTime = [...perFile].sort((a, b) => b[1] - a[1])
  // Every file's time, for choosing LONGEST_FIRST and finding what to speed up (not read by anything).
  if (process.env.TEST_TIMES_FILE) writeFileSync(process.env.TEST_TIMES_FILE, `${byTime.map(([file, ms]) => `${(ms / 1000).toFixed(1)}\t${relative(ROOT, file)}`).join('\n')}\n`)
  const slowest = byTime.slice(0, 12)
  console.log(`\n${files.length} files, concurrency ${concurrency}, ${((performance.now() - started) / 1000).toFixed(1)} s; the longest (s):`)
  for (const [file, ms] of slowest) console.log(`  ${(ms / 1000).toFixed(1).padStart(6)}  ${relative(ROOT, file)}`)
  if (failed) process.exitCode = 1
}

if (import.meta.main) await main()
