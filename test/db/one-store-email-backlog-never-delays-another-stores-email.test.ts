import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, test } from 'node:test'
import { pino } from 'pino'
import type { DatabaseHandle } from '../../src/db/connect.ts'
import type { Db } from '../../src/db/database.ts'
import { ensureRecurring, handleJob, jobKind, NoPayload, type JobHandler } from '../../src/jobs/job-kinds.ts'
import { shareOut } from '../../src/jobs/fair-claim.ts'
import { createJobRunner } from '../../src/jobs/runner.ts'
import type { EventRecorded } from '../../src/modules/events/index.ts'
import { SendNotification } from '../../src/modules/notifications/index.ts'
import { queueNotificationsFor } from '../../src/modules/notifications/triggers.ts'
import { createTestDatabase } from '../helpers/database.ts'

/**
 * Issue 28, fair claiming for emails: a store whose renewals queue thousands of emails must not hold
 * back another store's email behind them. Emails are `notifications.send` jobs queued by the event
 * reaction (queueNotificationsFor), exactly as billing queues them; the runner claims batches.
 */
const log = pino({ level: 'silent' })
const BATCH = 10
const Upkeep = jobKind('test.upkeep', NoPayload, { maxAttempts: 1_000_000 })

/** The cancellation emails `count` subscriptions of `storeId` call for, queued the way the event log's reaction queues them. */
async function queueEmails(db: Db, storeId: string, count: number, from = 0): Promise<void> {
  const recorded: EventRecorded[] = Array.from({ length: count }, (_, i) => ({
    storeId,
    occurredAt: new Date('2026-03-01T00:00:00.000Z'),
    event: {
      id: `evt_${storeId}_${from + i}`,
      event_type: 'subscription.cancelled',
      timestamp: '2026-03-01T00:00:00.000Z',
      api_version: 'v1',
      data: { id: `sub_${storeId}_${from + i}`, object: 'subscription', cancellation_reason: 'customer_request' },
      sequence: 1,
    },
  }))
  // In pages, as renewals commit them (and to keep each statement's parameters within the driver's limit).
  for (let at = 0; at < recorded.length; at += 500) await queueNotificationsFor(db, recorded.slice(at, at + 500))
}

describe('one store’s email backlog never delays another store’s emails (fair job claiming)', () => {
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

  /** A runner that records, per batch, which store each email it sends is for. Its clock is a minute ahead: every queued job is due. */
  function recordingRunner(extra: JobHandler[] = []) {
    const sent: string[] = []
    const handlers = [handleJob(SendNotification, async (payload) => void sent.push(payload.store_id)), ...extra]
    const runner = createJobRunner({ db, handlers, log, batchSize: BATCH, now: () => new Date(Date.now() + 60_000) })
    async function batch(): Promise<string[]> {
      const before = sent.length
      await runner.runOnce()
      return sent.slice(before)
    }
    return { batch }
  }

  test('store A has 2,000 due emails queued first, store B one queued after them: B’s email goes out in the first batch', async () => {
    await queueEmails(db, 'store_a', 2_000)
    await queueEmails(db, 'store_b', 1)
    const { batch } = recordingRunner()
    const first = await batch()
    assert.ok(first.includes('store_b'), `the first batch sent only ${JSON.stringify(first)}`)
    assert.equal(first.length, BATCH, 'the batch is still full: B takes one place, A the rest')
  })

  test('a store alone with a backlog still gets full batches (fairness costs the big store no throughput)', async () => {
    await queueEmails(db, 'store_a', 3 * BATCH)
    const { batch } = recordingRunner()
    for (let i = 0; i < 3; i++) assert.deepEqual(await batch(), Array(BATCH).fill('store_a'))
    assert.deepEqual(await batch(), [])
  })

  test('many stores with a few emails each behind one big backlog: every store is served within a few batches', async () => {
    await queueEmails(db, 'store_a', 1_000)
    const small = Array.from({ length: 25 }, (_, i) => `store_s${String(i).padStart(2, '0')}`)
    for (const store of small) await queueEmails(db, store, 2)
    const { batch } = recordingRunner()
    const served = new Set<string>()
    let batches = 0
    while (small.some((store) => !served.has(store))) {
      for (const store of await batch()) served.add(store)
      batches++
      assert.ok(batches <= 6, `after ${batches} batches these small stores are still waiting: ${small.filter((s) => !served.has(s)).join(', ')}`)
    }
  })

  test('upkeep jobs of no store still run beside a store’s backlog', async () => {
    await queueEmails(db, 'store_a', 500)
    await ensureRecurring(db, Upkeep)
    let upkeep = 0
    const { batch } = recordingRunner([handleJob(Upkeep, async () => void upkeep++)])
    const first = await batch()
    assert.equal(upkeep, 1, 'the recurring job ran in the first batch')
    assert.equal(first.length, BATCH - 1, 'the store’s emails filled the rest of it')
  })

  test('emails are queued with their store', async () => {
    await queueEmails(db, 'store_a', 3)
    const rows = await db.selectFrom('jobs').select(['store_id']).where('kind', '=', SendNotification.kind).execute()
    assert.deepEqual(rows.map((row) => row.store_id), ['store_a', 'store_a', 'store_a'])
  })
})

describe('sharing a batch out between lanes (shareOut)', () => {
  test('one place each in turn, then the places a lane cannot use go to the others', () => {
    assert.deepEqual(shareOut([10, 1], 10), [9, 1])
    assert.deepEqual(shareOut([10], 10), [10])
    assert.deepEqual(shareOut([1, 10, 10], 10), [1, 5, 4])
    assert.deepEqual(shareOut([2, 2], 10), [2, 2], 'never more than a lane has due')
    assert.deepEqual(shareOut(Array(12).fill(10), 10), [...Array(10).fill(1), 0, 0], 'more lanes than places: the first ten, in walk order')
    assert.deepEqual(shareOut([], 10), [])
  })

  test('every way of 0..4 due in up to 4 lanes for 0..6 places: all places used while any lane has more, no lane two ahead of one it could still give to', () => {
    const cases: number[][] = [[]]
    for (let lanes = 1; lanes <= 4; lanes++) for (let n = 0; n < 5 ** lanes; n++) cases.push(Array.from({ length: lanes }, (_, i) => Math.floor(n / 5 ** i) % 5))
    for (const due of cases) {
      for (let slots = 0; slots <= 6; slots++) {
        const shares = shareOut(due, slots)
        const total = due.reduce((a, b) => a + b, 0)
        assert.equal(shares.reduce((a, b) => a + b, 0), Math.min(slots, total), `${due} / ${slots}`)
        for (const [i, share] of shares.entries()) {
          assert.ok(share <= due[i]!, `${due} / ${slots}`)
          for (const [j, other] of shares.entries()) if (other < due[j]!) assert.ok(share <= other + 1, `${due} / ${slots}: lane ${i} has ${share}, lane ${j} only ${other}`)
        }
      }
    }
  })
})
