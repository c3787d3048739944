import { Type, type Static, type TSchema } from 'typebox'
import { Value } from 'typebox/value'
import type { Executor, JobRow } from '../db/database.ts'

/**
 * The job catalogue's entries: each kind of background work is declared once, by the module that
 * owns it, with the shape of its payload and how often it is tried. Enqueueing checks the payload's
 * type at compile time; the runner checks it again when it runs (a job queued by an older version
 * whose payload no longer fits is set aside, not run on a guess).
 */
export interface JobKind<P extends TSchema = TSchema> {
  readonly kind: string
  readonly payload: P
  /** Attempts before the job is set aside for a person; retries back off (src/jobs/retry-schedule.ts). */
  readonly maxAttempts: number
}

export function jobKind<P extends TSchema>(kind: string, payload: P, { maxAttempts = 10 }: { maxAttempts?: number } = {}): JobKind<P> {
  return { kind, payload, maxAttempts }
}

/** A recurring job's payload: nothing (each run reschedules itself, see JobResult). */
export const NoPayload = Type.Object({}, { additionalProperties: false })

/** What a runner reports back from a handler: run the same job again at this time instead of removing it. */
export interface JobResult {
  rescheduleAt?: Date
}

/** How a module's worker runs each job of one kind. */
export interface JobHandler<P extends TSchema = TSchema> {
  readonly job: JobKind<P>
  readonly run: (payload: Static<P>, job: JobRow) => Promise<JobResult | void>
  /** Kept queued by the worker, in this many copies that workers run side by side (they reschedule themselves). */
  readonly recurring?: { readonly instances: number }
}

export function handleJob<P extends TSchema>(
  job: JobKind<P>,
  run: (payload: Static<P>, row: JobRow) => Promise<JobResult | void>,
  options: { recurring?: { instances: number } } = {},
): JobHandler<P> {
  return { job, run, ...options }
}

/** Why a payload does not fit its kind, or undefined when it does. */
export function payloadProblem(job: JobKind, payload: unknown): string | undefined {
  if (Value.Check(job.payload, payload)) return undefined
  const first = Value.Errors(job.payload, payload)[0]
  return `the payload does not fit ${job.kind}${first ? `: ${first.instancePath || '/'} ${first.message}` : ''}`
}

export interface EnqueueOptions {
  runAt?: Date
  /** At most one job with this key exists; enqueueing it again does nothing. */
  dedupeKey?: string
  /**
   * The store the job works for: its lane in the runner's fair claim (src/jobs/fair-claim.ts), so one store's
   * backlog never delays another's jobs. Leave it out only for work of no store (upkeep across all stores).
   */
  storeId?: string
}

/** Adds a job inside the caller's transaction, so the job exists exactly when the change that needs it does. */
export function enqueue<P extends TSchema>(db: Executor, job: JobKind<P>, payload: Static<P>, options: EnqueueOptions = {}): Promise<void> {
  return enqueueMany(db, job, [{ payload, ...options }])
}

/** Several jobs of one kind in one statement, inside the caller's transaction; keys already queued are skipped. */
export async function enqueueMany<P extends TSchema>(db: Executor, job: JobKind<P>, entries: ReadonlyArray<EnqueueOptions & { payload: Static<P> }>): Promise<void> {
  if (entries.length === 0) return
  await db
    .insertInto('jobs')
    .values(
      entries.map((entry) => ({
        kind: job.kind,
        payload: JSON.stringify(entry.payload),
        run_at: entry.runAt ?? new Date(),
        dedupe_key: entry.dedupeKey ?? null,
        store_id: entry.storeId ?? null,
        max_attempts: job.maxAttempts,
      })),
    )
    .onConflict((oc) => oc.column('dedupe_key').doNothing())
    .execute()
}

/** Makes sure a recurring job exists; `instance` > 0 adds parallel copies that workers run side by side. */
export function ensureRecurring(db: Executor, job: JobKind, instance = 0): Promise<void> {
  const dedupeKey = instance === 0 ? `recurring:${job.kind}` : `recurring:${job.kind}#${instance}`
  return db
    .insertInto('jobs')
    .values({ kind: job.kind, payload: JSON.stringify({}), run_at: new Date(0), dedupe_key: dedupeKey, max_attempts: 1_000_000 })
    .onConflict((oc) => oc.column('dedupe_key').doNothing())
    .execute()
    .then(() => undefined)
}
