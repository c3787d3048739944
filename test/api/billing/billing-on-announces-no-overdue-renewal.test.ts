// Turning billing back on (the cutover switch, docs/contract.md Cutover switch) must not announce a
// renewal that is already due: `subscription.renewal_upcoming` and its email tell the subscriber of a
// charge still to come, and a renewal overdue while billing was off is charged at once. A reminder
// whose renewal is still ahead is sent, late; and a test-clock jump still announces each renewal it
// passes at the reminder's own due time, before charging it.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { fixedClock } from '../../../src/lib/clock.ts'
import { processDueWork } from '../../../src/modules/subscriptions/due-work.ts'
import { createTestRenewals } from '../../helpers/billing.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { checkout, checkoutBody, closeTestApp, getSubscription } from '../subscriptions/fixtures.ts'

const T0 = '2026-01-10T09:00:00.000Z'
const FEB10 = '2026-02-10T09:00:00.000Z'
const HOUR = 3_600_000
const DAY = 24 * HOUR
const plus = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString()

describe('turning billing on announces no renewal that is already due', () => {
  const clock = fixedClock(T0)
  let t: TestApp
  before(async () => {
    t = await buildTestApp({ clock })
  })
  after(() => closeTestApp(t))

  const patchStore = (shop: StoreWithKey, payload: Record<string, unknown>) => call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: shop.auth, payload })
  const reminders = (shop: StoreWithKey) =>
    t.db.selectFrom('events').select(['entity_id', 'occurred_at', 'payload']).where('store_id', '=', shop.store.id).where('event_type', '=', 'subscription.renewal_upcoming').orderBy('position').execute()
  /** Reminder emails queued for the store's subscribers (the worker sends them later). */
  const reminderEmails = async (shop: StoreWithKey) =>
    (await t.db.selectFrom('jobs').select('payload').where('kind', '=', 'notifications.send').execute()).filter((job) => job.payload.store_id === shop.store.id && job.payload.template === 'renewal_upcoming')
  /** One pass of the worker's own due work and renewal engine over the store, on real time at `at`. */
  async function workerPass(shop: StoreWithKey, at: string) {
    clock.set(at)
    const due = await processDueWork(t.db, clock, t.services.modules.subscriptions.service.writes, { storeId: shop.store.id })
    const renewed = await createTestRenewals(t.db, clock).runDue({ storeId: shop.store.id })
    return { reminders: due.reminders, renewals: renewed.renewals }
  }
  async function monthlyShop(): Promise<{ shop: StoreWithKey; subscriptionId: string }> {
    clock.set(T0)
    const shop = await createStoreWithKey(t.db)
    assert.equal((await patchStore(shop, { renewal_reminder_days: 3 })).statusCode, 200)
    const product = await createProduct(t.app, shop.auth)
    const plan = await createPlan(t.app, shop.auth, product.id, { name: 'Monthly', amount: 1500, interval: 'month' })
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(plan.id))
    assert.equal(subscription.next_charge_at, FEB10)
    return { shop, subscriptionId: subscription.id }
  }

  test('real time: a renewal that fell due while off is charged without a reminder; the next one is announced as usual', async () => {
    const { shop, subscriptionId } = await monthlyShop()
    clock.set('2026-01-20T09:00:00.000Z')
    assert.equal((await patchStore(shop, { billing_enabled: false })).statusCode, 200)
    assert.deepEqual(await workerPass(shop, plus(FEB10, -3 * DAY + HOUR)), { reminders: 0, renewals: 0 }, 'off: no reminder')
    assert.deepEqual(await workerPass(shop, plus(FEB10, HOUR)), { reminders: 0, renewals: 0 }, 'off: no renewal')

    clock.set(plus(FEB10, 2 * DAY))
    assert.equal((await patchStore(shop, { billing_enabled: true })).statusCode, 200)
    assert.deepEqual(await workerPass(shop, plus(FEB10, 2 * DAY)), { reminders: 0, renewals: 1 }, 'charged, not announced')
    assert.deepEqual(await reminders(shop), [])
    assert.deepEqual(await reminderEmails(shop), [], 'no reminder email for a renewal already charged')

    const next = (await getSubscription(t.app, shop.auth, subscriptionId)).next_charge_at as string
    assert.ok(next > plus(FEB10, 2 * DAY))
    assert.deepEqual(await workerPass(shop, plus(next, -3 * DAY + HOUR)), { reminders: 1, renewals: 0 }, 'the next renewal is announced 3 days ahead')
    const [reminder] = await reminders(shop)
    assert.equal(JSON.parse(reminder!.payload).data.next_charge_at, next)
    assert.equal((await reminderEmails(shop)).length, 1)
  })

  test('real time: a reminder that fell due while off, for a renewal still ahead, is sent when billing comes on', async () => {
    const { shop } = await monthlyShop()
    clock.set(plus(FEB10, -4 * DAY))
    assert.equal((await patchStore(shop, { billing_enabled: false })).statusCode, 200)
    assert.deepEqual(await workerPass(shop, plus(FEB10, -3 * DAY + HOUR)), { reminders: 0, renewals: 0 })
    clock.set(plus(FEB10, -DAY))
    assert.equal((await patchStore(shop, { billing_enabled: true })).statusCode, 200)
    assert.deepEqual(await workerPass(shop, plus(FEB10, -DAY)), { reminders: 1, renewals: 0 })
    assert.equal((await reminderEmails(shop)).length, 1)
  })

  test('test clock: the advance after billing comes on charges the overdue renewal unannounced; a later jump announces each renewal it passes before charging it', async () => {
    const { shop, subscriptionId } = await monthlyShop()
    await t.db.updateTable('stores').set({ test_clock_now: new Date(T0) }).where('id', '=', shop.store.id).execute()
    const advance = async (to: string) => {
      const response = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to } })
      assert.equal(response.statusCode, 200, response.body)
      return response.json.processed as { renewals: number; reminders: number }
    }
    assert.equal((await patchStore(shop, { billing_enabled: false })).statusCode, 200)
    const onAt = plus(FEB10, 2 * DAY)
    assert.deepEqual([(await advance(onAt)).reminders, (await reminders(shop)).length], [0, 0])
    assert.equal((await patchStore(shop, { billing_enabled: true })).statusCode, 200)
    const caughtUp = await advance(onAt)
    assert.deepEqual([caughtUp.renewals, caughtUp.reminders], [1, 0], 'the overdue renewal is charged, not announced')
    assert.deepEqual(await reminders(shop), [])

    // One jump across the next reminder and its renewal: announced at its own due time, then charged.
    const next = (await getSubscription(t.app, shop.auth, subscriptionId)).next_charge_at as string
    const jumped = await advance(plus(next, HOUR))
    assert.deepEqual([jumped.renewals, jumped.reminders], [1, 1])
    const [reminder] = await reminders(shop)
    assert.deepEqual([reminder!.occurred_at.toISOString(), JSON.parse(reminder!.payload).data.next_charge_at], [plus(next, -3 * DAY), next])
    const charged = await t.db.selectFrom('events').select('position').where('entity_id', '=', subscriptionId).where('event_type', '=', 'subscription.charged').orderBy('position', 'desc').executeTakeFirstOrThrow()
    assert.ok(charged.position > (await t.db.selectFrom('events').select('position').where('entity_id', '=', subscriptionId).where('event_type', '=', 'subscription.renewal_upcoming').executeTakeFirstOrThrow()).position, 'announced before charged')
  })
})
