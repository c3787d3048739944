import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../db/database.ts'
import { purgeExpiredIdempotencyKeys } from '../http/idempotency.ts'
import type { Clock } from '../lib/clock.ts'
import { processDueWork } from '../modules/subscriptions/index.ts'
import { createJobRunner, ensureRecurringJob, type JobHandler, type JobRunner } from './runner.ts'

const DUE_WORK_EVERY_MS = 1_000
const PURGE_EVERY_MS = 3_600_000

/** Every kind of background work the service does, by job kind. */
export function jobHandlers(db: Db, clock: Clock): Record<string, JobHandler> {
  const later = (ms: number) => ({ rescheduleAt: new Date(Date.now() + ms) })
  return {
    'subscriptions.due_work': async () => {
      const counts = await processDueWork(db, clock)
      // A full batch means more may be due: come back at once rather than in a second.
      const busy = counts.activations + counts.resumptions + counts.cancellations >= 200
      return later(busy ? 0 : DUE_WORK_EVERY_MS)
    },
    'maintenance.purge_idempotency_keys': async () => {
      await purgeExpiredIdempotencyKeys(db)
      return later(PURGE_EVERY_MS)
    },
  }
}

/** The worker of `ROLE=worker` and `ROLE=all`: makes sure recurring jobs exist, then runs the queue. */
export async function startWorker(db: Db, clock: Clock, log: FastifyBaseLogger): Promise<JobRunner> {
  const handlers = jobHandlers(db, clock)
  for (const kind of Object.keys(handlers)) await ensureRecurringJob(db, kind)
  const runner = createJobRunner({ db, handlers, log })
  runner.start()
  return runner
}
