import type { FastifyBaseLogger } from 'fastify'
import { randomUUID } from 'node:crypto'
import type { Db, Executor, JobRow } from '../db/database.ts'
import { heldBy, keepLeases, LEASES, renewLeases, type Claim } from '../db/leases.ts'
import { printableText } from '../lib/printable-text.ts'
import { createFairClaim } from './fair-claim.ts'
import { retryDelayMs } from './retry-schedule.ts'
import { payloadProblem, type JobHandler, type JobResult } from './job-kinds.ts'

/**
 * Thrown by a handler when trying again cannot help (the job's data is refused for good): the job is
 * set aside at once (failed_at, last_error = the message) instead of being retried.
 */
export class JobGaveUp extends Error {
  override name = 'JobGaveUp'
}

/** What a recurring job answers: run me again in `ms`. */
export function runAgainIn(ms: number): JobResult {
  return { rescheduleAt: new Date(Date.now() + ms) }
}

export interface RunnerOptions {
  db: Db
  /** Every kind this runner works, with its handler (src/jobs/job-kinds.ts); other kinds wait for a runner that has them. */
  handlers: readonly JobHandler[]
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
 * embedded database runs it in-process. Each batch is shared out between stores (src/jobs/fair-claim.ts):
 * one store's backlog never delays another store's jobs.
 */
export function createJobRunner({ db, handlers: handlerList, log, leaseMs = 60_000, pollMs = 500, batchSize = 10, now = () => new Date() }: RunnerOptions) {
  const handlers = new Map(handlerList.map((handler) => [handler.job.kind, handler]))
  const workerId = `worker-${process.pid}-${randomUUID().slice(0, 8)}`
  let running = false
  let timer: NodeJS.Timeout | undefined
  let current: Promise<number> | undefined

  // The worker id is the fencing token: one worker runs one batch at a time, and operators can read it.
  const fairClaim = createFairClaim({ db, batchSize, leaseMs, token: workerId })

  /** A batch of due jobs of the kinds this runner has, shared out fairly between stores (src/jobs/fair-claim.ts), in the order to run them. */
  function claim(): Promise<Claim<JobRow>> {
    return fairClaim(now(), [...handlers.keys()])
  }

  async function finish(job: JobRow, token: string, result: JobResult | void): Promise<void> {
    if (result?.rescheduleAt) {
      await db
        .updateTable('jobs')
        .set({ run_at: result.rescheduleAt, locked_until: null, locked_by: null, attempts: 0, last_error: null })
        .where('id', '=', job.id)
        .where(heldBy(LEASES.jobs, token))
        .execute()
    } else {
      await db.deleteFrom('jobs').where('id', '=', job.id).where(heldBy(LEASES.jobs, token)).execute()
    }
  }

  async function fail(job: JobRow, token: string, error: unknown): Promise<void> {
    const message = error instanceof Error ? error.message : String(error)
    const exhausted = job.attempts >= job.max_attempts || error instanceof JobGaveUp
    // A job that keeps failing on its data is set aside (failed_at) after its attempts, said once;
    // the queue goes on with everything else meanwhile.
    if (exhausted) log.error({ job: job.id, kind: job.kind, attempts: job.attempts, err: error }, 'job set aside after its last attempt')
    else log.warn({ job: job.id, kind: job.kind, attempt: job.attempts, err: error }, 'job failed; it will be retried')
    await db
      .updateTable('jobs')
      .set({
        locked_until: null,
        locked_by: null,
        last_error: printableText(Buffer.from(message.slice(0, 2000))),
        ...(exhausted ? { failed_at: now() } : { run_at: new Date(now().getTime() + retryDelayMs(job.attempts)) }),
      })
      .where('id', '=', job.id)
      .where(heldBy(LEASES.jobs, token))
      .execute()
  }

  /** Claims one batch and runs it, one job after another, the batch's leases renewed meanwhile; returns how many jobs ran. */
  async function runOnce(): Promise<number> {
    const { token, rows: jobs } = await claim()
    if (jobs.length === 0) return 0
    const keeper = keepLeases(db, LEASES.jobs, token, leaseMs, { now, log })
    keeper.add(jobs.map((job) => job.id))
    try {
      for (const [index, job] of jobs.entries()) {
        // Another worker took it over while this one stalled past the lease: it is theirs now.
        if (keeper.lost(job.id)) continue
        if (index > 0 && !(await renewLeases(db, LEASES.jobs, [job.id], token, leaseMs, now())).has(job.id)) continue
        const handler = handlers.get(job.kind)!
        try {
          const problem = payloadProblem(handler.job, job.payload)
          if (problem) throw new JobGaveUp(problem)
          const result = await handler.run(job.payload as never, job)
          keeper.remove([job.id])
          await finish(job, token, result)
        } catch (error) {
          keeper.remove([job.id])
          // Recording the failure must not stop the rest of the batch either: the lease runs out instead.
          await fail(job, token, error).catch((recordError: unknown) => log.error({ job: job.id, kind: job.kind, err: recordError }, 'could not record a job failure'))
        }
      }
    } finally {
      await keeper.stop()
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

/** Jobs that gave up and wait for a person. */
export async function countFailedJobs(db: Executor): Promise<number> {
  const row = await db.selectFrom('jobs').select((eb) => eb.fn.countAll<number>().as('n')).where('failed_at', 'is not', null).executeTakeFirstOrThrow()
  return Number(row.n)
}
