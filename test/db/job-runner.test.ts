import assert from 'node:assert/strict'
// wall clock: a yield inside a handler (below).
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, beforeEach, describe, test } from 'node:test'
import { pino } from 'pino'
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.ts'
import type { Db, JobRow } from '../../src/db/database.ts'
import { Type } from 'typebox'
import { enqueue, ensureRecurring, handleJob, jobKind, NoPayload, type JobHandler } from '../../src/jobs/job-kinds.ts'
import { createJobRunner } from '../../src/jobs/runner.ts'
import { closePools, createTestDatabase, onPostgres, scratchUrl, taggedUrl } from '../helpers/database.ts'

const log = pino({ level: 'silent' })

/** The runner works typed kinds (src/jobs/job-kinds.ts); these tests need only names, with any object payload. */
const AnyPayload = Type.Object({}, { additionalProperties: true })
type Run = (job: JobRow) => Promise<{ rescheduleAt?: Date } | void>

function enqueueJob(db: Db, job: { kind: string; payload?: Record<string, unknown>; runAt?: Date; dedupeKey?: string; maxAttempts?: number }): Promise<void> {
  return enqueue(db, jobKind(job.kind, AnyPayload, job.maxAttempts ? { maxAttempts: job.maxAttempts } : {}), job.payload ?? {}, {
    ...(job.runAt ? { runAt: job.runAt } : {}),
    ...(job.dedupeKey ? { dedupeKey: job.dedupeKey } : {}),
  })
}

/** Handlers by kind, as the runner takes them. */
function handlersOf(byKind: Record<string, Run>): JobHandler[] {
  return Object.entries(byKind).map(([kind, run]) => handleJob(jobKind(kind, AnyPayload), (_payload, job) => run(job)))
}
const T0 = new Date('2026-03-01T12:00:00.000Z')
const at = (ms: number) => new Date(T0.getTime() + ms)


/** A handler that counts its runs per job id, doing `then` for each run. */
function counting(then: (job: JobRow) => Promise<{ rescheduleAt?: Date } | void> = async () => {}) {
  const runs = new Map<number, number>()
  const handler: Run = async (job) => {
    runs.set(job.id, (runs.get(job.id) ?? 0) + 1)
    return then(job)
  }
  return { handler, runs, total: () => [...runs.values()].reduce((sum, n) => sum + n, 0) }
}

const allJobs = (db: Db) => db.selectFrom('jobs').selectAll().orderBy('id').execute()

async function onlyJob(db: Db): Promise<JobRow> {
  const jobs = await allJobs(db)
  assert.equal(jobs.length, 1, `expected exactly one job, found ${jobs.length}`)
  return jobs[0]!
}

