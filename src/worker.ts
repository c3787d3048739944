import type { FastifyBaseLogger } from 'fastify'
import type { Db } from './db/database.ts'
import { purgeExpiredIdempotencyKeys } from './http/idempotency.ts'
import { createJobRunner, ensureRecurringJob, runAgainIn, type JobHandler, type JobRunner } from './jobs/runner.ts'
import type { Clock } from './lib/clock.ts'
import { systemClock } from './lib/clock.ts'
import { RECONCILE_JOB, RENEWALS_JOB, renewalJobs, type RenewalEngine } from './modules/billing/index.ts'
import { createMagicLinkSender, createMailer, purgeExpiredPortalAuth, SEND_MAGIC_LINK_JOB, type Mailer } from './modules/portal-auth/index.ts'
import { DUE_WORK_JOB, dueWorkJobs } from './modules/subscriptions/index.ts'
import { createWebhookAgent, createWebhookDispatcher, DEFAULT_RETRY_SCHEDULE_MS, startDispatchLoop } from './modules/webhooks/index.ts'
import type { OrderWebhooks } from './modules/platform/index.ts'
import type { Services } from './services.ts'
import { createNotificationSender, expiryCheckJobs, INSTRUMENT_EXPIRY_JOB, SEND_NOTIFICATION_JOB } from './modules/notifications/index.ts'

/**
 * The worker of `ROLE=worker` and `ROLE=all`: the job runner with every module's job handlers, and
 * the webhook dispatch loop beside it.
 */

const PURGE_JOB = 'maintenance.purge_expired'
const PURGE_EVERY_MS = 3_600_000
const RECONCILE_EVERY_MS = 5_000

/**
 * The recurring jobs: each reschedules itself after it runs. Renewals run as several instances so
 * that several worker processes charge at once (they claim disjoint rows with SKIP LOCKED).
 */
const RECURRING: { kind: string; instances: number }[] = [
  { kind: DUE_WORK_JOB, instances: 1 },
  { kind: RENEWALS_JOB, instances: 4 },
  { kind: RECONCILE_JOB, instances: 1 },
  { kind: PURGE_JOB, instances: 1 },
  { kind: INSTRUMENT_EXPIRY_JOB, instances: 1 },
]

export interface WorkerDeps {
  db: Db
  clock: Clock
  log: FastifyBaseLogger
  /** Where sign-in links point; a function because the listening address is known only after start. */
  portalUrl: () => string
  mailer: Mailer
  renewals: RenewalEngine
  /** How often to look for charges whose worker died; no more often than their lease can end. */
  reconcileEveryMs?: number
  /** Registering the platform's order webhooks and acting on them (src/modules/platform/order-webhooks.ts). */
  orderWebhooks?: Pick<OrderWebhooks, 'jobs' | 'maintain'>
}

/** Every kind of background work the service does, by job kind, from the modules that own it. */
export function jobHandlers({ db, clock, log, portalUrl, mailer, renewals, reconcileEveryMs = RECONCILE_EVERY_MS, orderWebhooks }: WorkerDeps): Record<string, JobHandler> {
  const sendMagicLink = createMagicLinkSender({ db, clock, mailer, portalUrl, log })
  return {
    ...dueWorkJobs({ db, clock, log }),
    ...renewalJobs(renewals, { reconcileEveryMs }),
    ...(orderWebhooks ? orderWebhooks.jobs() : {}),
    [SEND_MAGIC_LINK_JOB]: async (job) => {
      await sendMagicLink(job.payload)
    },
    [SEND_NOTIFICATION_JOB]: createNotificationSender({ db, clock, mailer, portalUrl, log }),
    ...expiryCheckJobs({ db, clock }),
    [PURGE_JOB]: async () => {
      await purgeExpiredIdempotencyKeys(db)
      await purgeExpiredPortalAuth(db, clock.now())
      await orderWebhooks?.maintain()
      return runAgainIn(PURGE_EVERY_MS)
    },
  }
}

/** Makes sure the recurring jobs exist, then runs the queue and the webhook dispatcher until stopped. */
export async function startWorker(services: Services, { portalUrl }: { portalUrl: () => string }): Promise<JobRunner & { mailer: Mailer }> {
  const { db, clock, config, log, renewals } = services
  const mailer = createMailer({ smtpUrl: config.smtpUrl, from: config.smtpFrom, log, requireTls: config.smtpRequireTls })
  const reconcileEveryMs = Math.max(500, Math.min(RECONCILE_EVERY_MS, config.billing.chargeLeaseMs))
  const handlers = jobHandlers({ db, clock, log, portalUrl, mailer, renewals, reconcileEveryMs, orderWebhooks: services.orderWebhooks })
  for (const { kind, instances } of RECURRING) {
    for (let instance = 0; instance < instances; instance++) await ensureRecurringJob(db, kind, instance)
  }
  const runner = createJobRunner({ db, handlers, log, leaseMs: config.jobLeaseMs })
  runner.start()
  const agent = createWebhookAgent({ allowPrivateNetworks: config.webhookAllowPrivateNetworks, connections: config.webhooks.concurrency })
  const dispatcher = createWebhookDispatcher({
    db,
    clock: systemClock,
    agent,
    retrySchedule: config.webhooks.retrySchedule ?? DEFAULT_RETRY_SCHEDULE_MS,
    disableAfterMs: config.webhooks.disableAfterMs,
    timeoutMs: config.webhooks.timeoutMs,
    concurrency: config.webhooks.concurrency,
    batchSize: config.webhooks.batchSize,
    log,
  })
  const dispatch = startDispatchLoop({ dispatcher, log })
  return {
    ...runner,
    async stop() {
      await Promise.all([runner.stop(), dispatch.stop()])
      mailer.close()
      await agent.close()
    },
    mailer,
  }
}
