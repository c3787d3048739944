import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import type { EventLog } from '../events/index.ts'
import type { Module } from '../module.ts'
import { createWebhookDispatcher, type WebhookDispatcher } from './dispatcher.ts'
import { startDispatchLoop } from './dispatch-loop.ts'
import { DEFAULT_RETRY_SCHEDULE_MS } from './retry-schedule.ts'
import { createWebhookAgent } from './ssrf-guard.ts'
import { webhookSchemas } from './webhook.schemas.ts'
import { createWebhookService, type WebhookService } from './webhook-subscriptions.service.ts'
import { webhookAdminRoutes } from './webhooks.routes.ts'

export interface WebhooksModuleDeps {
  db: Db
  events: EventLog
  /** Real time: retries and signatures follow the wall clock, not a store's test clock. */
  clock: Clock
  settings: {
    allowPrivateNetworks: boolean
    /** Delays between attempts after a failure; undefined: DEFAULT_RETRY_SCHEDULE_MS. */
    retrySchedule: readonly number[] | undefined
    timeoutMs: number
    disableAfterMs: number
    concurrency: number
    batchSize: number
  }
  log: FastifyBaseLogger
}

/** Signed webhooks (Standard Webhooks): endpoints the merchant registers, and the delivery of every event to them. */
export function createWebhooksModule({ db, events, clock, settings, log }: WebhooksModuleDeps): Module<WebhookService> {
  const service = createWebhookService({ db, events, clock, allowPrivateNetworks: settings.allowPrivateNetworks })
  return {
    name: 'webhooks',
    service,
    routes: { admin: (app) => webhookAdminRoutes(app, service) },
    loops: [{
      name: 'webhook delivery',
      start() {
        const agent = createWebhookAgent({ allowPrivateNetworks: settings.allowPrivateNetworks, connections: settings.concurrency })
        const dispatcher: WebhookDispatcher = createWebhookDispatcher({
          db,
          clock,
          agent,
          retrySchedule: settings.retrySchedule ?? DEFAULT_RETRY_SCHEDULE_MS,
          disableAfterMs: settings.disableAfterMs,
          timeoutMs: settings.timeoutMs,
          concurrency: settings.concurrency,
          batchSize: settings.batchSize,
          log,
        })
        const loop = startDispatchLoop({ dispatcher, log })
        return {
          async stop() {
            await loop.stop()
            await agent.close()
          },
        }
      },
    }],
    schemas: webhookSchemas,
  }
}

export { WebhookTest, webhookSchemas } from './webhook.schemas.ts'
export type { WebhookService } from './webhook-subscriptions.service.ts'
export { createWebhookDispatcher, type WebhookDispatcher } from './dispatcher.ts'
export { startDispatchLoop, type DispatchLoop } from './dispatch-loop.ts'
export { createWebhookAgent } from './ssrf-guard.ts'
export { DEFAULT_DISABLE_AFTER_MS, DEFAULT_RETRY_SCHEDULE_MS, parseRetrySchedule } from './retry-schedule.ts'
