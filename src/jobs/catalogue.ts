import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.ts'
import type { Db } from '../db/database.ts'
import { purgeExpiredIdempotencyKeys } from '../http/idempotency.ts'
import type { Clock } from '../lib/clock.ts'
import { createMagicLinkSender, createMailer, purgeExpiredPortalAuth, SEND_MAGIC_LINK_JOB, type Mailer } from '../modules/portal-auth/index.ts'
import { processDueWork } from '../modules/subscriptions/index.ts'
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
}

/** The recurring jobs: each reschedules itself after it runs. */
const RECURRING = ['subscriptions.due_work', 'maintenance.purge_expired'] as const

/** Every kind of background work the service does, by job kind. */
export function jobHandlers({ db, clock, log, portalUrl, mailer }: WorkerDeps): Record<string, JobHandler> {
  const later = (ms: number) => ({ rescheduleAt: new Date(Date.now() + ms) })
  const sendMagicLink = createMagicLinkSender({ db, clock, mailer, portalUrl, log })
  return {
    'subscriptions.due_work': async () => {
      const counts = await processDueWork(db, clock)
      // A full batch means more may be due: come back at once rather than in a second.
      const busy = counts.activations + counts.resumptions + counts.cancellations >= 200
      return later(busy ? 0 : DUE_WORK_EVERY_MS)
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
  const handlers = jobHandlers({ db, clock, log, portalUrl, mailer })
  for (const kind of RECURRING) await ensureRecurringJob(db, kind)
  const runner = createJobRunner({ db, handlers, log })
  runner.start()
  return {
    ...runner,
    async stop() {
      await runner.stop()
      mailer.close()
    },
    mailer,
  }
}
