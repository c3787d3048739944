import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { pino } from 'pino'
import { connectDatabase } from '../../src/db/connect.ts'
import type { Db } from '../../src/db/database.ts'
import { jobHandlersOf } from '../../src/worker.ts'
import { ensureRecurring } from '../../src/jobs/job-kinds.ts'
import { createJobRunner } from '../../src/jobs/runner.ts'
import { fixedClock } from '../../src/lib/clock.ts'
import { DueWork } from '../../src/modules/subscriptions/index.ts'
import { createPlan, createProduct } from '../helpers/catalog.ts'
import { closePools, onPostgres, scratchUrl, taggedUrl } from '../helpers/database.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../helpers/test-app.ts'
import { storedEvents } from '../helpers/subscriptions.ts'
import { testModules } from '../helpers/modules.ts'

// The service's wall clock is years away from the stores' test clocks, so an event stamped with the
// wall time instead of the due time cannot pass by accident.
const WALL = '2031-06-15T00:00:00.000Z'
const T0 = '2026-01-10T09:00:00.000Z'
const DAY = 86_400_000
const plus = (iso: string, ms: number) => new Date(new Date(iso).getTime() + ms).toISOString()
const NONE = { activations: 0, resumptions: 0, cancellations: 0, reminders: 0, prepaidCycles: 0 }


interface Shop extends StoreWithKey {
  monthly: any
  trial: any
}

let orderCounter = 0

async function eventCount(db: Db, storeId: string): Promise<number> {
  const row = await db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('store_id', '=', storeId).executeTakeFirstOrThrow()
  return Number(row.n)
}

