/**
 * Runs the test suite (README, "Tests") through node:test's own runner in two lanes side by side: the
 * unit, API, contract and database tiers in one shared process (SHARED_TIERS, scripts/test-plan.ts),
 * the process and browser suites a process per file, longest first so the lane ends on short files.
 * A named list of files, or the PostgreSQL pass, runs a process per file.
 *
 *   node scripts/test.ts                  every tier, on embedded PGlite (npm test)
 *   node scripts/test.ts --lane=postgres  what differs between engines, on DATABASE_URL (npm run test:db)
 *   node scripts/test.ts test/api/billing test/unit/calendar.test.ts   only these files or directories
 *
 * Options: --concurrency=N (or TEST_CONCURRENCY), --reporter=spec|dot|tap. For npm test N is the number of
 * lanes (default 3: the process-per-file lane and two shared processes); 1 runs every file in a process of
 * its own, one at a time. With every file in a process of its own, a third file at a time did not finish
 * sooner than two (exactly-once 172 s at 2, 305 s at 3): the whole suite is CPU-bound on two cores.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { enableCompileCache } from 'node:module'
import { join, relative } from 'node:path'
import { run } from 'node:test'
import { dot, spec, tap } from 'node:test/reporters'
import { fileURLToPath } from 'node:url'
import { EMBEDDED_ONLY, ordered, OWN_PROCESS, POSTGRES, ROOT, SHARED_TIERS, TIERS } from './test-plan.ts'

function option(name: string): string | undefined {
  const prefix = `--${name}=`
  return process.argv.find((arg) => arg.startsWith(prefix))?.slice(prefix.length)
}

interface LaneResult {
  failed: boolean
  perFile: Map<string, number>
}

/** Runs files through node:test's run(), streaming the report to `out`; in a process each, or all in this one. */
async function runLane(files: string[], options: { concurrency: number; shared: boolean; reporter: unknown; out: NodeJS.WritableStream }): Promise<LaneResult> {
  const perFile = new Map<string, number>()
  let failed = false
  const stream = run({
    files: files.map((file) => join(ROOT, file)),
    ...(options.shared ? { isolation: 'none' as const, forceExit: true } : { concurrency: options.concurrency }),
    // A file (in its own process) or a top-level suite (in the shared one) that runs this long is stuck, not
    // slow (the longest take ~2 minutes): it is marked failed. One that holds a handle open still keeps its
    // process alive; in the shared lane the silence deadline (runSharedChild) ends that.
    timeout: 10 * 60_000,
  })
  stream.on('test:fail', () => {
    failed = true
  })
  // Each file's process is a test of its own, named by its path: its time is the file's, start-up included.
  stream.on('test:complete', (data) => {
    if (data.nesting === 0 && data.file && data.name === data.file) perFile.set(data.file, data.details.duration_ms)
  })
  // The reporter's stream ends once the run has.
  const report = stream.compose(options.reporter as Parameters<typeof stream.compose>[0]) as NodeJS.ReadableStream
  await new Promise<void>((done, fail) => {
    report.on('end', done).on('error', fail)
    report.pipe(options.out, { end: false })
  })
  return { failed, perFile }
}

/** A shared lane silent this long is stuck (a test holding a handle, a load that never ends): it is killed and fails. */
const SHARED_SILENCE_MS = 10 * 60_000

/**
 * The shared lane in a child process (`--shared`), its report passed on whole lines as they come (so a
 * stuck run shows where it stopped), killed if it falls silent. Its exit code is the verdict: node:test's
 * own failures, and anything it saw after a test ended (a late exception or rejection), make it 1.
 */
async function runSharedChild(files: string[], reporterName: string): Promise<{ failed: boolean; verdict: string }> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--shared', `--reporter=${reporterName}`, ...files], { stdio: ['ignore', 'pipe', 'pipe'] })
  let pending = ''
  let silentFor: NodeJS.Timeout | undefined
  let stuck = false
  const watch = () => {
    clearTimeout(silentFor)
    // wall clock: a deadline on a child process that stopped reporting.
    silentFor = setTimeout(() => {
      stuck = true
      child.kill('SIGKILL')
    }, SHARED_SILENCE_MS)
  }
  const pass = (chunk: Buffer) => {
    watch()
    pending += chunk
    const end = pending.lastIndexOf('\n')
    if (end < 0) return
    process.stdout.write(pending.slice(0, end + 1))
    pending = pending.slice(end + 1)
  }
  watch()
  child.stdout.on('data', pass)
  child.stderr.on('data', pass)
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null]
  clearTimeout(silentFor)
  if (pending) process.stdout.write(`${pending}\n`)
  const verdict = stuck
    ? `FAILED: silent for ${SHARED_SILENCE_MS / 60_000} minutes, killed (the last lines above show where it stopped)`
    : signal
      ? `FAILED: killed by ${signal}`
      : code === 0
        ? 'passed'
        : `FAILED (exit ${code})`
  return { failed: stuck || code !== 0, verdict }
}

