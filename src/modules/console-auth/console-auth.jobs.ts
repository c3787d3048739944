import { jobKind, NoPayload } from '../../jobs/job-kinds.ts'

/** Hourly: console sessions a day past their lifetime are removed. */
export const PurgeConsoleSessions = jobKind('console_auth.purge_sessions', NoPayload, { maxAttempts: 1_000_000 })
