import assert from 'node:assert/strict'
import { after, afterEach, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import type { SubscriptionRow } from '../../src/db/database.ts'
import { fixedClock } from '../../src/lib/clock.ts'
import { AppError } from '../../src/lib/errors.ts'
import { checkoutInput, checkoutViaApi, createCatalog, createShop, setStoreClock, type Catalog } from '../helpers/subscriptions.ts'
import { buildTestApp, call, type StoreWithKey, type TestApp } from '../helpers/test-app.ts'
import { testModules } from '../helpers/modules.ts'
import { TEST_ADMIN } from '../helpers/actors.ts'

const CRASH_MESSAGE = 'simulated crash between the state change and its event'

describe('outbox: a state change and its event commit together or not at all', () => {
  let t: TestApp
  let shop: StoreWithKey
  let catalog: Catalog

  before(async () => {
    t = await buildTestApp()
    shop = await createShop(t.db)
    catalog = await createCatalog(t.db, shop.store)
    await sql
      .raw(`CREATE FUNCTION refuse_event_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '${CRASH_MESSAGE}'; END $$`)
      .execute(t.db)
  })
  afterEach(() => allowEvents())
  after(() => t.close())

  /** Every insert into the outbox fails from now on: the state change before it must not survive. */
  const refuseEvents = () => sql`CREATE TRIGGER refuse_event_insert BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION refuse_event_insert()`.execute(t.db)
  const allowEvents = () => sql`DROP TRIGGER IF EXISTS refuse_event_insert ON events`.execute(t.db)

  const row = (id: string) => t.db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
  const eventsOf = (entityId: string) =>
    t.db.selectFrom('events').select(['id', 'event_type', 'sequence']).where('entity_id', '=', entityId).orderBy('id').execute()
  const post = (url: string, payload: object) => call(t.app, { method: 'POST', url: `/api/v1/admin${url}`, headers: shop.auth, payload })

  function assertInternalError(response: Awaited<ReturnType<typeof post>>): void {
    assert.equal(response.statusCode, 500, response.body)
    assert.equal(response.json.code, 'internal_error')
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
    assert.ok(!response.body.includes(CRASH_MESSAGE), 'the database error does not reach the client')
    assert.ok(!/insert into|events/i.test(response.json.detail), 'no SQL in the problem detail')
  }

  async function activeSubscription(): Promise<SubscriptionRow> {
    const [subscription] = await checkoutViaApi(t.app, shop.auth, checkoutInput(catalog.plans.monthly.id))
    return row(subscription.id)
  }

  const ACTIONS = [
    { name: 'pause', url: 'pause', body: {}, event: 'subscription.paused', status: 'paused' },
    { name: 'pause until a date', url: 'pause', body: { resume_at: '2099-01-01T00:00:00.000Z' }, event: 'subscription.paused', status: 'paused' },
    { name: 'cancel now', url: 'cancel', body: { reason: 'moving' }, event: 'subscription.cancelled', status: 'cancelled' },
    { name: 'cancel at period end', url: 'cancel', body: { at_period_end: true }, event: 'subscription.updated', status: 'active' },
    { name: 'quantity', url: 'quantity', body: { quantity: 3 }, event: 'subscription.updated', status: 'active' },
  ] as const

  for (const action of ACTIONS) {
    test(`${action.name}: when its event cannot be written the call is 500 and the subscription is exactly as before; without the fault it succeeds with its event`, async () => {
      const before = await activeSubscription()
      const eventsBefore = await eventsOf(before.id)

      await refuseEvents()
      const failed = await post(`/subscriptions/${before.id}/${action.url}`, action.body)
      assertInternalError(failed)
      const unchanged = await row(before.id)
      assert.deepEqual(
        { status: unchanged.status, version: unchanged.version, updated_at: unchanged.updated_at },
        { status: before.status, version: before.version, updated_at: before.updated_at },
      )
      assert.deepEqual(unchanged, before, 'no column changed')
      assert.deepEqual(await eventsOf(before.id), eventsBefore)

      await allowEvents()
      const succeeded = await post(`/subscriptions/${before.id}/${action.url}`, action.body)
      assert.equal(succeeded.statusCode, 200, succeeded.body)
      assert.equal(succeeded.json.status, action.status)
      assert.equal(succeeded.json.version, before.version + 1)
      const eventsAfter = await eventsOf(before.id)
      assert.deepEqual(eventsAfter.slice(0, eventsBefore.length), eventsBefore)
      assert.deepEqual(
        eventsAfter.slice(eventsBefore.length).map((event) => [event.event_type, event.sequence]),
        [[action.event, eventsBefore.length + 1]],
      )
    })
  }

  test('checkout: when its events cannot be written the call is 500 and no checkout, subscriber or subscription is left; then the same order succeeds', async () => {
    const input = checkoutInput([catalog.plans.monthly.id, catalog.plans.trial.id], { email: 'outbox-checkout@example.com' })
    const orderId = String(input.platform_order_id)
    const leftovers = async () => ({
      checkouts: await t.db.selectFrom('checkouts').selectAll().where('platform_order_id', '=', orderId).execute(),
      subscriptions: await t.db.selectFrom('subscriptions').select('id').where('platform_order_id', '=', orderId).execute(),
      subscribers: await t.db.selectFrom('subscribers').select('id').where('email', '=', 'outbox-checkout@example.com').execute(),
    })
    const eventCount = async () => Number((await t.db.selectFrom('events').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
    const eventsBefore = await eventCount()

    await refuseEvents()
    assertInternalError(await post('/checkouts', input))
    assert.deepEqual(await leftovers(), { checkouts: [], subscriptions: [], subscribers: [] })
    assert.equal(await eventCount(), eventsBefore)

    await allowEvents()
    const created = await checkoutViaApi(t.app, shop.auth, input)
    assert.deepEqual(created.map((subscription) => subscription.status), ['active', 'pending'])
    const left = await leftovers()
    assert.equal(left.checkouts.length, 1)
    assert.deepEqual(left.checkouts[0]!.subscription_ids, created.map((subscription) => subscription.id))
    assert.deepEqual((await eventsOf(created[0].id)).map((event) => event.event_type), ['subscription.created', 'subscription.activated'])
    assert.deepEqual((await eventsOf(created[1].id)).map((event) => event.event_type), ['subscription.created'])
  })

  test('due work: an activation whose event cannot be written leaves the subscription pending, and runs on the next pass', async () => {
    const startAt = new Date(Date.now() + 3 * 86_400_000)
    const [created] = await checkoutViaApi(t.app, shop.auth, checkoutInput(catalog.plans.monthly.id, { start_at: startAt.toISOString() }))
    const before = await row(created.id)
    assert.equal(before.status, 'pending')
    const store = await setStoreClock(t.db, shop.store.id, new Date(startAt.getTime() + 60_000))
    const clock = fixedClock(store.test_clock_now!)
    try {
      await refuseEvents()
      await assert.rejects(testModules(t.db, { clock: clock }).processDueWork({ storeId: store.id }), new RegExp(CRASH_MESSAGE))
      assert.deepEqual(await row(created.id), before)

      await allowEvents()
      assert.deepEqual(await testModules(t.db, { clock: clock }).processDueWork({ storeId: store.id }), { activations: 1, resumptions: 0, cancellations: 0, reminders: 0, prepaidCycles: 0 })
      assert.equal((await row(created.id)).status, 'active')
      assert.deepEqual((await eventsOf(created.id)).map((event) => event.event_type), ['subscription.created', 'subscription.activated'])
    } finally {
      shop.store = await setStoreClock(t.db, shop.store.id, null)
    }
  })

  test('the event log refuses a payload holding a card number, and the change in its transaction is rolled back with it', async () => {
    const before = await activeSubscription()
    const eventsBefore = await eventsOf(before.id)
    await assert.rejects(
      t.db.transaction().execute(async (trx) => {
        await trx.updateTable('subscriptions').set({ quantity: 7, version: before.version + 1 }).where('id', '=', before.id).execute()
        await testModules(t.db).events.record(trx, {
          storeId: shop.store.id,
          eventType: 'subscription.updated',
          occurredAt: new Date(),
          data: { id: before.id, object: 'subscription', note: 'card 4242-4242-4242-4242' },
          actor: TEST_ADMIN,
        })
      }),
      (error: unknown) => error instanceof AppError && error.code === 'internal_error',
    )
    assert.deepEqual(await row(before.id), before)
    assert.deepEqual(await eventsOf(before.id), eventsBefore)
    const leaked = await t.db.selectFrom('events').select('id').where('payload', 'like', '%4242%4242%4242%4242%').execute()
    assert.deepEqual(leaked, [])
  })
})