describe('job runner (jobs table, claim under a lease, retry with backoff)', () => {
  let database: DatabaseHandle
  let db: Db

  before(async () => {
    database = await createTestDatabase()
    db = database.db
  })
  after(() => database.close())
  beforeEach(async () => {
    await db.deleteFrom('jobs').execute()
  })

  /** A runner whose clock is `now` (mutable through the returned setter). */
  function runnerAt(start: Date, handlers: Record<string, Run>, options: { leaseMs?: number } = {}) {
    let current = start
    const runner = createJobRunner({ db, handlers: handlersOf(handlers), log, now: () => current, ...options })
    return Object.assign(runner, { setNow: (to: Date) => void (current = to) })
  }

  test('a due job runs once, with its payload, and is deleted', async () => {
    const work = counting()
    await enqueueJob(db, { kind: 'test.due', payload: { order: 42 }, runAt: at(-1_000) })
    const seen: unknown[] = []
    const runner = runnerAt(T0, {
      'test.due': async (job) => {
        seen.push(job.payload)
        return work.handler(job)
      },
    })

    assert.equal(await runner.runOnce(), 1, 'the due job was claimed')
    assert.deepEqual(seen, [{ order: 42 }])
    assert.deepEqual(await allJobs(db), [], 'a job that succeeded is removed')
    assert.equal(await runner.runOnce(), 0, 'nothing is left to run')
    assert.equal(work.total(), 1, 'the job ran exactly once')
  })

  test('a job whose payload does not fit its kind is set aside with the reason, never run on a guess', async () => {
    const Typed = jobKind('test.typed', Type.Object({ order: Type.Integer() }, { additionalProperties: false }))
    let ran = 0
    const runner = createJobRunner({ db, handlers: [handleJob(Typed, async () => void (ran += 1))], log, now: () => T0 })
    // Queued by an older version with another shape (or by hand): the kind's schema refuses it.
    await enqueueJob(db, { kind: 'test.typed', payload: { order: 'forty-two' }, runAt: at(-1_000) })
    await enqueue(db, Typed, { order: 7 }, { runAt: at(-500) })

    assert.equal(await runner.runOnce(), 2)
    assert.equal(ran, 1, 'only the job whose payload fits ran')
    const left = await onlyJob(db)
    assert.ok(left.failed_at, 'the misfit is set aside at once, not retried')
    assert.match(left.last_error ?? '', /payload does not fit test\.typed: \/order/)
  })

  test('a job whose run_at is in the future does not run until the clock reaches it', async () => {
    const work = counting()
    await enqueueJob(db, { kind: 'test.later', runAt: at(60_000) })
    const runner = runnerAt(T0, { 'test.later': work.handler })

    assert.equal(await runner.runOnce(), 0)
    assert.equal(work.total(), 0, 'a future job must not run early')
    const untouched = await onlyJob(db)
    assert.equal(untouched.attempts, 0, 'looking at a future job does not count an attempt')
    assert.equal(untouched.locked_by, null, 'a future job is not claimed')

    runner.setNow(at(60_000))
    assert.equal(await runner.runOnce(), 1, 'it runs once its run_at has come')
    assert.equal(work.total(), 1)
  })

  test('a job that fails is retried later with growing backoff, keeping attempts and the last error, and after max_attempts is marked failed and never claimed again', async () => {
    const work = counting(async (job) => {
      throw new Error(`boom #${job.attempts}`)
    })
    await enqueueJob(db, { kind: 'test.flaky', runAt: T0, maxAttempts: 3 })
    const runner = runnerAt(T0, { 'test.flaky': work.handler })

    // retryDelayMs: 2 s then 4 s, each +-20%.
    const expectedDelays = [2_000, 4_000]
    let now = T0
    for (const [index, base] of expectedDelays.entries()) {
      const attempt = index + 1
      runner.setNow(now)
      assert.equal(await runner.runOnce(), 1, `attempt ${attempt} ran`)
      const job = await onlyJob(db)
      assert.equal(job.attempts, attempt, 'attempts counts every run')
      assert.equal(job.last_error, `boom #${attempt}`, 'the last error is kept')
      assert.equal(job.failed_at, null, `not failed after ${attempt} of 3 attempts`)
      assert.equal(job.locked_by, null, 'a failed run releases the lease')
      const delay = job.run_at.getTime() - now.getTime()
      assert.ok(delay >= base * 0.8 && delay <= base * 1.2, `retry ${attempt} comes ${delay} ms later, expected ${base} ms +-20%`)

      runner.setNow(new Date(job.run_at.getTime() - 1))
      assert.equal(await runner.runOnce(), 0, 'a retry does not come before its backoff has passed')
      now = job.run_at
    }

    runner.setNow(now)
    assert.equal(await runner.runOnce(), 1, 'the last attempt ran')
    const failed = await onlyJob(db)
    assert.equal(failed.attempts, 3)
    assert.deepEqual(failed.failed_at, now, 'failed_at is when the last attempt failed')
    assert.equal(failed.last_error, 'boom #3')

    runner.setNow(at(365 * 86_400_000))
    assert.equal(await runner.runOnce(), 0, 'a failed job is never claimed again')
    assert.equal(work.total(), 3, 'the job ran max_attempts times in all')
  })

  test('a handler answering rescheduleAt keeps the job, due at that time, with attempts reset', async () => {
    const next = at(3_600_000)
    const work = counting(async () => ({ rescheduleAt: next }))
    await enqueueJob(db, { kind: 'test.recurring', runAt: T0 })
    const runner = runnerAt(T0, { 'test.recurring': work.handler })

    assert.equal(await runner.runOnce(), 1)
    const job = await onlyJob(db)
    assert.deepEqual(job.run_at, next, 'run_at is the time the handler asked for')
    assert.equal(job.attempts, 0)
    assert.equal(job.locked_by, null)
    assert.equal(job.locked_until, null, 'the lease is released')

    assert.equal(await runner.runOnce(), 0, 'it does not run again before then')
    runner.setNow(next)
    assert.equal(await runner.runOnce(), 1, 'it runs again at the new time')
    assert.equal(work.total(), 2)
  })

  test('enqueueing twice with the same dedupe_key creates one job', async () => {
    await enqueueJob(db, { kind: 'test.dedupe', dedupeKey: 'order:1', payload: { first: true } })
    await enqueueJob(db, { kind: 'test.dedupe', dedupeKey: 'order:1', payload: { first: false } })
    await enqueueJob(db, { kind: 'test.dedupe', dedupeKey: 'order:2' })
    const jobs = await allJobs(db)
    assert.equal(jobs.length, 2, 'one job per dedupe key')
    assert.deepEqual(jobs.find((job) => job.dedupe_key === 'order:1')!.payload, { first: true }, 'the first enqueue wins')

    await ensureRecurring(db, jobKind('test.tick', NoPayload))
    await ensureRecurring(db, jobKind('test.tick', NoPayload))
    const ticks = (await allJobs(db)).filter((job) => job.kind === 'test.tick')
    assert.equal(ticks.length, 1, 'a recurring job exists once however often it is ensured')
    assert.equal(ticks[0]!.run_at.getTime(), 0, 'a new recurring job is due at once')
  })

  test('a job held by a worker that died is claimed by another worker once the lease has ended, not before', async () => {
    const leaseMs = 30_000
    let started!: () => void
    const handlerStarted = new Promise<void>((resolve) => (started = resolve))
    // The first worker takes the job and never comes back: that is what a dead worker looks like to the queue.
    const dying = runnerAt(T0, { 'test.lease': async () => (started(), new Promise<never>(() => {})) }, { leaseMs })
    await enqueueJob(db, { kind: 'test.lease', runAt: T0 })
    void dying.runOnce()
    await handlerStarted

    const held = await onlyJob(db)
    assert.equal(held.locked_by, dying.workerId)
    assert.deepEqual(held.locked_until, at(leaseMs), 'the lease runs leaseMs from the claim')

    const work = counting()
    const rescuer = runnerAt(at(leaseMs - 1), { 'test.lease': work.handler }, { leaseMs })
    assert.equal(await rescuer.runOnce(), 0, 'a job under a live lease is not claimed by another worker')
    assert.equal(work.total(), 0)

    rescuer.setNow(at(leaseMs + 1))
    assert.equal(await rescuer.runOnce(), 1, 'after the lease the job is claimed again')
    assert.equal(work.total(), 1)
    assert.deepEqual(await allJobs(db), [], 'the second worker finished it')
  })

  test('a worker whose lease ran out cannot finish or fail a job another worker has claimed since', async () => {
    const leaseMs = 30_000
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    let started!: () => void
    const handlerStarted = new Promise<void>((resolve) => (started = resolve))
    const slow = runnerAt(T0, { 'test.slow': async () => (started(), await gate) }, { leaseMs })
    await enqueueJob(db, { kind: 'test.slow', runAt: T0 })
    const slowRun = slow.runOnce()
    await handlerStarted

    const later = at(10 * 60_000)
    const other = runnerAt(at(leaseMs + 1), { 'test.slow': async () => ({ rescheduleAt: later }) }, { leaseMs })
    assert.equal(await other.runOnce(), 1)

    release()
    assert.equal(await slowRun, 1)
    const job = await onlyJob(db)
    assert.deepEqual(job.run_at, later, "the late worker's finish must not delete the job the other worker rescheduled")
  })

  // Fails today: runOnce runs the whole batch under the lease taken at claim time, without checking it is still its own.
  test('a worker does not start a job of its batch whose lease ran out while earlier jobs ran (another worker has it by then)', async () => {
    const leaseMs = 30_000
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    let firstId: number | undefined
    let started!: () => void
    const firstStarted = new Promise<void>((resolve) => (started = resolve))
    const work = counting()
    await enqueueJob(db, { kind: 'test.batch', runAt: T0 })
    await enqueueJob(db, { kind: 'test.batch', runAt: T0 })

    const slow = runnerAt(T0, {
      'test.batch': async (job) => {
        await work.handler(job)
        if (firstId === undefined) {
          firstId = job.id
          started()
          await gate
        }
      },
    }, { leaseMs })
    const slowRun = slow.runOnce()
    await firstStarted

    // The lease on the whole batch ends while its first job still runs; another worker takes what is left.
    const other = runnerAt(at(leaseMs + 1), { 'test.batch': work.handler }, { leaseMs })
    assert.equal(await other.runOnce(), 2)
    slow.setNow(at(leaseMs + 2))
    release()
    await slowRun

    const [rest] = [...work.runs].filter(([id]) => id !== firstId)
    assert.equal(rest?.[1], 1, 'the rest of the batch ran twice: the first worker started it after losing its lease')
  })

  // Fails today: UPDATE ... RETURNING gives rows in heap or hash order, not the subquery's ORDER BY.
  test('a job whose error text the database refuses (a NUL byte) does not stop the rest of its batch', async () => {
    const runner = runnerAt(T0, {
      // e.g. a reply quoted in an error message, holding a NUL byte that PostgreSQL text cannot store
      'test.poison': async () => {
        throw new Error('the mail server answered: 550 \u0000 rejected')
      },
      'test.ok': async () => {},
    }, { leaseMs: 1_000 })
    await enqueueJob(db, { kind: 'test.poison', runAt: at(-10_000) })
    for (let i = 0; i < 3; i++) await enqueueJob(db, { kind: 'test.ok', runAt: at(-5_000 + i) })
    assert.equal(await runner.runOnce(), 4)
    const left = await allJobs(db)
    assert.deepEqual(left.map((job) => job.kind), ['test.poison'], 'every healthy job of the batch ran and was deleted')
    assert.equal(left[0]!.last_error, 'the mail server answered: 550 \\u0000 rejected', 'the error is kept, its NUL escaped')
  })

  test('the jobs of a batch run in run_at order', async () => {
    const order: number[] = []
    // Enqueued latest first, so insertion order and due order disagree.
    for (let i = 8; i >= 1; i--) await enqueueJob(db, { kind: 'test.order', payload: { i }, runAt: at(-10_000 + i * 1_000) })
    const runner = runnerAt(T0, { 'test.order': async (job) => void order.push(job.payload.i as number) }, {})
    assert.equal(await runner.runOnce(), 8)
    assert.deepEqual(order, [1, 2, 3, 4, 5, 6, 7, 8], 'the earliest due job runs first')
  })

  test('two runners on two connection pools over 200 jobs run every job exactly once (FOR UPDATE SKIP LOCKED)', {
    skip: onPostgres ? false : 'needs PostgreSQL (DATABASE_URL): the embedded database has a single connection, so claims cannot race',
  }, async () => {
    const JOBS = 200
    const url = taggedUrl(scratchUrl(database)!)
    const pools = [await connectDatabase({ databaseUrl: url, poolSize: 5 }), await connectDatabase({ databaseUrl: url, poolSize: 5 })]
    try {
      for (let i = 0; i < JOBS; i++) await enqueueJob(db, { kind: 'test.race', payload: { i }, runAt: T0 })
      const ids = (await allJobs(db)).map((job) => job.id)
      assert.equal(ids.length, JOBS)

      const runs = new Map<number, number>()
      const perRunner = [0, 0]
      const runners = pools.map((pool, index) =>
        createJobRunner({
          db: pool.db,
          log,
          now: () => at(1_000),
          batchSize: 10,
          handlers: handlersOf({
            'test.race': async (job) => {
              runs.set(job.id, (runs.get(job.id) ?? 0) + 1)
              perRunner[index]! += 1
              // Yield so the other runner's claims interleave with this batch.
              // wall clock: a yield of a millisecond so the other pool's claims, on their own connections, interleave with this batch.
              await sleep(1)
            },
          }),
        }),
      )
      // Several loops per runner, so claims race inside each pool as well as between the two.
      const drain = async (runner: (typeof runners)[number]) => {
        while ((await runner.runOnce()) > 0);
      }
      await Promise.all(runners.flatMap((runner) => [drain(runner), drain(runner), drain(runner), drain(runner)]))

      const twice = [...runs].filter(([, n]) => n !== 1)
      assert.deepEqual(twice, [], 'no job ran more than once')
      assert.deepEqual([...runs.keys()].sort((a, b) => a - b), ids, 'every job ran')
      assert.deepEqual(await allJobs(db), [], 'every job was deleted')
      assert.ok(perRunner[0]! > 0 && perRunner[1]! > 0, `both runners took work (${perRunner.join(' / ')})`)
    } finally {
      await closePools(db, pools)
    }
  })
})
