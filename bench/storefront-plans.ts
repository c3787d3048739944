// Storefront plan discovery against a bare Fastify hello-world, loaded the same way in the same run.
// Usage: npm run bench:storefront [-- --duration N --rounds N]; DATABASE_URL=postgres://... for PostgreSQL.
import { prepareBenchDatabase } from './lib/bench-database.ts'
import type { ChildServer } from './lib/child-server.ts'
import { deferCleanup } from './lib/cleanup.ts'
import { load, pick, runBench, settingsOrUsage, startServer, verifyHello } from './lib/harness.ts'
import { backgroundCpuBusy, checksTable, compareToBaseline, loadSummary, machineSummary, resultsTable, type Pair } from './lib/report.ts'
import type { BenchSettings } from './lib/settings.ts'

const PLAN_COUNT = 20
const TARGETS = { minThroughputRatio: 0.6, maxP99Ratio: 2 }
const HELLO_ENTRY = new URL('./lib/hello-child.ts', import.meta.url)
const SERVICE_ENTRY = new URL('./lib/service-child.ts', import.meta.url)

/**
 * Production settings, except that the rate limiter's ceiling is out of reach: it stays in the
 * measured path but must not refuse the load. Each may be overridden from the environment.
 */
const SERVICE_DEFAULTS: Record<string, string> = {
  NODE_ENV: 'production',
  LOG_LEVEL: 'warn',
  RESPONSE_VALIDATION: 'false',
  RATE_LIMIT_MAX: '1000000000',
}
const REPORTED_SERVICE_ENV = [...Object.keys(SERVICE_DEFAULTS), 'STOREFRONT_CACHE_TTL_MS']

interface Run {
  startedAt: Date
  backgroundBusy: string
  settings: BenchSettings
  databaseDescription: string
  serviceEnv: Record<string, string | undefined>
  service: ChildServer
  pairs: Pair[]
}

async function main(): Promise<void> {
  const settings = settingsOrUsage('bench:storefront')
  if (!settings) return
  const { DATABASE_URL: databaseUrl, DATA_DIR: _dataDir, ...inherited } = process.env
  const startedAt = new Date()
  const backgroundBusy = await backgroundCpuBusy()

  const database = await prepareBenchDatabase(databaseUrl)
  const dropDatabase = deferCleanup(database.dispose)
  const serviceEnv = {
    ...inherited,
    ...SERVICE_DEFAULTS,
    ...pick(process.env, Object.keys(SERVICE_DEFAULTS)),
    ...database.env,
    PORT: '0',
    HOST: '127.0.0.1',
    SEED_DEMO_DATA: 'false',
    BENCH_PLAN_COUNT: String(PLAN_COUNT),
  }
  // Both stay up for every round, but only one is ever under load; an idle server costs nothing.
  const hello = await startServer('hello-world', HELLO_ENTRY, inherited)
  await verifyHello(hello.url)
  const service = await startServer('service', SERVICE_ENTRY, serviceEnv)
  await verifyStorefront(service.url)

  const pairs: Pair[] = []
  for (let round = 1; round <= settings.rounds; round++) {
    const baseline = await load(`hello-world, round ${round}`, hello, settings)
    const candidate = await load(`storefront plans, round ${round}`, service, settings)
    pairs.push({ baseline, candidate })
  }
  await Promise.all([hello.stop(), service.stop()])
  await dropDatabase()

  const run = { startedAt, backgroundBusy, settings, databaseDescription: database.description, serviceEnv, service, pairs }
  process.stdout.write(`${report(run)}\n`)
}

async function verifyStorefront(url: string): Promise<void> {
  const response = await fetch(url)
  const body = await response.text()
  if (response.status !== 200) throw new Error(`storefront plans answered ${response.status}: ${body}`)
  const plans = (JSON.parse(body) as { data?: unknown[] }).data?.length
  if (plans !== PLAN_COUNT) throw new Error(`storefront plans listed ${plans} plans, expected ${PLAN_COUNT}`)
}

function report({ startedAt, backgroundBusy, settings, databaseDescription, serviceEnv, service, pairs }: Run): string {
  const env = REPORTED_SERVICE_ENV.map((key) => `${key}=${serviceEnv[key] ?? '(default)'}`).join(' ')
  const url = new URL(service.url)
  const results = pairs.flatMap(({ baseline, candidate }, i) => [
    { name: 'hello-world (bare Fastify)', round: i + 1, result: baseline },
    { name: `storefront plans (${PLAN_COUNT} plans)`, round: i + 1, result: candidate },
  ])
  return [
    '',
    `## storefront plans vs hello-world on ${service.details.engine}`,
    '',
    `- date: ${startedAt.toISOString()}`,
    `- machine: ${machineSummary()}; CPUs ${backgroundBusy} busy with other work just before the run`,
    `- database: ${databaseDescription}, server_version ${service.details.serverVersion}`,
    `- load: ${loadSummary(settings)}`,
    `- service: ${env}`,
    `- storefront request: GET ${url.pathname}${url.search} (one product, ${service.details.planCount} plans)`,
    '',
    resultsTable(results, settings.rounds > 1),
    '',
    checksTable(compareToBaseline(pairs, TARGETS)),
    '',
  ].join('\n')
}

await runBench(main)
