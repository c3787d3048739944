import { readFileSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { markdownTable } from './report.ts'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}

interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

export interface CpuBreakdown {
  /** Where the .cpuprofile was written (open it in Chrome DevTools or speedscope). */
  file: string
  totalMs: number
  /** Samples in the inspector session itself, left out of the rest. */
  overheadMs: number
  /** Self time by package (node_modules/<name>), by src/ file, or by Node internal area. */
  byArea: { area: string; ms: number }[]
  /** The heaviest functions by self time. */
  byFunction: { name: string; ms: number }[]
}

/** Profiles this process's CPU (V8 sampling profiler, via the inspector) while `work` runs. */
export async function profileCpu<T>(work: () => Promise<T>, bench = 'webhooks'): Promise<{ value: T; breakdown: CpuBreakdown }> {
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: 200 })
  await session.post('Profiler.start')
  let value: T
  let profile: Profile
  try {
    value = await work()
  } finally {
    profile = ((await session.post('Profiler.stop')) as unknown as { profile: Profile }).profile
    session.disconnect()
  }
  const file = join(tmpdir(), `bench-${bench}-${process.pid}-${Date.now()}.cpuprofile`)
  writeFileSync(file, JSON.stringify(profile))
  return { value, breakdown: summarise(profile, file) }
}

function areaOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)'
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (pkg) return pkg[1]!
  const src = /\/(src\/.*)$/.exec(url)
  if (src) return src[1]!
  const bench = /\/(bench\/.*)$/.exec(url)
  if (bench) return bench[1]!
  const internal = /^node:internal\/(.*?)(\.js)?$/.exec(url)
  if (internal) return `node: ${internal[1]!.split('/').slice(0, 2).join('/')}`
  return url.startsWith('node:') ? url : url.replace(/^file:\/\//, '')
}

/** A .cpuprofile written elsewhere (`node --cpu-prof`), summarised as profileCpu does. */
export function summariseProfileFile(file: string): CpuBreakdown {
  return summarise(JSON.parse(readFileSync(file, 'utf8')) as Profile, file)
}

function summarise(profile: Profile, file: string): CpuBreakdown {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfUs = new Map<number, number>()
  for (let i = 0; i < profile.samples.length; i++) selfUs.set(profile.samples[i]!, (selfUs.get(profile.samples[i]!) ?? 0) + (profile.timeDeltas[i] ?? 0))
  const areas = new Map<string, number>()
  const functions = new Map<string, number>()
  let total = 0
  let overhead = 0
  for (const [id, us] of selfUs) {
    const { callFrame } = nodes.get(id)!
    if (callFrame.functionName === '(idle)') continue
    // The inspector session itself (taking the profile), not the work profiled.
    if (callFrame.url === 'node:inspector') {
      overhead += us
      continue
    }
    total += us
    const area = areaOf(callFrame.url, callFrame.functionName)
    areas.set(area, (areas.get(area) ?? 0) + us)
    const name = `${callFrame.functionName || '(anonymous)'} ${area}:${callFrame.lineNumber + 1}`
    functions.set(name, (functions.get(name) ?? 0) + us)
  }
  const sorted = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]).map(([key, us]) => ({ key, ms: us / 1000 }))
  return {
    file,
    totalMs: total / 1000,
    overheadMs: overhead / 1000,
    byArea: sorted(areas).map(({ key, ms }) => ({ area: key, ms })),
    byFunction: sorted(functions).slice(0, 15).map(({ key, ms }) => ({ name: key, ms })),
  }
}

/**
 * A profile's two tables, as the benches print them: self time by area and the heaviest functions,
 * each area also per unit of work (`count` of them: deliveries, rows).
 */
export function cpuTables(breakdown: CpuBreakdown, count: number, unit: string): string[] {
  const share = (ms: number) => `${((100 * ms) / breakdown.totalMs).toFixed(0)}%`
  return [
    markdownTable(
      ['area', 'ms', `µs per ${unit}`, 'share'],
      breakdown.byArea.slice(0, 14).map(({ area, ms }) => [area, ms.toFixed(0), ((1000 * ms) / count).toFixed(1), share(ms)]),
      ['left', 'right', 'right', 'right'],
    ),
    '',
    'Heaviest functions by self time:',
    '',
    markdownTable(
      ['function', 'ms', 'share'],
      breakdown.byFunction.slice(0, 12).map(({ name, ms }) => [`\`${name}\``, ms.toFixed(0), share(ms)]),
      ['left', 'right', 'right'],
    ),
  ]
}