async function main(): Promise<void> {
  const lane = option('lane') ?? 'all'
  const paths = process.argv.slice(2).filter((arg) => !arg.startsWith('--'))
  if (lane !== 'all' && lane !== 'postgres') throw new Error(`--lane is all or postgres, not ${lane}`)
  if (lane === 'postgres' && !process.env.DATABASE_URL) {
    console.error('npm run test:db runs the suites that differ between engines on PostgreSQL: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test); each file makes and drops its own scratch database')
    process.exit(2)
  }
  const reporterName = option('reporter') ?? 'spec'
  const reporter = { spec, dot, tap }[reporterName]
  if (!reporter) throw new Error('--reporter is spec, dot or tap')

  // Every test process, and every service or CLI process the suites start, compiles the same few hundred
  // modules: V8's code cache (content-checked, kept with the PGlite dump) saves ~0.3 s of CPU for each.
  process.env.NODE_COMPILE_CACHE ??= join(ROOT, 'node_modules/.cache/subscription-billing/compile-cache')
  enableCompileCache(process.env.NODE_COMPILE_CACHE)

  if (process.argv.includes('--shared')) {
    const { failed } = await runLane(paths, { concurrency: 1, shared: true, reporter, out: process.stdout })
    // node:test sets exitCode itself for what is not a test's failure (activity after a test ended).
    process.exit(failed || process.exitCode ? 1 : 0)
  }

  const started = performance.now()
  const files = paths.length > 0 ? ordered(paths) : lane === 'postgres' ? ordered(POSTGRES).filter((file) => !EMBEDDED_ONLY.has(file)) : ordered(TIERS)
  // Three lanes for npm test (below); two files at a time otherwise (a third only stretched each one).
  const concurrency = Number(option('concurrency') ?? process.env.TEST_CONCURRENCY ?? (lane === 'all' && paths.length === 0 ? 3 : 2))
  // npm test: the shared tiers dealt over `concurrency - 1` processes, beside the process suites one at a
  // time (their children leave gaps the shared lanes fill); the browser suites start when the shared lanes
  // end, beside what is left of the process suites. Measured here with every process and browser suite in
  // one lane: it ran ~300 s alone after the shared lanes ended (666 s against 316 and 369 s). Two at a time
  // from the start stretched every process suite instead (the exactly-once suite 81 -> 261 s, a server
  // start past its 30 s check) and ended later. A named list of files, or the PostgreSQL pass (most of it
  // process suites), runs a process per file, `concurrency` at a time.
  const split = lane === 'all' && paths.length === 0 && concurrency > 1
  const shared = split ? files.filter((file) => SHARED_TIERS.some((dir) => file.startsWith(`${dir}/`)) && !OWN_PROCESS.has(file)) : []
  const isolated = files.filter((file) => !shared.includes(file))
  const afterShared = split ? isolated.filter((file) => file.startsWith('test/browser/')) : []
  const fromStart = isolated.filter((file) => !afterShared.includes(file))
  const sharedLanes = split ? concurrency - 1 : 0
  // Dealt in turn, longest known first, so the lanes end close together.
  const lanes = Array.from({ length: sharedLanes }, (_, lane) => shared.filter((_, index) => index % sharedLanes === lane))
  const sharedRuns = Promise.all(lanes.map((laneFiles) => runSharedChild(laneFiles, reporterName)))
  const isolatedConcurrency = split ? 1 : concurrency
  const isolatedRuns = Promise.all([
    runLane(fromStart, { concurrency: isolatedConcurrency, shared: false, reporter, out: process.stdout }),
    sharedRuns.then(() => runLane(afterShared, { concurrency: 1, shared: false, reporter, out: process.stdout })),
  ])
  const [isolatedResults, sharedResults] = await Promise.all([isolatedRuns, sharedRuns])
  const failed = isolatedResults.some((result) => result.failed)
  const perFile = new Map(isolatedResults.flatMap((result) => [...result.perFile]))

  const byTime = [...perFile].sort((a, b) => b[1] - a[1])
  // Every file's time, for choosing LONGEST_FIRST and finding what to speed up (not read by anything).
  if (process.env.TEST_TIMES_FILE) writeFileSync(process.env.TEST_TIMES_FILE, `${byTime.map(([file, ms]) => `${(ms / 1000).toFixed(1)}\t${relative(ROOT, file)}`).join('\n')}\n`)
  console.log(`\n${files.length} files, ${isolated.length} in a process each (${isolatedConcurrency} at a time)${shared.length ? ` beside ${shared.length} in ${sharedLanes} shared processes` : ''}, ${((performance.now() - started) / 1000).toFixed(1)} s; the longest in a process of their own (s):`)
  for (const [file, ms] of byTime.slice(0, 12)) console.log(`  ${(ms / 1000).toFixed(1).padStart(6)}  ${relative(ROOT, file)}`)
  console.log(`\nprocess-per-file lanes (${isolated.length} files${afterShared.length ? `, ${afterShared.length} of them after the shared lanes` : ''}): ${failed ? 'FAILED' : 'passed'}`)
  for (const [index, result] of sharedResults.entries()) console.log(`shared lane ${index + 1} (${lanes[index]!.length} files in one process): ${result.verdict}`)
  if (failed || sharedResults.some((result) => result.failed)) process.exitCode = 1
}

if (import.meta.main) await main()
