import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../../db/database.ts'
import { enqueue, handleJob } from '../../jobs/job-kinds.ts'
import { runAgainIn } from '../../jobs/runner.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Module } from '../module.ts'
import type { PlatformService } from '../platform/index.ts'
import type { CheckoutService } from '../subscriptions/index.ts'
import { orderWebhookRoutes } from './order-webhooks.routes.ts'
import { createOrderWebhooks, type OrderWebhooks } from './order-webhooks.service.ts'
import { HandleOrderWebhook, MaintainOrderHooks, RegisterOrderHooks } from './storefront-orders.jobs.ts'

const MAINTAIN_EVERY_MS = 3_600_000

export interface StorefrontOrdersModuleDeps {
  db: Db
  clock: Clock
  platform: PlatformService
  checkouts: CheckoutService
  /** PUBLIC_URL: the hooks' destination is `{publicUrl}/platform/webhooks`. */
  publicUrl: string | undefined
  /** The app's client secret, for Standard Webhooks signatures on app-made hooks. */
  appClientSecret: string | undefined
  /** The API's per-address limit; the callback route counts in a bucket of its own, a multiple of it. */
  rateLimit: { max: number; windowMs: number }
  log: FastifyBaseLogger
}

/** Orders placed on the storefront start subscriptions: order webhooks registered per store, received, and turned into checkouts. */
export function createStorefrontOrdersModule({ db, clock, platform, checkouts, publicUrl, appClientSecret, rateLimit, log }: StorefrontOrdersModuleDeps): Module<OrderWebhooks> {
  const service = createOrderWebhooks({ db, clock, client: platform.client, connections: platform.connections, vault: platform.vault, checkouts, publicUrl, appClientSecret, log })
  // A store that connects gets its hooks registered by a job queued in the same transaction (retried on failure).
  platform.connections.onConnect((trx, storeId) => enqueue(trx, RegisterOrderHooks, { store_id: storeId }, { storeId }))
  return {
    name: 'storefront-orders',
    service,
    routes: { platform: (app) => orderWebhookRoutes(app, service, rateLimit) },
    jobs: [
      handleJob(RegisterOrderHooks, async ({ store_id }) => {
        await service.registerHooks(store_id)
      }),
      handleJob(HandleOrderWebhook, async ({ store_id, order_id, scope }) => {
        await service.handleOrder(store_id, order_id, scope)
      }),
      handleJob(MaintainOrderHooks, async () => {
        await service.maintain()
        return runAgainIn(MAINTAIN_EVERY_MS)
      }, { recurring: { instances: 1 } }),
    ],
  }
}

export { ORDER_HOOK_SCOPES, PAID_ORDER_STATUS_IDS, SUBSCRIPTION_OPTION_NAME, WEBHOOK_SECRET_HEADER, type OrderWebhooks } from './order-webhooks.service.ts'
