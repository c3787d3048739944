/**
 * Runs the test suite (README, "Tests") through node:test's own runner in lanes side by side: the unit,
 * API, contract and database tiers in shared processes (SHARED_TIERS, scripts/test-plan.ts), the process
 * suites a process per file in this one, the browser suites a process per file in a lane of their own;
 * longest first so each lane ends on short files. A named list of files, or the PostgreSQL pass, runs a
 * process per file.
 *
 *   node scripts/test.ts                  every tier, on embedded PGlite (npm test)
 *   node scripts/test.ts --lane=postgres  what differs between engines, on DATABASE_URL (npm run test:db)
 *   node scripts/test.ts test/api/billing test/unit/calendar.test.ts   only these files or directories
 *
 * Options: --concurrency=N (or TEST_CONCURRENCY), --reporter=spec|dot|tap. For npm test N is the number of
 * lanes (default 4: the process suites, the browser suites and two shared processes; 2 or less runs
 * every file in a process of its own, N at a time). With every file in a process of its own, a third file
 * at a time did not finish sooner than two (exactly-once 172 s at 2, 305 s at 3): the whole suite is
 * CPU-bound on two cores.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { getPriority, setPriority } from 'node:os'
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
    // process alive; in a child lane the silence deadline (runChildLane) ends that.
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

/**
 * A lane silent this long is stuck (a test holding a handle, a load that never ends): it is killed and
 * fails. Longer than a file's own timeout (runLane), so a stuck file in a lane of process-per-file runs is
 * named by node:test first.
 */
const LANE_SILENCE_MS = 12 * 60_000

/**
 * A lane in a child process of its own (this script with `args`), its report passed on whole lines as they
 * come (so a stuck run shows where it stopped), killed if it falls silent, at `nice` (added to this
 * process's). Its exit code is the verdict: node:test's own failures, and anything it saw after a test
 * ended (a late exception or rejection), make it 1.
 */
async function runChildLane(args: string[], nice: number): Promise<{ failed: boolean; verdict: string; seconds: number }> {
  const started = performance.now()
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its per-file times are in its report; the file is this process's.
    env: { ...process.env, TEST_TIMES_FILE: '' },
  })
  try {
    // Never without a pid: setPriority(undefined, n) would lower this process instead.
    if (child.pid) setPriority(child.pid, Math.min(19, getPriority() + nice))
  } catch {
    // Only the schedule suffers: the lane runs at this process's priority.
  }
  let pending = ''
  let silentFor: NodeJS.Timeout | undefined
  let stuck = false
  const watch = () => {
    clearTimeout(silentFor)
    // wall clock: a deadline on a child process that stopped reporting.
    silentFor = setTimeout(() => {
      stuck = true
      child.kill('SIGKILL')
    }, LANE_SILENCE_MS)
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
  let code: number | null = null
  let signal: NodeJS.Signals | null = null
  let error: Error | undefined
  try {
    ;[code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null]
  } catch (failure) {
    // The process could not be started (once() rejects on 'error').
    error = failure as Error
  }
  clearTimeout(silentFor)
  if (pending) process.stdout.write(`${pending}\n`)
  const verdict = error
    ? `FAILED: ${error.message}`
    : stuck
    ? `FAILED: silent for ${LANE_SILENCE_MS / 60_000} minutes, killed (the last lines above show where it stopped)`
    : signal
      ? `FAILED: killed by ${signal}`
      : code === 0
        ? 'passed'
        : `FAILED (exit ${code})`
  return { failed: Boolean(error) || stuck || code !== 0, verdict, seconds: (performance.now() - started) / 1000 }
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
  // Four lanes for npm test (below); two files at a time otherwise (a third only stretched each one).
  const concurrency = Number(option('concurrency') ?? process.env.TEST_CONCURRENCY ?? (lane === 'all' && paths.length === 0 ? 4 : 2))
  // npm test: the process suites one at a time in this process; the browser suites one at a time in a
  // child lane; the shared tiers dealt over `concurrency - 2` processes. The lanes run at once and at
  // different priorities (nice), so that the process suites, whose servers and polls are the longest
  // chain, run almost as fast as alone and the other lanes take what CPU is left: measured on this 2-core
  // machine, with the process suites beside the shared lanes at the same priority the SIGKILL suite took
  // 160 s instead of 70 and the run 423 s; with the shared lanes at +10 and the browser lane beside the
  // process suites from the start, 372 s of runner (the browser lane at +5: 406 s). A named list of files, or the PostgreSQL pass (most of it process
  // suites), runs a process per file, `concurrency` at a time.
  const split = lane === 'all' && paths.length === 0 && concurrency > 2
  const shared = split ? files.filter((file) => SHARED_TIERS.some((dir) => file.startsWith(`${dir}/`)) && !OWN_PROCESS.has(file)) : []
  const isolated = files.filter((file) => !shared.includes(file))
  const browser = split ? isolated.filter((file) => file.startsWith('test/browser/')) : []
  const inThisProcess = isolated.filter((file) => !browser.includes(file))
  const sharedLanes = split ? concurrency - 2 : 0
  // Dealt in turn, longest known first, so the lanes end close together.
  const lanes = Array.from({ length: sharedLanes }, (_, lane) => shared.filter((_, index) => index % sharedLanes === lane))
  const childLanes = [
    ...lanes.map((laneFiles, index) => ({ name: `shared lane ${index + 1} (${laneFiles.length} files in one process)`, run: runChildLane(['--shared', `--reporter=${reporterName}`, ...laneFiles], 10) })),
    ...(browser.length ? [{ name: `browser lane (${browser.length} files, a process each)`, run: runChildLane(['--concurrency=1', `--reporter=${reporterName}`, ...browser], 0) }] : []),
  ]
  const isolatedConcurrency = split ? 1 : concurrency
  const own = await runLane(inThisProcess, { concurrency: isolatedConcurrency, shared: false, reporter, out: process.stdout })
  const ownSeconds = (performance.now() - started) / 1000
  const childResults = await Promise.all(childLanes.map((child) => child.run))

  const byTime = [...own.perFile].sort((a, b) => b[1] - a[1])
  // The process suites' times, for choosing LONGEST_FIRST and finding what to speed up (not read by
  // anything); the browser lane prints its own files' times in its report.
  if (process.env.TEST_TIMES_FILE) writeFileSync(process.env.TEST_TIMES_FILE, `${byTime.map(([file, ms]) => `${(ms / 1000).toFixed(1)}\t${relative(ROOT, file)}`).join('\n')}\n`)
  console.log(`\n${files.length} files, ${inThisProcess.length} in a process each (${isolatedConcurrency} at a time)${childLanes.length ? ` beside ${browser.length} browser files and ${shared.length} in ${sharedLanes} shared processes` : ''}, ${((performance.now() - started) / 1000).toFixed(1)} s; the longest in a process of their own (s):`)
  for (const [file, ms] of byTime.slice(0, 12)) console.log(`  ${(ms / 1000).toFixed(1).padStart(6)}  ${relative(ROOT, file)}`)
  console.log(`\nprocess-per-file lane (${inThisProcess.length} files): ${own.failed ? 'FAILED' : 'passed'} in ${ownSeconds.toFixed(0)} s`)
  for (const [index, result] of childResults.entries()) console.log(`${childLanes[index]!.name}: ${result.verdict} in ${result.seconds.toFixed(0)} s`)
  if (own.failed || childResults.some((result) => result.failed)) process.exitCode = 1
}

if (import.meta.main) await main()
