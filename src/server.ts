import { buildApp } from './app.ts'
import { loadConfig } from './config.ts'
import { connectDatabase } from './db/connect.ts'
import { migrateToLatest } from './db/migrate.ts'
import { ensureDemoData, type DemoData } from './demo/demo-data.ts'
import { pino } from 'pino'
import { loggerOptions } from './http/logging.ts'
import { systemClock } from './lib/clock.ts'
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
})
await migrateToLatest(database.db)
if (config.bootstrap) await ensureBootstrapStore(database.db, config.bootstrap)
const demo = config.seedDemoData ? await ensureDemoData(database.db, config.dataDir) : undefined
// Work outside requests (jobs, renewals, deliveries) logs like the app does, through its own pino.
const log = pino(loggerOptions(config.logLevel) as object)
const services = createServices({ database, config, clock: systemClock, log })
const app = await buildApp({ database, config, services })
warn = (message) => app.log.warn(message)

// Known once listening (PORT=0 picks a port); sign-in links are only sent after that.
let origin = config.publicUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`
const portalUrl = () => config.portalUrl ?? `${origin}/portal`
const worker = config.role === 'api' ? undefined : await startWorker(services, { portalUrl })

let stopping = false
async function shutdown(signal: string): Promise<void> {
  if (stopping) return
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
process.once('SIGTERM', () => void shutdown('SIGTERM'))
process.once('SIGINT', () => void shutdown('SIGINT'))

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
    `  Widget         ${origin}/widget.js`,
  ]
  if (demo) {
    lines.push(
      `  Demo store     ${demo.storeHash} (test mode)`,
      `  Demo admin key ${demo.adminKey}`,
      `  Try            curl '${origin}/api/v1/storefront/plans?store_hash=${demo.storeHash}&platform_product_id=${demo.platformProductId}'`,
      `                 curl -H 'Authorization: Bearer ${demo.adminKey}' ${origin}/api/v1/admin/plans`,
    )
  }
  process.stdout.write(`${lines.join('\n')}\n\n`)
}
