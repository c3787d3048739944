import type { Db } from '../../db/database.ts'
import { handleJob, jobKind, NoPayload, type JobHandler } from '../../jobs/job-kinds.ts'
import { runAgainIn } from '../../jobs/runner.ts'
import type { Clock } from '../../lib/clock.ts'
import { processDueWork } from './due-work.ts'
import type { SubscriptionWrites } from './subscription-writes.ts'

/** Activates, resumes, cancels, reminds and opens prepaid cycles when due, on each store's clock. */
export const DueWork = jobKind('subscriptions.due_work', NoPayload, { maxAttempts: 1_000_000 })
const DUE_WORK_EVERY_MS = 1_000
const BATCH = 200

export function dueWorkJob({ db, clock, writes, log }: { db: Db; clock: Clock; writes: SubscriptionWrites; log?: { error(object: object, message: string): void } }): JobHandler {
  return handleJob(DueWork, async () => {
    const counts = await processDueWork(db, clock, writes, { limit: BATCH, ...(log ? { log } : {}) })
    // A full batch means more may be due: come back at once rather than in a second.
    const busy = counts.activations + counts.resumptions + counts.cancellations + counts.reminders + counts.prepaidCycles >= BATCH
    return runAgainIn(busy ? 0 : DUE_WORK_EVERY_MS)
  }, { recurring: { instances: 1 } })
}
