// What every "service against hello-world" bench script does the same way: options, child servers,
// one load, and the run's error handling and cleanup.
import { startChild, type ChildServer } from './child-server.ts'
import { deferCleanup, runCleanup } from './cleanup.ts'
import { measure, type LoadResult } from './load.ts'
import { readBenchSettings, SETTINGS_HELP, type BenchSettings } from './settings.ts'

/** The settings from argv and the environment; undefined after printing help or a usage error. */
export function settingsOrUsage(script: string): BenchSettings | undefined {
  const usage = `npm run ${script} [-- options]\n${SETTINGS_HELP}\n`
  try {
    const settings = readBenchSettings(process.argv.slice(2), process.env)
    if (settings !== 'help') return settings
    process.stdout.write(usage)
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${usage}`)
    process.exitCode = 2
  }
  return undefined
}

/** Starts a server in a child process, stopped by the run's cleanup whatever happens. */
export async function startServer(label: string, entry: URL, env: Record<string, string | undefined>): Promise<ChildServer> {
  process.stderr.write(`${label}: starting\n`)
  const child = await startChild(label, entry, env, nodeArgs())
  deferCleanup(child.stop)
  return child
}

export async function load(label: string, server: ChildServer, settings: BenchSettings, headers?: Record<string, string>): Promise<LoadResult> {
  process.stderr.write(`${label}: loading ${server.url}\n`)
  return measure(server.url, settings, server.cpuSeconds, headers)
}

/** BENCH_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=prof", goes to both servers' Node, to profile them. */
function nodeArgs(): string[] {
  return (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)
}

export async function verifyHello(url: string): Promise<void> {
  const response = await fetch(url)
  if (response.status !== 200) throw new Error(`hello-world answered ${response.status}`)
}

export function pick(source: Record<string, string | undefined>, keys: string[]): Record<string, string> {
  return Object.fromEntries(keys.flatMap((key) => (source[key] ? [[key, source[key]]] : [])))
}

/** Runs a bench's main, reports a failure as exit code 1, and always cleans up servers and databases. */
export async function runBench(main: () => Promise<void>): Promise<void> {
  try {
    await main()
  } catch (error) {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`)
    process.exitCode = 1
  } finally {
    await runCleanup()
  }
}
