// Storefront plan discovery against a bare Fastify hello-world, loaded the same way in the same run.
// Usage: npm run bench:storefront [-- --duration N --rounds N]; DATABASE_URL=postgres://... for PostgreSQL.
import type { ChildServer } from './lib/child-server.ts'
import { alternateRounds, runBench, settingsOrUsage, startServiceAndBaseline } from './lib/harness.ts'
import { backgroundCpuBusy, checksTable, compareToBaseline, loadSummary, machineSummary, resultsTable, type Pair } from './lib/report.ts'
import type { BenchSettings } from './lib/settings.ts'

const PLAN_COUNT = 20
const TARGETS = { minThroughputRatio: 0.6, maxP99Ratio: 2 }
const SERVICE_ENTRY = new URL('./lib/service-child.ts', import.meta.url)

/**
 * Production settings, except that the rate limiter's ceiling is out of reach: it stays in the
 * measured path but must not refuse the load. Each may be overridden from the environment.
 */
const SERVICE_DEFAULTS: Record<string, string> = {
  NODE_ENV: 'production',
  // Production needs mail for sign-in links (src/config.ts); no worker runs here, so nothing is sent.
  SMTP_URL: 'smtp://127.0.0.1:9',
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
  const startedAt = new Date()
  const backgroundBusy = await backgroundCpuBusy()

  const started = await startServiceAndBaseline({ serviceEntry: SERVICE_ENTRY, serviceDefaults: SERVICE_DEFAULTS, serviceEnv: { BENCH_PLAN_COUNT: String(PLAN_COUNT) } })
  const { service, serviceEnv, databaseDescription } = started
  await verifyStorefront(service.url)

  const pairs = await alternateRounds(started, settings, 'storefront plans')

  const run = { startedAt, backgroundBusy, settings, databaseDescription, serviceEnv, service, pairs }
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
