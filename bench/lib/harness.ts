// What every "service against hello-world" bench script does the same way: options, child servers,
// one load, and the run's error handling and cleanup.
import { prepareBenchDatabase } from './bench-database.ts'
import { startChild, type ChildServer } from './child-server.ts'
import { deferCleanup, runCleanup } from './cleanup.ts'
import { measure, type LoadResult } from './load.ts'
import type { Pair } from './report.ts'
import { readBenchSettings, SETTINGS_HELP, type BenchSettings } from './settings.ts'

const HELLO_ENTRY = new URL('./hello-child.ts', import.meta.url)

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

export async function load(label: string, server: ChildServer, settings: BenchSettings, headers?: Record<string, string> | Array<Record<string, string>>): Promise<LoadResult> {
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

export interface ServiceAndBaseline {
  hello: ChildServer
  service: ChildServer
  serviceEnv: Record<string, string | undefined>
  databaseDescription: string
  dropDatabase(): Promise<void>
}

/**
 * The service under test on a scratch database (PGlite directory or a `bench_` PostgreSQL database)
 * and the bare hello-world baseline, each in a child process. `serviceDefaults` may be overridden
 * from the environment; `omitEnv` keeps variables of the bench's own environment from the children.
 */
export async function startServiceAndBaseline(options: {
  serviceEntry: URL
  serviceDefaults: Record<string, string>
  serviceEnv: Record<string, string>
  omitEnv?: string[]
}): Promise<ServiceAndBaseline> {
  const { DATABASE_URL: databaseUrl, DATA_DIR: _dataDir, ...rest } = process.env
  const inherited = Object.fromEntries(Object.entries(rest).filter(([key]) => !options.omitEnv?.includes(key)))
  const database = await prepareBenchDatabase(databaseUrl)
  const dropDatabase = deferCleanup(database.dispose)
  const serviceEnv = {
    ...inherited,
    ...options.serviceDefaults,
    ...pick(process.env, Object.keys(options.serviceDefaults)),
    ...database.env,
    PORT: '0',
    HOST: '127.0.0.1',
    SEED_DEMO_DATA: 'false',
    ...options.serviceEnv,
  }
  // Both stay up for every round, but only one is ever under load; an idle server costs nothing.
  const hello = await startServer('hello-world', HELLO_ENTRY, inherited)
  await verifyHello(hello.url)
  const service = await startServer('service', options.serviceEntry, serviceEnv)
  return { hello, service, serviceEnv, databaseDescription: database.description, dropDatabase }
}

/** Loads the baseline and the service in turn, `rounds` times, then stops both and drops the database. */
export async function alternateRounds(run: ServiceAndBaseline, settings: BenchSettings, label: string, headers?: Record<string, string> | Array<Record<string, string>>): Promise<Pair[]> {
  const pairs: Pair[] = []
  for (let round = 1; round <= settings.rounds; round++) {
    const baseline = await load(`hello-world, round ${round}`, run.hello, settings)
    const candidate = await load(`${label}, round ${round}`, run.service, settings, headers)
    pairs.push({ baseline, candidate })
  }
  await Promise.all([run.hello.stop(), run.service.stop()])
  await run.dropDatabase()
  return pairs
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
