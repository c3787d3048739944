import { handleJob, jobKind, NoPayload, type JobHandler } from '../../jobs/job-kinds.ts'
import { runAgainIn } from '../../jobs/runner.ts'
import type { RenewalEngine } from './renewal-engine.ts'

/** Renews what is due; several copies run side by side (they claim disjoint rows with SKIP LOCKED). */
export const RunRenewals = jobKind('billing.renewals', NoPayload, { maxAttempts: 1_000_000 })
/** Takes over charges and refunds nobody holds (their worker died, or it is time to look again). */
export const Reconcile = jobKind('billing.reconcile', NoPayload, { maxAttempts: 1_000_000 })
const IDLE_MS = 1_000
/** Copies of the renewals job, so that several worker processes charge at once. */
const RENEWAL_INSTANCES = 4

/** The recurring billing jobs: renew what is due, and take over charges and refunds nobody holds. */
export function renewalJobs(renewals: RenewalEngine, { reconcileEveryMs }: { reconcileEveryMs: number }): JobHandler[] {
  return [
    handleJob(RunRenewals, async () => {
      const counts = await renewals.runDue()
      return runAgainIn(counts.claimed > 0 ? 0 : IDLE_MS)
    }, { recurring: { instances: RENEWAL_INSTANCES } }),
    handleJob(Reconcile, async () => {
      const taken = await renewals.reconcile()
      return runAgainIn(taken > 0 ? 0 : reconcileEveryMs)
    }, { recurring: { instances: 1 } }),
  ]
}
