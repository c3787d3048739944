import type { FastifyBaseLogger } from 'fastify'
import { randomUUID } from 'node:crypto'
import type { Db, Executor, JobRow } from '../db/database.ts'
import { retryDelayMs } from './retry-schedule.ts'

export interface JobResult {
  /** Run the same job again at this time instead of removing it (recurring work). */
  rescheduleAt?: Date
}

export type JobHandler = (job: JobRow) => Promise<JobResult | void>

export interface NewJob {
  kind: string
  payload?: Record<string, unknown>
  runAt?: Date
  /** At most one job with this key exists; enqueueing it again does nothing. */
  dedupeKey?: string
  maxAttempts?: number
}

/** Adds a job inside the caller's transaction, so the job exists exactly when the change that needs it does. */
export async function enqueueJob(db: Executor, job: NewJob): Promise<void> {
  await db
    .insertInto('jobs')
    .values({
      kind: job.kind,
      payload: JSON.stringify(job.payload ?? {}),
      run_at: job.runAt ?? new Date(),
      dedupe_key: job.dedupeKey ?? null,
      ...(job.maxAttempts ? { max_attempts: job.maxAttempts } : {}),
    })
    .onConflict((oc) => oc.column('dedupe_key').doNothing())
    .execute()
}

export interface RunnerOptions {
  db: Db
  handlers: Record<string, JobHandler>
  log: FastifyBaseLogger
  /** How long a claimed job is ours; a worker that dies lets it go when the lease ends. */
  leaseMs?: number
  pollMs?: number
  batchSize?: number
  now?: () => Date
}

export type JobRunner = ReturnType<typeof createJobRunner>

/**
 * A small database-backed job runner. Jobs are claimed with FOR UPDATE SKIP LOCKED under a lease,
 * so several processes on PostgreSQL share the queue without coordinating, and one process on the
 * embedded database runs it in-process.
 */
export function createJobRunner({ db, handlers, log, leaseMs = 60_000, pollMs = 500, batchSize = 10, now = () => new Date() }: RunnerOptions) {
  const workerId = `worker-${process.pid}-${randomUUID().slice(0, 8)}`
  let running = false
  let timer: NodeJS.Timeout | undefined
  let current: Promise<number> | undefined

  async function claim(): Promise<JobRow[]> {
    const at = now()
    const kinds = Object.keys(handlers)
    if (kinds.length === 0) return []
    const claimed = await db
      .updateTable('jobs')
      .set((eb) => ({ locked_until: new Date(at.getTime() + leaseMs), locked_by: workerId, attempts: eb('attempts', '+', 1) }))
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('jobs')
          .select('id')
          .where('failed_at', 'is', null)
          .where('kind', 'in', kinds)
          .where('run_at', '<=', at)
          .where((w) => w.or([w('locked_until', 'is', null), w('locked_until', '<', at)]))
          .orderBy('run_at')
          .orderBy('id')
          .limit(batchSize)
          .forUpdate()
          .skipLocked(),
      )
      .returningAll()
      .execute()
    // UPDATE ... RETURNING gives rows in no particular order; run them in the order they fell due.
    return claimed.sort((a, b) => a.run_at.getTime() - b.run_at.getTime() || a.id - b.id)
  }

  /**
   * Jobs of a batch run one after another, so a later job's lease is renewed just before it starts:
   * false when another worker took it over meanwhile (this worker stalled past the lease).
   */
  async function renewLease(job: JobRow): Promise<boolean> {
    const renewed = await db
      .updateTable('jobs')
      .set({ locked_until: new Date(now().getTime() + leaseMs) })
      .where('id', '=', job.id)
      .where('locked_by', '=', workerId)
      .executeTakeFirst()
    return Number(renewed.numUpdatedRows) === 1
  }

  async function finish(job: JobRow, result: JobResult | void): Promise<void> {
    if (result?.rescheduleAt) {
      await db
        .updateTable('jobs')
        .set({ run_at: result.rescheduleAt, locked_until: null, locked_by: null, attempts: 0, last_error: null })
        .where('id', '=', job.id)
        .where('locked_by', '=', workerId)
        .execute()
    } else {
      await db.deleteFrom('jobs').where('id', '=', job.id).where('locked_by', '=', workerId).execute()
    }
  }

  async function fail(job: JobRow, error: unknown): Promise<void> {
    const message = error instanceof Error ? error.message : String(error)
    const exhausted = job.attempts >= job.max_attempts
    log.warn({ job: job.id, kind: job.kind, attempt: job.attempts, exhausted, err: error }, 'job failed')
    await db
      .updateTable('jobs')
      .set({
        locked_until: null,
        locked_by: null,
        last_error: message.slice(0, 2000),
        ...(exhausted ? { failed_at: now() } : { run_at: new Date(now().getTime() + retryDelayMs(job.attempts)) }),
      })
      .where('id', '=', job.id)
      .where('locked_by', '=', workerId)
      .execute()
  }

  /** Claims one batch and runs it; returns how many jobs ran. */
  async function runOnce(): Promise<number> {
    const jobs = await claim()
    for (const [index, job] of jobs.entries()) {
      if (index > 0 && !(await renewLease(job))) continue
      const handler = handlers[job.kind]!
      try {
        await finish(job, await handler(job))
      } catch (error) {
        await fail(job, error)
      }
    }
    return jobs.length
  }

  async function loop(): Promise<void> {
    if (!running) return
    let ran = 0
    try {
      current = runOnce()
      ran = await current
    } catch (error) {
      log.error({ err: error }, 'job runner could not claim jobs')
    } finally {
      current = undefined
    }
    // A full batch suggests more is waiting: go again at once.
    if (running) timer = setTimeout(loop, ran >= batchSize ? 0 : pollMs)
  }

  return {
    workerId,
    runOnce,
    start(): void {
      if (running) return
      running = true
      timer = setTimeout(loop, 0)
    },
    /** Stops claiming and waits for the batch in hand to finish. */
    async stop(): Promise<void> {
      running = false
      if (timer) clearTimeout(timer)
      await current?.catch(() => {})
    },
  }
}

/** Makes sure a recurring job exists; its handler reschedules it after each run. */
/** Makes sure a recurring job exists; `instance` > 0 adds parallel copies that workers run side by side. */
export function ensureRecurringJob(db: Executor, kind: string, instance = 0): Promise<void> {
  const dedupeKey = instance === 0 ? `recurring:${kind}` : `recurring:${kind}#${instance}`
  return enqueueJob(db, { kind, dedupeKey, runAt: new Date(0), maxAttempts: 1_000_000 })
}

