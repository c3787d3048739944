import { Type } from 'typebox'
import { handleJob, jobKind, type JobHandler } from '../../jobs/job-kinds.ts'

/** Schedules a price change on its plan's subscriptions, a page per transaction (docs/contract.md, Price changes with notice). */
export const SchedulePriceChange = jobKind('price_changes.schedule', Type.Object({ price_change_id: Type.String() }, { additionalProperties: false }), { maxAttempts: 20 })

/**
 * Runs some pages of the change, then hands the worker back: with pages left the job comes again at
 * once, behind whatever else was queued meanwhile, so a plan of 100,000 subscriptions never holds a
 * worker (or its job lease) for the whole of it. A failure is retried from the last page done.
 */
export function schedulePriceChangeJob(runPages: (id: string) => Promise<'done' | 'more'>): JobHandler {
  return handleJob(SchedulePriceChange, async ({ price_change_id }) => {
    const left = await runPages(price_change_id)
    return left === 'more' ? { rescheduleAt: new Date() } : undefined
  })
}
