import { availableParallelism, cpus, platform, arch } from 'node:os'
import { cpuTimes } from './cpu.ts'
import type { LoadResult } from './load.ts'
import type { BenchSettings } from './settings.ts'

export type Align = 'left' | 'right'

/** A GitHub-flavoured Markdown table, so a run's output can be pasted into BENCHMARKS.md as is. */
export function markdownTable(headers: string[], rows: string[][], align: Align[] = []): string {
  const widths = headers.map((header, i) => Math.max(header.length, 3, ...rows.map((row) => (row[i] ?? '').length)))
  const line = (cells: string[]) =>
    `| ${cells.map((cell, i) => (align[i] === 'right' ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join(' | ')} |`
  const rule = `|${widths.map((width, i) => (align[i] === 'right' ? `${'-'.repeat(width + 1)}:` : '-'.repeat(width + 2))).join('|')}|`
  return [line(headers), rule, ...rows.map(line)].join('\n')
}

export function machineSummary(): string {
  const model = cpus()[0]?.model.trim() ?? 'unknown CPU'
  return `${availableParallelism()} CPUs (${model}), ${platform()} ${arch()}, Node ${process.version}`
}

/** Other work on the machine skews every figure: how busy its CPUs are over a second before the bench starts anything. */
export async function backgroundCpuBusy(sampleMs = 1000): Promise<string> {
  const before = cpuTimes()
  await new Promise((resolve) => setTimeout(resolve, sampleMs))
  const after = cpuTimes()
  const total = after.total - before.total
  return `${total > 0 ? Math.round((100 * (after.busy - before.busy)) / total) : 0}%`
}

export function loadSummary(settings: BenchSettings): string {
  const warmup = settings.warmupSeconds > 0 ? ` after a ${settings.warmupSeconds} s warm-up` : ''
  const rounds = settings.rounds > 1 ? `, ${settings.rounds} rounds alternating the servers` : ''
  return `autocannon, ${settings.connections} connections, pipelining ${settings.pipelining}, ${settings.durationSeconds} s measured${warmup}${rounds}; one server under load at a time`
}

export interface NamedResult {
  name: string
  round: number
  result: LoadResult
}

export function resultsTable(results: NamedResult[], withRounds: boolean): string {
  const headers = ['server', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'server CPU µs/req', 'non-2xx', 'errors']
  const rows = results.map(({ name, round, result }) => [
    withRounds ? `${name}, round ${round}` : name,
    Math.round(result.requestsPerSecond).toLocaleString('en-US'),
    result.p50Ms.toFixed(0),
    result.p99Ms.toFixed(0),
    result.total.toLocaleString('en-US'),
    result.serverCpuMicros === undefined ? '-' : result.serverCpuMicros.toFixed(1),
    String(result.non2xx),
    String(result.errors),
  ])
  return markdownTable(headers, rows, ['left', ...headers.slice(1).map((): Align => 'right')])
}

export interface BaselineTargets {
  /** The candidate's requests/s over the baseline's must be at least this. */
  minThroughputRatio: number
  /** The candidate's p99 over the baseline's must be at most this (none: reported, not judged). */
  maxP99Ratio?: number | undefined
  /** The candidate's server CPU per request, in µs, must be at most this (median of rounds). */
  maxServerCpuMicros?: number | undefined
}

/** A baseline and a candidate loaded back to back, so both saw the same machine. */
export interface Pair {
  baseline: LoadResult
  candidate: LoadResult
}

export interface Check {
  name: string
  /** One value per round. */
  values: number[]
  /** What the verdict is taken on: the median of the rounds, or their sum for counts. */
  verdict: number
  target: string
  pass: boolean
  digits: number
}

/** How a candidate compares with a baseline measured in the same run, and whether it meets the targets. */
export function compareToBaseline(pairs: Pair[], targets: BaselineTargets): Check[] {
  const throughput = pairs.map(({ baseline, candidate }) => candidate.requestsPerSecond / baseline.requestsPerSecond)
  const p99 = pairs.map(({ baseline, candidate }) => candidate.p99Ms / baseline.p99Ms)
  const failures = pairs.map(({ candidate }) => candidate.non2xx + candidate.errors)
  const failureSum = failures.reduce((sum, n) => sum + n, 0)
  return [
    check('throughput ratio (req/s)', throughput, median(throughput), `>= ${targets.minThroughputRatio.toFixed(2)}`, (v) => v >= targets.minThroughputRatio, 2),
    check('p99 ratio', p99, median(p99), targets.maxP99Ratio === undefined ? '(none)' : `<= ${targets.maxP99Ratio.toFixed(2)}`, (v) => targets.maxP99Ratio === undefined || v <= targets.maxP99Ratio, 2),
    check('non-2xx + errors under load', failures, failureSum, '0', (v) => v === 0, 0),
    ...(targets.maxServerCpuMicros === undefined ? [] : [cpuCheck(pairs, targets.maxServerCpuMicros)]),
  ]
}

function cpuCheck(pairs: Pair[], max: number): Check {
  const micros = pairs.map(({ candidate }) => candidate.serverCpuMicros ?? Number.NaN)
  return check('server CPU µs per request', micros, median(micros), `<= ${max}`, (v) => v <= max, 1)
}

function check(name: string, values: number[], verdict: number, target: string, passes: (value: number) => boolean, digits: number): Check {
  return { name, values, verdict, target, pass: passes(verdict), digits }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

export function checksTable(checks: Check[]): string {
  const rounds = checks[0]?.values.length ?? 0
  const roundHeaders = rounds > 1 ? Array.from({ length: rounds }, (_, i) => `round ${i + 1}`) : []
  const headers = ['check', ...roundHeaders, rounds > 1 ? 'verdict (median; sum of counts)' : 'value', 'target', 'result']
  const rows = checks.map((c) => [
    c.name,
    ...(rounds > 1 ? c.values.map((v) => v.toFixed(c.digits)) : []),
    c.verdict.toFixed(c.digits),
    c.target,
    c.pass ? 'PASS' : 'FAIL',
  ])
  return markdownTable(headers, rows, ['left', ...roundHeaders.map((): Align => 'right'), 'right', 'left', 'left'])
}
