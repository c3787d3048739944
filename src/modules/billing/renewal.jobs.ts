import { handleJob, jobKind, NoPayload, type JobHandler } from '../../jobs/job-kinds.ts'
import { runAgainIn } from '../../jobs/runner.ts'
import type { RenewalEngine } from './renewal-engine.ts'

/** Takes over charges and refunds nobody holds (their worker died, or it is time to look again). */
export const Reconcile = jobKind('billing.reconcile', NoPayload, { maxAttempts: 1_000_000 })

/**
 * The recurring billing job: take over charges and refunds nobody holds. Renewals themselves are the
 * worker's renewal loop (renewal-loop.ts), not a job: a job would hold the queue while it charged.
 */
export function renewalJobs(renewals: RenewalEngine, { reconcileEveryMs }: { reconcileEveryMs: number }): JobHandler[] {
  return [
    handleJob(Reconcile, async () => {
      const taken = await renewals.reconcile()
      return runAgainIn(taken > 0 ? 0 : reconcileEveryMs)
    }, { recurring: { instances: 1 } }),
  ]
}
