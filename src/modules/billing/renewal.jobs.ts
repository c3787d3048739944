import { runAgainIn, type JobHandler } from '../../jobs/runner.ts'
import type { RenewalEngine } from './renewal-engine.ts'

export const RENEWALS_JOB = 'billing.renewals'
export const RECONCILE_JOB = 'billing.reconcile'
const IDLE_MS = 1_000

/** The recurring billing jobs: renew what is due, and take over charges and refunds nobody holds. */
export function renewalJobs(renewals: RenewalEngine, { reconcileEveryMs }: { reconcileEveryMs: number }): Record<string, JobHandler> {
  return {
    [RENEWALS_JOB]: async () => {
      const counts = await renewals.runDue()
      return runAgainIn(counts.claimed > 0 ? 0 : IDLE_MS)
    },
    [RECONCILE_JOB]: async () => {
      const taken = await renewals.reconcile()
      return runAgainIn(taken > 0 ? 0 : reconcileEveryMs)
    },
  }
}
