import type { Db } from '../../db/database.ts'
import { runAgainIn, type JobHandler } from '../../jobs/runner.ts'
import type { Clock } from '../../lib/clock.ts'
import { processDueWork } from './due-work.ts'

export const DUE_WORK_JOB = 'subscriptions.due_work'
const DUE_WORK_EVERY_MS = 1_000
const BATCH = 200

/** The recurring job that activates, resumes, cancels, reminds and opens prepaid cycles when due. */
export function dueWorkJobs({ db, clock, log }: { db: Db; clock: Clock; log?: { error(object: object, message: string): void } }): Record<string, JobHandler> {
  return {
    [DUE_WORK_JOB]: async () => {
      const counts = await processDueWork(db, clock, { limit: BATCH, ...(log ? { log } : {}) })
      // A full batch means more may be due: come back at once rather than in a second.
      const busy = counts.activations + counts.resumptions + counts.cancellations + counts.reminders + counts.prepaidCycles >= BATCH
      return runAgainIn(busy ? 0 : DUE_WORK_EVERY_MS)
    },
  }
}
