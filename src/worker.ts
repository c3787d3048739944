import { purgeExpiredIdempotencyKeys } from './http/idempotency.ts'
import { ensureRecurring, handleJob, jobKind, NoPayload, type JobHandler } from './jobs/job-kinds.ts'
import { createJobRunner, runAgainIn, type JobRunner } from './jobs/runner.ts'
import type { Services } from './services.ts'

/**
 * The worker of `ROLE=worker` and `ROLE=all`: the job runner with every module's job handlers, and
 * every module's background loops (the webhook dispatch loop) beside it.
 */

/** The API's own upkeep (idempotency keys are the HTTP layer's, not a module's). */
const PurgeIdempotencyKeys = jobKind('maintenance.purge_expired', NoPayload, { maxAttempts: 1_000_000 })
const PURGE_EVERY_MS = 3_600_000

/** Every kind of background work the service does, from the modules that own it. */
export function jobHandlersOf(services: Pick<Services, 'db' | 'list'>): JobHandler[] {
  return [
    ...services.list.flatMap((module) => module.jobs ?? []),
    handleJob(PurgeIdempotencyKeys, async () => {
      await purgeExpiredIdempotencyKeys(services.db)
      return runAgainIn(PURGE_EVERY_MS)
    }, { recurring: { instances: 1 } }),
  ]
}

/** Makes sure the recurring jobs exist, then runs the queue and the modules' loops until stopped. */
export async function startWorker(services: Services): Promise<JobRunner> {
  const { db, config, log } = services
  const handlers = jobHandlersOf(services)
  for (const { job, recurring } of handlers) {
    for (let instance = 0; instance < (recurring?.instances ?? 0); instance++) await ensureRecurring(db, job, instance)
  }
  const runner = createJobRunner({ db, handlers, log, leaseMs: config.jobLeaseMs })
  runner.start()
  const loops = services.list.flatMap((module) => module.loops ?? []).map((loop) => loop.start())
  return {
    ...runner,
    async stop() {
      await Promise.all([runner.stop(), ...loops.map((loop) => loop.stop())])
    },
  }
}
