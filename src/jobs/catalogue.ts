import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.ts'
import type { Db } from '../db/database.ts'
import { purgeExpiredIdempotencyKeys } from '../http/idempotency.ts'
import type { Clock } from '../lib/clock.ts'
import { createMagicLinkSender, createMailer, purgeExpiredPortalAuth, SEND_MAGIC_LINK_JOB, type Mailer } from '../modules/portal-auth/index.ts'
import { processDueWork } from '../modules/subscriptions/index.ts'
import { createGatewayResolver, createRenewalEngine, type RenewalEngine } from '../modules/billing/index.ts'
import { createWebhookAgent, createWebhookDispatcher, startDispatchLoop } from '../modules/webhooks/index.ts'
import { systemClock } from '../lib/clock.ts'
import { createJobRunner, ensureRecurringJob, type JobHandler, type JobRunner } from './runner.ts'

const DUE_WORK_EVERY_MS = 1_000
const PURGE_EVERY_MS = 3_600_000

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
}

/**
 * The recurring jobs: each reschedules itself after it runs. Renewals run as several instances so
 * that several worker processes charge at once (they claim disjoint rows with SKIP LOCKED).
 */
const RENEWAL_INSTANCES = 4
const RECURRING: { kind: string; instances: number }[] = [
  { kind: 'subscriptions.due_work', instances: 1 },
  { kind: 'billing.renewals', instances: RENEWAL_INSTANCES },
  { kind: 'billing.reconcile', instances: 1 },
  { kind: 'maintenance.purge_expired', instances: 1 },
]
const RECONCILE_EVERY_MS = 5_000

/** Every kind of background work the service does, by job kind. */
export function jobHandlers({ db, clock, log, portalUrl, mailer, renewals, reconcileEveryMs = RECONCILE_EVERY_MS }: WorkerDeps): Record<string, JobHandler> {
  const later = (ms: number) => ({ rescheduleAt: new Date(Date.now() + ms) })
  const sendMagicLink = createMagicLinkSender({ db, clock, mailer, portalUrl, log })
  return {
    'subscriptions.due_work': async () => {
      const counts = await processDueWork(db, clock)
      // A full batch means more may be due: come back at once rather than in a second.
      const busy = counts.activations + counts.resumptions + counts.cancellations + counts.reminders + counts.prepaidCycles >= 200
      return later(busy ? 0 : DUE_WORK_EVERY_MS)
    },
    'billing.renewals': async () => {
      const counts = await renewals.runDue()
      return later(counts.claimed > 0 ? 0 : DUE_WORK_EVERY_MS)
    },
    'billing.reconcile': async () => {
      const taken = await renewals.reconcile()
      return later(taken > 0 ? 0 : reconcileEveryMs)
    },
    'maintenance.purge_expired': async () => {
      await purgeExpiredIdempotencyKeys(db)
      await purgeExpiredPortalAuth(db, clock.now())
      return later(PURGE_EVERY_MS)
    },
    [SEND_MAGIC_LINK_JOB]: async (job) => {
      await sendMagicLink(job.payload)
    },
  }
}

/** The worker of `ROLE=worker` and `ROLE=all`: makes sure recurring jobs exist, then runs the queue. */
export async function startWorker(
  db: Db,
  clock: Clock,
  log: FastifyBaseLogger,
  { config, portalUrl }: { config: Readonly<Config>; portalUrl: () => string },
): Promise<JobRunner & { mailer: Mailer }> {
  const mailer = createMailer({ smtpUrl: config.smtpUrl, from: config.smtpFrom, log })
  const gateways = createGatewayResolver(db, config.billing)
  const { chargeLeaseMs: leaseMs, concurrency, batchSize, unknownGraceMs } = config.billing
  const renewals = createRenewalEngine({ db, clock, gateways, leaseMs, concurrency, batchSize, unknownGraceMs, log })
  const reconcileEveryMs = Math.max(500, Math.min(RECONCILE_EVERY_MS, leaseMs))
  const handlers = jobHandlers({ db, clock, log, portalUrl, mailer, renewals, reconcileEveryMs })
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
    retrySchedule: config.webhooks.retrySchedule,
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
      await gateways.close()
      await agent.close()
    },
    mailer,
  }
}