describe('due lifecycle work on the store clock (processDueWork)', () => {
  let t: TestApp
  const clock = fixedClock(WALL)

  before(async () => {
    t = await buildTestApp({ clock })
  })
  after(() => t.close())

  /** A test-mode store whose clock stands at T0, with a monthly plan and a 14-day trial plan. */
  async function newShop(): Promise<Shop> {
    const shop = await createStoreWithKey(t.db)
    await setStoreClock(shop, T0)
    const product = await createProduct(t.app, shop.auth)
    const monthly = await createPlan(t.app, shop.auth, product.id, { name: 'Monthly', amount: 1500, interval: 'month' })
    const trial = await createPlan(t.app, shop.auth, product.id, { name: 'Trial', amount: 900, interval: 'month', trial_days: 14 })
    return { ...shop, monthly, trial }
  }

  async function setStoreClock(shop: StoreWithKey, iso: string): Promise<void> {
    await t.db.updateTable('stores').set({ test_clock_now: new Date(iso) }).where('id', '=', shop.store.id).execute()
  }

  async function subscribe(shop: Shop, planId: string, extra: Record<string, unknown> = {}): Promise<any> {
    orderCounter += 1
    const response = await call(t.app, {
      method: 'POST',
      url: '/api/v1/admin/checkouts',
      headers: shop.auth,
      payload: {
        platform_order_id: `due-${process.pid}-${orderCounter}`,
        email: `due-${process.pid}-${orderCounter}@example.com`,
        payment_instrument_id: 'instr_9f8e7d',
        items: [{ plan_id: planId, quantity: 1 }],
        ...extra,
      },
    })
    assert.equal(response.statusCode, 201, `checkout failed: ${response.body}`)
    return response.json.data[0]
  }

  async function act(shop: Shop, id: string, action: string, payload?: Record<string, unknown>): Promise<any> {
    const response = await call(t.app, {
      method: 'POST',
      url: `/api/v1/admin/subscriptions/${id}/${action}`,
      headers: shop.auth,
      ...(payload ? { payload } : {}),
    })
    assert.equal(response.statusCode, 200, `${action} failed: ${response.body}`)
    return response.json
  }

  async function read(shop: Shop, id: string): Promise<any> {
    const response = await call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${id}`, headers: shop.auth })
    assert.equal(response.statusCode, 200, response.body)
    return response.json
  }

  // Renewal reminders and prepaid cycles have their own tests (test/api/billing); these are the lifecycle's.
  const process_ = (shop: Shop) => testModules(t.db, { clock: clock }).processDueWork({ storeId: shop.store.id, kinds: ['activation', 'resumption', 'cancellation'] })

  test('a future-start subscription stays pending before its start and activates at its start time once the store clock passes it', async () => {
    const shop = await newShop()
    const startAt = plus(T0, 10 * DAY)
    const created = await subscribe(shop, shop.monthly.id, { start_at: startAt })
    assert.equal(created.status, 'pending')

    await setStoreClock(shop, plus(startAt, -1))
    assert.deepEqual(await process_(shop), NONE, 'nothing is due a millisecond before the start')
    assert.equal((await read(shop, created.id)).status, 'pending')

    await setStoreClock(shop, plus(startAt, 3 * DAY))
    assert.deepEqual(await process_(shop), { ...NONE, activations: 1 })
    const active = await read(shop, created.id)
    assert.equal(active.status, 'active')
    assert.equal(active.current_period_start, startAt, 'the first period starts at the start, not when the work ran')
    assert.equal(active.current_period_end, '2026-02-20T09:00:00.000Z')
    assert.equal(active.next_charge_at, '2026-02-20T09:00:00.000Z', 'the next charge is one interval after the start')

    const events = await storedEvents(t.db, created.id)
    assert.deepEqual(events.map((event) => event.event_type), ['subscription.created', 'subscription.activated'])
    const activated = events[1]
    assert.equal(activated.timestamp, startAt, 'subscription.activated happened at the start time, not the wall or store time')
    assert.equal(activated.data.status, 'active')
    assert.equal(activated.data.next_charge_at, '2026-02-20T09:00:00.000Z')
  })

  test('a trial subscription activates after trial_days with its first charge due at activation', async () => {
    const shop = await newShop()
    const created = await subscribe(shop, shop.trial.id)
    const activation = plus(T0, 14 * DAY)
    assert.equal(created.status, 'pending', 'a trial starts pending')
    assert.equal(created.start_at, activation, 'it becomes active when the trial ends')

    await setStoreClock(shop, plus(T0, 13 * DAY))
    assert.deepEqual(await process_(shop), NONE, 'still in the trial')

    await setStoreClock(shop, plus(T0, 15 * DAY))
    assert.deepEqual(await process_(shop), { ...NONE, activations: 1 })
    const active = await read(shop, created.id)
    assert.equal(active.status, 'active')
    assert.equal(active.next_charge_at, activation, 'nothing was paid during the trial: the first charge is due at activation')
    const activated = (await storedEvents(t.db, created.id)).find((event) => event.event_type === 'subscription.activated')
    assert.equal(activated?.timestamp, activation)
  })

  test('a paused subscription with resume_at resumes once the store clock passes resume_at, with subscription.resumed at resume_at', async () => {
    const shop = await newShop()
    const created = await subscribe(shop, shop.monthly.id)
    assert.equal(created.status, 'active')
    const resumeAt = plus(T0, 7 * DAY)
    await setStoreClock(shop, plus(T0, DAY))
    const paused = await act(shop, created.id, 'pause', { resume_at: resumeAt })
    assert.equal(paused.status, 'paused')

    await setStoreClock(shop, plus(resumeAt, -1))
    assert.deepEqual(await process_(shop), NONE)
    assert.equal((await read(shop, created.id)).status, 'paused')

    await setStoreClock(shop, plus(resumeAt, 2 * DAY))
    assert.deepEqual(await process_(shop), { ...NONE, resumptions: 1 })
    const resumed = await read(shop, created.id)
    assert.equal(resumed.status, 'active')
    assert.equal(resumed.resume_at, null)
    assert.equal(resumed.paused_at, null)
    const events = await storedEvents(t.db, created.id)
    assert.deepEqual(events.map((event) => event.event_type), ['subscription.created', 'subscription.activated', 'subscription.paused', 'subscription.resumed'])
    assert.equal(events.at(-1).timestamp, resumeAt)
  })

  test('cancel at_period_end cancels when current_period_end passes, with subscription.cancelled at that time', async () => {
    const shop = await newShop()
    const created = await subscribe(shop, shop.monthly.id)
    const periodEnd = created.current_period_end
    assert.equal(periodEnd, '2026-02-10T09:00:00.000Z')
    await setStoreClock(shop, plus(T0, 2 * DAY))
    const scheduled = await act(shop, created.id, 'cancel', { at_period_end: true })
    assert.equal(scheduled.status, 'active')
    assert.equal(scheduled.cancel_at_period_end, true)

    await setStoreClock(shop, plus(periodEnd, -1))
    assert.deepEqual(await process_(shop), NONE, 'the paid period is not over yet')
    assert.equal((await read(shop, created.id)).status, 'active')

    await setStoreClock(shop, plus(periodEnd, 5 * DAY))
    assert.deepEqual(await process_(shop), { ...NONE, cancellations: 1 })
    const cancelled = await read(shop, created.id)
    assert.equal(cancelled.status, 'cancelled')
    assert.equal(cancelled.cancelled_at, periodEnd, 'it ended when the paid period did')
    assert.equal(cancelled.next_charge_at, null)
    assert.equal(cancelled.cancel_at_period_end, false)
    const last = (await storedEvents(t.db, created.id)).at(-1)
    assert.equal(last.event_type, 'subscription.cancelled')
    assert.equal(last.timestamp, periodEnd)
  })

  test('processing twice does nothing the second time: no state change and no duplicate event', async () => {
    const shop = await newShop()
    const pending = await subscribe(shop, shop.monthly.id, { start_at: plus(T0, DAY) })
    const toResume = await subscribe(shop, shop.monthly.id)
    const toCancel = await subscribe(shop, shop.monthly.id)
    await act(shop, toResume.id, 'pause', { resume_at: plus(T0, 2 * DAY) })
    await act(shop, toCancel.id, 'cancel', { at_period_end: true })

    await setStoreClock(shop, plus(T0, 60 * DAY))
    assert.deepEqual(await process_(shop), { ...NONE, activations: 1, resumptions: 1, cancellations: 1 })
    const events = await eventCount(t.db, shop.store.id)
    const versions = await Promise.all([pending, toResume, toCancel].map(async (s) => (await read(shop, s.id)).version))

    assert.deepEqual(await process_(shop), NONE, 'the second run finds nothing to do')
    assert.equal(await eventCount(t.db, shop.store.id), events, 'no event was recorded twice')
    const versionsAfter = await Promise.all([pending, toResume, toCancel].map(async (s) => (await read(shop, s.id)).version))
    assert.deepEqual(versionsAfter, versions, 'no subscription was written again')
  })

  test('only work due on its own store clock runs: another store whose clock has not moved is left alone', async () => {
    const early = await newShop()
    const late = await newShop()
    const startAt = plus(T0, 3 * DAY)
    const inEarly = await subscribe(early, early.monthly.id, { start_at: startAt })
    const inLate = await subscribe(late, late.monthly.id, { start_at: startAt })
    await setStoreClock(early, plus(T0, 4 * DAY))

    // Unscoped, as the worker runs it: each store is judged on its own clock.
    await testModules(t.db, { clock: clock }).processDueWork()
    assert.equal((await read(early, inEarly.id)).status, 'active')
    assert.equal((await read(late, inLate.id)).status, 'pending', 'the other store is still at T0')
  })

  test('two concurrent processDueWork calls on separate connection pools activate each subscription exactly once', {
    skip: onPostgres ? false : 'needs PostgreSQL (DATABASE_URL): the embedded database has a single connection, so workers cannot race',
  }, async () => {
    const COUNT = 60
    const shop = await newShop()
    const startAt = plus(T0, DAY)
    const ids: string[] = []
    for (let i = 0; i < COUNT; i++) ids.push((await subscribe(shop, shop.monthly.id, { start_at: startAt })).id)
    await setStoreClock(shop, plus(T0, 2 * DAY))

    const url = taggedUrl(scratchUrl(t.database)!)
    const pools = [await connectDatabase({ databaseUrl: url, poolSize: 4 }), await connectDatabase({ databaseUrl: url, poolSize: 4 })]
    try {
      const results = await Promise.all(pools.flatMap((pool) => [0, 1].map(() => testModules(pool.db, { clock: clock }).processDueWork({ storeId: shop.store.id }))))
      const activations = results.reduce((sum, counts) => sum + counts.activations, 0)
      assert.equal(activations, COUNT, `the workers together activated ${activations} of ${COUNT}`)
      // Rows a worker skipped while locked are picked up by the next run: that must change nothing now.
      assert.deepEqual(await testModules(pools[0]!.db, { clock: clock }).processDueWork({ storeId: shop.store.id }), NONE)
    } finally {
      await closePools(t.db, pools)
    }

    const activated = await t.db
      .selectFrom('events')
      .select(['entity_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('store_id', '=', shop.store.id)
      .where('event_type', '=', 'subscription.activated')
      .groupBy('entity_id')
      .execute()
    assert.equal(activated.length, COUNT, 'every subscription has an activated event')
    assert.deepEqual(activated.filter((row) => Number(row.n) !== 1), [], 'no subscription was activated twice')
    const statuses = await t.db.selectFrom('subscriptions').select('status').where('id', 'in', ids).execute()
    assert.ok(statuses.every((row) => row.status === 'active'))
  })
})

describe('due lifecycle work through the worker (subscriptions.due_work job)', () => {
  let t: TestApp
  const clock = fixedClock(WALL)

  before(async () => {
    t = await buildTestApp({ clock })
  })
  after(() => t.close())

  test("the 'subscriptions.due_work' handler run by a job runner activates due subscriptions and reschedules itself", async () => {
    const shop = await createStoreWithKey(t.db)
    await t.db.updateTable('stores').set({ test_clock_now: new Date(T0) }).where('id', '=', shop.store.id).execute()
    const product = await createProduct(t.app, shop.auth)
    const plan = await createPlan(t.app, shop.auth, product.id)
    const startAt = plus(T0, 5 * DAY)
    const response = await call(t.app, {
      method: 'POST',
      url: '/api/v1/admin/checkouts',
      headers: shop.auth,
      payload: { platform_order_id: `worker-${process.pid}`, email: 'worker@example.com', payment_instrument_id: 'instr_1', items: [{ plan_id: plan.id, quantity: 1 }], start_at: startAt },
    })
    assert.equal(response.statusCode, 201, response.body)
    const subscription = response.json.data[0]
    await t.db.updateTable('stores').set({ test_clock_now: new Date(plus(startAt, DAY)) }).where('id', '=', shop.store.id).execute()

    const dueWork = jobHandlersOf(t.services).find(({ job }) => job.kind === 'subscriptions.due_work')
    assert.ok(dueWork, 'the catalogue has a subscriptions.due_work handler')
    assert.deepEqual(dueWork.recurring, { instances: 1 }, 'the worker keeps one due-work job queued')
    await ensureRecurring(t.db, DueWork)
    const runner = createJobRunner({ db: t.db, handlers: [dueWork], log: pino({ level: 'silent' }) })
    const ranFrom = Date.now()
    assert.equal(await runner.runOnce(), 1, 'the recurring due-work job was claimed')

    const row = await t.db.selectFrom('subscriptions').selectAll().where('id', '=', subscription.id).executeTakeFirstOrThrow()
    assert.equal(row.status, 'active')
    assert.equal(row.current_period_start?.toISOString(), startAt)
    const activated = await t.db.selectFrom('events').select('occurred_at').where('entity_id', '=', subscription.id).where('event_type', '=', 'subscription.activated').execute()
    assert.equal(activated.length, 1)
    assert.equal(activated[0]!.occurred_at.toISOString(), startAt)

    const job = await t.db.selectFrom('jobs').selectAll().where('kind', '=', 'subscriptions.due_work').executeTakeFirstOrThrow()
    assert.equal(job.failed_at, null)
    assert.equal(job.last_error, null)
    assert.ok(job.run_at.getTime() > ranFrom, 'the recurring job is kept and comes back later')
    assert.equal(await runner.runOnce(), 0, 'it is not due again at once')
  })
})
