import { buildApp } from './app.ts'
import { loadConfig } from './config.ts'
import { connectDatabase } from './db/connect.ts'
import { migrateToLatest } from './db/migrate.ts'
import { migrations } from './db/migrations/index.ts'
import { ensureDemoData, type DemoData } from './demo/demo-data.ts'
import { pino } from 'pino'
import { loggerOptions } from './http/logging.ts'
import { systemClock } from './lib/clock.ts'
import { createMailer } from './lib/mailer.ts'
import { requireMailForLiveStores } from './modules/portal-auth/index.ts'
import { ensureBootstrapStore } from './modules/stores/index.ts'
import { createServices } from './services.ts'
import { startWorker } from './worker.ts'

const startedAt = performance.now()
const config = loadConfig()
let warn: (message: string) => void = (message) => process.stderr.write(`${message}\n`)
const database = await connectDatabase({
  databaseUrl: config.databaseUrl,
  dataDir: config.dataDir,
  onIdleConnectionError: (error) => warn(`database dropped an idle connection: ${error.message}`),
  onNotice: (message) => warn(message),
})
const migrated = await migrateToLatest(database.db)
// Every migration ran in this start: the database did not exist before it.
const createdNow = migrated.results?.length === Object.keys(migrations).length
if (config.bootstrap) await ensureBootstrapStore(database.db, config.bootstrap, { warn: (message) => warn(message) })
try {
  await requireMailForLiveStores(database.db, config.smtpUrl)
} catch (error) {
  await database.close()
  throw error
}
// Demo data only where nobody's data can be: by default on an embedded database this start created.
const demo = config.seedDemoData === 'never' ? undefined : await ensureDemoData(database.db, { create: config.seedDemoData === 'always' || createdNow })
// Work outside requests (jobs, renewals, deliveries) logs like the app does, through its own pino.
const log = pino(loggerOptions(config.logLevel) as object)
// Known once listening (PORT=0 picks a port); sign-in links are only sent after that.
let origin = config.publicUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`
const portalUrl = () => config.portalUrl ?? `${origin}/portal`
const runsWorker = config.role !== 'api'
// Only a process that runs the worker sends mail (and says once if it would only log it).
const mailer = runsWorker ? createMailer({ smtpUrl: config.smtpUrl, from: config.smtpFrom, log, requireTls: config.smtpRequireTls }) : undefined
const services = createServices({ database, config, clock: systemClock, log, portalUrl, ...(mailer ? { mailer } : {}) })
const app = await buildApp({ database, config, services })
warn = (message) => app.log.warn(message)

const worker = runsWorker ? await startWorker(services) : undefined

let stopping = false
async function shutdown(signal: string): Promise<void> {
  if (stopping) {
    app.log.info({ signal }, 'already shutting down')
    return
  }
  stopping = true
  app.log.info({ signal }, 'shutting down: finishing in-flight requests')
  const force = setTimeout(() => {
    app.log.error('shutdown timed out; exiting')
    process.exit(1)
  }, config.shutdownTimeoutMs)
  force.unref()
  try {
    // HTTP stops taking requests at once while the worker finishes its jobs. app.close resolves only when
    // every request that started has ended, its client still there or not (src/http/graceful-stop.ts):
    // only then may what requests use (the services, the database) be closed.
    await Promise.all([worker?.stop(), app.close()])
    await services.close()
    await database.close()
    process.exit(0)
  } catch (error) {
    app.log.error({ err: error }, 'shutdown failed')
    process.exit(1)
  }
}
// `on`, not `once`: a second signal (a process manager, or npm passing one on) must not fall back to
// Node's default and kill the process while the database is closing; it is only noted.
process.on('SIGTERM', () => void shutdown('SIGTERM'))
process.on('SIGINT', () => void shutdown('SIGINT'))

await app.listen({ port: config.port, host: config.host })
const address = app.server.address()
const port = typeof address === 'object' && address ? address.port : config.port
origin = config.publicUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`
printBanner(origin, demo)

function printBanner(origin: string, demo: DemoData | undefined): void {
  const lines = [
    '',
    `Subscription billing API ready in ${Math.round(performance.now() - startedAt)} ms (${database.engine}: ${database.location}, role ${config.role})`,
    `  API base URL   ${origin}/api/v1`,
    `  API reference  ${origin}/docs`,
    `  OpenAPI        ${origin}/api/v1/openapi.json`,
    `  Health         ${origin}/healthz   ${origin}/readyz   ${origin}/metrics`,
    `  Portal         ${origin}/portal${demo ? `?store=${demo.storeHash}` : ''}`,
    `  Console        ${origin}/console   (sign in with an admin key)`,
    `  Widget         ${origin}/widget.js`,
  ]
  if (demo?.adminKey) {
    // Shown this once, when it is made: the database keeps only its hash.
    lines.push(
      `  Demo store     ${demo.storeHash} (test mode, created now)`,
      `  Demo admin key ${demo.adminKey}   (shown only now: keep it)`,
      `  Try            curl '${origin}/api/v1/storefront/plans?store_hash=${demo.storeHash}&platform_product_id=${demo.platformProductId}'`,
      `                 curl -H 'Authorization: Bearer ${demo.adminKey}' ${origin}/api/v1/admin/plans`,
    )
  } else if (demo) {
    lines.push(
      `  Demo store     ${demo.storeHash} (test mode): its admin key was printed when it was created; \`npm run cli -- key create --store ${demo.storeHash}\` makes another`,
      `  Try            curl '${origin}/api/v1/storefront/plans?store_hash=${demo.storeHash}&platform_product_id=${demo.platformProductId}'`,
    )
  }
  process.stdout.write(`${lines.join('\n')}\n\n`)
}
