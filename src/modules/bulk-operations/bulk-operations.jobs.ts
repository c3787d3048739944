import { Type } from 'typebox'
import { handleJob, jobKind, type JobHandler } from '../../jobs/job-kinds.ts'

/** Runs a bulk operation's targets, a page per run (docs/contract.md, Bulk operations). */
export const RunBulkOperation = jobKind('bulk_operations.run', Type.Object({ bulk_operation_id: Type.String() }, { additionalProperties: false }), { maxAttempts: 20 })

/**
 * Runs a page of targets, then hands the worker back: with targets left the job comes again at once,
 * behind whatever else was queued meanwhile, so 100,000 targets never hold a worker (or its job
 * lease) for the whole of them. A failure is retried from the first target still pending.
 */
export function runBulkOperationJob(runStep: (id: string) => Promise<'done' | 'more'>): JobHandler {
  return handleJob(RunBulkOperation, async ({ bulk_operation_id }) => {
    const left = await runStep(bulk_operation_id)
    return left === 'more' ? { rescheduleAt: new Date() } : undefined
  })
}
