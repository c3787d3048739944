import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { Writable } from 'node:stream'
import pino from 'pino'
import { buildApp } from '../../src/app.ts'
import { loadConfig, type Config } from '../../src/config.ts'
import type { DatabaseHandle } from '../../src/db/connect.ts'
import type { Db, StoreMode, StoreRow } from '../../src/db/database.ts'
import type { App } from '../../src/http/types.ts'
import type { Clock } from '../../src/lib/clock.ts'
import { createAdminKey, createStore } from '../../src/modules/stores/index.ts'
import { createServices, type Services } from '../../src/services.ts'
import { createTestDatabase } from './database.ts'

export interface TestApp {
  app: App
  db: Db
  database: DatabaseHandle
  /**
   * The app's services. A test that writes a store, key or sign-out straight into the database, as
   * another process would, and needs this app to see it on its next request tells
   * `services.authCache` (src/modules/stores/auth-cache.ts), as the services that write do.
   */
  services: Services
  /** Every log line the app wrote, as text: for asserting what never reaches the logs. */
  logs: string[]
  close(): Promise<void>
}

export interface TestAppOptions {
  env?: Record<string, string>
  clock?: Clock
  /** Reuse a database (to build a second app on the same data); it is then not closed with the app. */
  database?: DatabaseHandle
}

export function testConfig(env: Record<string, string> = {}): Readonly<Config> {
  return loadConfig({ NODE_ENV: 'test', RESPONSE_VALIDATION: 'true', LOG_LEVEL: 'info', SEED_DEMO_DATA: 'false', ...env })
}

/** The whole service on its own fresh database, with response validation on and logs captured. */
export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase())
  const logs: string[] = []
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      logs.push(String(chunk))
      callback()
    },
  })
  const config = testConfig(options.env)
  const { loggerOptions } = await import('../../src/http/logging.ts')
  // Built here rather than by buildApp so tests can reach them; their logs go to the same capture.
  const services = createServices({ database, config, ...(options.clock ? { clock: options.clock } : {}), log: pino(loggerOptions(config.logLevel) as pino.LoggerOptions, stream) })
  const app = await buildApp({
    database,
    config,
    services,
    ...(options.clock ? { clock: options.clock } : {}),
    logger: { ...(loggerOptions(config.logLevel) as object), stream },
  })
  await app.ready()
  return {
    app,
    db: database.db,
    database,
    services,
    logs,
    close: async () => {
      await app.close()
      await services.close()
      if (!options.database) await database.close()
    },
  }
}

export interface StoreWithKey {
  store: StoreRow
  key: string
  /** Authorization headers for this store's admin key. */
  auth: { authorization: string }
}

let storeCounter = 0

export async function createStoreWithKey(db: Db, options: { mode?: StoreMode; storeHash?: string; timezone?: string } = {}): Promise<StoreWithKey> {
  storeCounter += 1
  const store = await createStore(db, {
    storeHash: options.storeHash ?? `store-${process.pid}-${storeCounter}-${Math.random().toString(36).slice(2, 8)}`,
    mode: options.mode ?? 'test',
    ...(options.timezone ? { timezone: options.timezone } : {}),
  })
  const { key } = await createAdminKey(db, store)
  return { store, key, auth: { authorization: `Bearer ${key}` } }
}

/** app.inject with the JSON body parsed, for terse assertions. */
export async function call(app: App, options: InjectOptions): Promise<LightMyRequestResponse & { body: string; json: any }> {
  const response = await app.inject(options)
  let json: unknown
  try {
    json = response.body ? JSON.parse(response.body) : undefined
  } catch {
    json = undefined
  }
  return Object.assign(response, { json })
}
