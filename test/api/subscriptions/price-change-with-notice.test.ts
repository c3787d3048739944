// Price changes with notice (docs/contract.md, Price changes with notice) end to end: the admin API,
// the job that schedules the plan's subscriptions and the notice emails (run here one batch at a time
// by a job runner that is not started), a real SMTP server, and renewals on the store's test clock.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { pino } from 'pino'
import { createJobRunner, type JobRunner } from '../../../src/jobs/runner.ts'
import { createMailer, type Mailer } from '../../../src/lib/mailer.ts'
import { SendNotification } from '../../../src/modules/notifications/index.ts'
import { SchedulePriceChange } from '../../../src/modules/price-changes/index.ts'
import { createPriceChangeService } from '../../../src/modules/price-changes/price-changes.service.ts'
import { jobHandlersOf } from '../../../src/worker.ts'
import * as priceChangesMigration from '../../../src/db/migrations/0033-price-changes.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { createTestDatabase } from '../../helpers/database.ts'
import { TEST_ADMIN } from '../../helpers/actors.ts'
import { assertProblem } from '../../helpers/problem.ts'
import { startSmtpSink, type ReceivedMessage, type SmtpSink } from '../../helpers/smtp-sink.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, checkout, checkoutBody, closeTestApp, getSubscription, nextEmail } from './fixtures.ts'

const PORTAL_URL = 'http://portal.test/portal'
/** Each store's clock starts here (UTC): monthly renewals fall on the 5th at noon. */
const START = '2027-01-05T12:00:00.000Z'
const FEB_5 = '2027-02-05T12:00:00.000Z'
const MAR_5 = '2027-03-05T12:00:00.000Z'
const APR_5 = '2027-04-05T12:00:00.000Z'

type Auth = Record<string, string>

describe('price changes with notice', () => {
  let t: TestApp
  let sink: SmtpSink
  let mailer: Mailer
  let runner: JobRunner

  before(async () => {
    sink = await startSmtpSink()
    mailer = createMailer({ smtpUrl: sink.url, from: 'Shop <no-reply@shop.test>', log: pino({ level: 'silent' }) })
    t = await buildTestApp({ env: { PORTAL_URL, SMTP_URL: sink.url }, mailer, portalUrl: () => PORTAL_URL })
    // Not started: the tests run its batches themselves, so every job is done when `drain` returns.
    runner = createJobRunner({ db: t.db, handlers: jobHandlersOf(t.services).filter(({ job }) => job === SchedulePriceChange || job === SendNotification), log: t.app.log })
  })
  after(async () => {
    mailer?.close()
    if (t) await closeTestApp(t)
    await sink?.close()
  })

  /** Runs the queued price-change pages and emails until none is left. */
  async function drain(): Promise<void> {
    while ((await runner.runOnce()) > 0) {
      // Another batch: a page queued the next, or a page's events queued emails.
    }
  }

  async function shop(): Promise<StoreWithKey & { planId: string; otherPlanId: string }> {
    const s = await createStoreWithKey(t.db)
    await t.db.updateTable('stores').set({ test_clock_now: new Date(START) }).where('id', '=', s.store.id).execute()
    const product = await createProduct(t.app, s.auth)
    const plan = await createPlan(t.app, s.auth, product.id, { name: 'Morning Blend', amount: 1500, currency: 'USD', interval: 'month' })
    const other = await createPlan(t.app, s.auth, product.id, { name: 'Evening Blend', amount: 1700, currency: 'USD', interval: 'month' })
    return { ...s, planId: plan.id, otherPlanId: other.id }
  }
  const get = (auth: Auth, url: string) => call(t.app, { method: 'GET', url: `/api/v1/admin${url}`, headers: auth })
  const post = (auth: Auth, url: string, payload: object) => call(t.app, { method: 'POST', url: `/api/v1/admin${url}`, headers: auth, payload })
  const changePrice = (auth: Auth, planId: string, payload: object) => post(auth, `/plans/${planId}/price-change`, payload)
  async function advance(auth: Auth, to: string) {
    const response = await post(auth, '/test-clock/advance', { to })
    assert.equal(response.statusCode, 200, response.body)
  }
  async function chargeAmounts(auth: Auth, subscriptionId: string): Promise<number[]> {
    const response = await get(auth, `/charges?subscription_id=${subscriptionId}&limit=100`)
    assert.equal(response.statusCode, 200, response.body)
    return response.json.data.filter((charge: any) => charge.status === 'succeeded').map((charge: any) => charge.amount).reverse()
  }
  async function eventsOf(auth: Auth, subscriptionId: string, type: string): Promise<any[]> {
    const response = await get(auth, `/events?entity_id=${subscriptionId}&event_type=${type}&limit=100`)
    assert.equal(response.statusCode, 200, response.body)
    return response.json.data
  }
  const noticeTo = (email: string): ReceivedMessage[] => sink.messagesTo(email).filter((message) => /price of your .* subscription changes/.test(String(message.parsed.subject)))

  test('30 days of notice on a monthly plan: the notice email, the renewal inside the notice at the old price, the first at or after it at the new one, each event once', async () => {
    const { auth, planId } = await shop()
    const one = nextEmail('one')
    const two = nextEmail('two')
    const [single] = await checkout(t.app, auth, checkoutBody(planId, { email: one }))
    const [double] = await checkout(t.app, auth, checkoutBody(planId, { email: two, items: [{ plan_id: planId, quantity: 2 }] }))
    const [ended] = await checkout(t.app, auth, checkoutBody(planId))
    assert.equal((await act(t.app, auth, ended.id, 'cancel', {})).statusCode, 200)
    assert.equal(single.next_charge_at, FEB_5)

    // Ten days in, the price goes up with 30 days' notice: Feb 14 is the earliest, so Feb 5 stays at
    // the old price and Mar 5 (the first renewal at or after Feb 14) is the first at the new one.
    await advance(auth, '2027-01-15T12:00:00.000Z')
    const asked = await changePrice(auth, planId, { amount: 1800, applies_to: 'existing_too', notice_days: 30 })
    assert.equal(asked.statusCode, 202, asked.body)
    assert.equal(asked.json.object, 'price_change')
    assert.equal(asked.json.status, 'scheduling')
    assert.deepEqual([asked.json.amount, asked.json.previous_amount, asked.json.currency, asked.json.notice_days], [1800, 1500, 'USD', 30])
    assert.deepEqual(asked.json.subscriptions, { total: 2, scheduled: 0, unchanged: 0, failed: 0 }, 'the cancelled one is not counted')
    assert.equal(asked.json.actor.type, 'admin_key')
    assert.equal((await get(auth, `/plans/${planId}`)).json.amount, 1800, 'new subscriptions pay the new price at once')

    await drain()
    const done = await get(auth, `/price-changes/${asked.json.id}`)
    assert.equal(done.statusCode, 200, done.body)
    assert.equal(done.json.status, 'completed')
    assert.equal(done.json.completed_at, '2027-01-15T12:00:00.000Z', "on the store's clock")
    assert.deepEqual(done.json.subscriptions, { total: 2, scheduled: 2, unchanged: 0, failed: 0 })

    const scheduled = await getSubscription(t.app, auth, single.id)
    assert.equal(scheduled.amount, 1500, 'it keeps its price until then')
    assert.deepEqual(scheduled.scheduled_price, { amount: 1800, currency: 'USD', effective_at: MAR_5 })
    assert.equal((await getSubscription(t.app, auth, ended.id)).scheduled_price, null, 'a cancelled subscription is left alone')

    // The notice, as the subscriber reads it: old price, new price (x quantity) and the date.
    const [notice] = noticeTo(one)
    assert.ok(notice, `a notice email to ${one}: got ${sink.messagesTo(one).map((message) => message.parsed.subject).join(', ')}`)
    assert.match(String(notice.parsed.subject), /changes on March 5, 2027/)
    assert.match(String(notice.parsed.text), /Morning Blend subscription changes from \$15\.00 to \$18\.00\./)
    assert.match(String(notice.parsed.text), /the renewal on March 5, 2027 is the first at \$18\.00/)
    assert.match(String(noticeTo(two)[0]?.parsed.text), /from \$30\.00 to \$36\.00/, 'price x quantity')
    const sent = await get(auth, `/notifications?subscription_id=${single.id}`)
    assert.ok(sent.json.data.some((row: any) => row.template === 'price_change_notice' && row.status === 'sent'), 'in the log of emails')

    // The preview agrees with what the engine will charge, before and after the date.
    assert.equal((await get(auth, `/subscriptions/${single.id}/upcoming`)).json.amount, 1500)
    await advance(auth, FEB_5)
    assert.deepEqual(await chargeAmounts(auth, single.id), [1500], 'the renewal inside the notice charges the old price')
    assert.deepEqual(await chargeAmounts(auth, double.id), [3000])
    assert.equal((await getSubscription(t.app, auth, single.id)).amount, 1500)
    assert.equal((await get(auth, `/subscriptions/${single.id}/upcoming`)).json.amount, 1800, 'the preview of Mar 5 says the new price')

    await advance(auth, MAR_5)
    assert.deepEqual(await chargeAmounts(auth, single.id), [1500, 1800], 'the first renewal at or after the date charges the new one')
    assert.deepEqual(await chargeAmounts(auth, double.id), [3000, 3600])
    const changed = await getSubscription(t.app, auth, single.id)
    assert.equal(changed.amount, 1800, 'the new price is its price now')
    assert.equal(changed.scheduled_price, null)

    await advance(auth, APR_5)
    assert.deepEqual(await chargeAmounts(auth, single.id), [1500, 1800, 1800])
    await drain()
    for (const id of [single.id, double.id]) {
      const scheduledEvents = await eventsOf(auth, id, 'subscription.price_change_scheduled')
      assert.equal(scheduledEvents.length, 1, 'scheduled once')
      assert.deepEqual(scheduledEvents[0].data.scheduled_price, { amount: 1800, currency: 'USD', effective_at: MAR_5 })
      assert.equal(scheduledEvents[0].actor.type, 'admin_key', 'the merchant who asked')
      const changedEvents = await eventsOf(auth, id, 'subscription.price_changed')
      assert.equal(changedEvents.length, 1, 'changed once')
      assert.equal(changedEvents[0].timestamp, MAR_5)
      assert.equal(changedEvents[0].data.amount, 1800)
    }
    assert.equal(noticeTo(one).length, 1, 'one notice email')
  })

  test('a page at a time by subscription id, each subscription once; a row that cannot take the price fails alone', async () => {
    const { auth, planId } = await shop()
    const subscriptions = []
    for (let i = 0; i < 5; i++) subscriptions.push((await checkout(t.app, auth, checkoutBody(planId)))[0])
    const asked = await changePrice(auth, planId, { amount: 1800, applies_to: 'existing_too' })
    assert.equal(asked.statusCode, 202, asked.body)
    // Since the request, one subscription's quantity grew past what one renewal may charge at the new price.
    const [bad] = [...subscriptions].sort((a, b) => (a.id < b.id ? -1 : 1)).slice(2)
    await t.db.updateTable('subscriptions').set({ quantity: 60_000_000 }).where('id', '=', bad.id).execute()
    // The service itself, with pages of 2: three pages, the last one short.
    const paged = createPriceChangeService({ db: t.db, clock: t.services.clock, writes: t.services.modules.subscriptions.service.writes, onPlanChanged: () => {}, pageSize: 2 })
    assert.equal(await paged.runPages(asked.json.id, 1), 'more')
    assert.deepEqual((await get(auth, `/price-changes/${asked.json.id}`)).json.subscriptions, { total: 5, scheduled: 2, unchanged: 0, failed: 0 })
    assert.equal(await paged.runPages(asked.json.id), 'done')
    const done = (await get(auth, `/price-changes/${asked.json.id}`)).json
    assert.equal(done.status, 'completed')
    assert.deepEqual(done.subscriptions, { total: 5, scheduled: 4, unchanged: 0, failed: 1 })
    await drain()
    for (const subscription of subscriptions) {
      const events = await eventsOf(auth, subscription.id, 'subscription.price_change_scheduled')
      assert.equal(events.length, subscription.id === bad.id ? 0 : 1, `${subscription.id}: its event once, none for the row that failed`)
      assert.equal((await getSubscription(t.app, auth, subscription.id)).scheduled_price === null, subscription.id === bad.id)
    }
    // Asked again, the largest quantity on the plan is refused up front, naming the amount.
    assertProblem(await changePrice(auth, planId, { amount: 1800, applies_to: 'existing_too' }), 400, 'amount_too_large', { path: '/body/amount' })
    // Once that row is fixed: the four already moving to the price are unchanged (nobody is told twice), the fifth gets it.
    await t.db.updateTable('subscriptions').set({ quantity: 1 }).where('id', '=', bad.id).execute()
    const again = await changePrice(auth, planId, { amount: 1800, applies_to: 'existing_too' })
    assert.equal(again.statusCode, 202, again.body)
    await drain()
    assert.deepEqual((await get(auth, `/price-changes/${again.json.id}`)).json.subscriptions, { total: 5, scheduled: 1, unchanged: 4, failed: 0 })
    assert.equal((await eventsOf(auth, bad.id, 'subscription.price_change_scheduled')).length, 1)
  })

  test("notice below the store's price_change_notice_days is 400 naming the field; nothing changes", async () => {
    const { auth, planId } = await shop()
    const [subscription] = await checkout(t.app, auth, checkoutBody(planId))
    const short = await changePrice(auth, planId, { amount: 1800, applies_to: 'existing_too', notice_days: 29 })
    assertProblem(short, 400, 'validation_failed')
    assert.deepEqual(short.json.errors.map((error: any) => error.path), ['/body/notice_days'])
    assert.match(short.json.errors[0].message, /at least the store's price_change_notice_days \(30\)/)

    const raised = await call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: auth, payload: { price_change_notice_days: 45 } })
    assert.equal(raised.statusCode, 200, raised.body)
    assert.equal(raised.json.price_change_notice_days, 45)
    assertProblem(await changePrice(auth, planId, { amount: 1800, applies_to: 'existing_too', notice_days: 40 }), 400, 'validation_failed')
    assert.equal((await get(auth, `/plans/${planId}`)).json.amount, 1500, 'the plan keeps its price')
    assert.equal((await getSubscription(t.app, auth, subscription.id)).scheduled_price, null)

    // Left out, the notice is the store's own.
    const defaulted = await changePrice(auth, planId, { amount: 1800, applies_to: 'existing_too' })
    assert.equal(defaulted.statusCode, 202, defaulted.body)
    assert.equal(defaulted.json.notice_days, 45)
    await drain()
    // Jan 5 + 45 days is Feb 19: the Mar 5 renewal.
    assert.deepEqual((await getSubscription(t.app, auth, subscription.id)).scheduled_price, { amount: 1800, currency: 'USD', effective_at: MAR_5 })
  })

  test('an archived plan is 409 invalid_state; an unknown plan 404', async () => {
    const { auth, planId } = await shop()
    assert.equal((await call(t.app, { method: 'PATCH', url: `/api/v1/admin/plans/${planId}`, headers: auth, payload: { active: false } })).statusCode, 200)
    assertProblem(await changePrice(auth, planId, { amount: 1800, applies_to: 'new_subscriptions' }), 409, 'invalid_state')
    assertProblem(await changePrice(auth, 'plan_01JD2Y5T1P8Q0W9KZ3M6N4R7BC', { amount: 1800, applies_to: 'new_subscriptions' }), 404, 'not_found')
    assertProblem(await get(auth, '/price-changes/pc_01JD2Y5T1P8Q0W9KZ3M6N4R7BC'), 404, 'not_found')
  })

  test('applies_to new_subscriptions leaves existing ones alone: they renew at their price, new checkouts pay the new one', async () => {
    const { auth, planId } = await shop()
    const [existing] = await checkout(t.app, auth, checkoutBody(planId))
    const answered = await changePrice(auth, planId, { amount: 1800, applies_to: 'new_subscriptions' })
    assert.equal(answered.statusCode, 200, answered.body)
    assert.equal(answered.json.status, 'completed')
    assert.deepEqual(answered.json.subscriptions, { total: 0, scheduled: 0, unchanged: 0, failed: 0 })
    await drain()
    assert.equal((await getSubscription(t.app, auth, existing.id)).scheduled_price, null)
    const [fresh] = await checkout(t.app, auth, checkoutBody(planId))
    assert.equal(fresh.amount, 1800)
    await advance(auth, MAR_5)
    assert.deepEqual(await chargeAmounts(auth, existing.id), [1500, 1500])
    assert.deepEqual(await chargeAmounts(auth, fresh.id), [1800, 1800])
    assert.deepEqual(await eventsOf(auth, existing.id, 'subscription.price_change_scheduled'), [])
  })

  test("one subscription's price with notice (the bulk change_price's row): the same rules, its event and email", async () => {
    const { auth, planId, store: created } = await shop()
    // The row as it stands now, its test clock set.
    const store = await t.db.selectFrom('stores').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow()
    const email = nextEmail('single')
    const [subscription] = await checkout(t.app, auth, checkoutBody(planId, { email }))
    const service = t.services.modules.priceChanges.service
    await assert.rejects(service.changeSubscriptionPrice(store, subscription.id, TEST_ADMIN, { amount: 1900, notice_days: 10 }), /at least the store's price_change_notice_days \(30\)/)
    const view = await service.changeSubscriptionPrice(store, subscription.id, TEST_ADMIN, { amount: 1900 })
    // Jan 5 + 30 days is Feb 4: the Feb 5 renewal is the first at or after it.
    assert.deepEqual(view.scheduled_price, { amount: 1900, currency: 'USD', effective_at: FEB_5 })
    assert.equal((await get(auth, `/plans/${planId}`)).json.amount, 1500, 'the plan keeps its price')
    await drain()
    assert.match(String(noticeTo(email)[0]?.parsed.text), /from \$15\.00 to \$19\.00/)
    assert.equal((await service.changeSubscriptionPrice(store, subscription.id, TEST_ADMIN, { amount: 1900 })).version, view.version, 'asked again: nothing changes')
    assert.equal((await eventsOf(auth, subscription.id, 'subscription.price_change_scheduled')).length, 1)
  })

  test('a subscription moved to another plan drops its scheduled price and renews at the new plan\'s', async () => {
    const { auth, planId, otherPlanId } = await shop()
    const [subscription] = await checkout(t.app, auth, checkoutBody(planId))
    assert.equal((await changePrice(auth, planId, { amount: 1800, applies_to: 'existing_too' })).statusCode, 202)
    await drain()
    assert.notEqual((await getSubscription(t.app, auth, subscription.id)).scheduled_price, null)
    const swapped = await act(t.app, auth, subscription.id, 'swap', { plan_id: otherPlanId })
    assert.equal(swapped.statusCode, 200, swapped.body)
    assert.equal(swapped.json.scheduled_price, null)
    await advance(auth, MAR_5)
    assert.deepEqual(await chargeAmounts(auth, subscription.id), [1700, 1700])
    assert.deepEqual(await eventsOf(auth, subscription.id, 'subscription.price_changed'), [])
  })
})

describe('migration 0033 down', () => {
  test('refuses while a subscriber was told of a price still to come; goes down and up again once none is', async () => {
    const handle = await createTestDatabase()
    try {
      const { db } = handle
      const shop = await createStoreWithKey(db)
      const now = new Date(START)
      await db.insertInto('products').values({ id: 'prod_01JD2Y5T1P8Q0W9KZ3M6N4R7BC', store_id: shop.store.id, platform_product_id: 'p-down', name: 'Beans', description: null, one_time_amount: null, one_time_currency: null, active: true, created_at: now, updated_at: now }).execute()
      await db.insertInto('plans').values({ id: 'plan_01JD2Y5T1P8Q0W9KZ3M6N4R7BC', store_id: shop.store.id, product_id: 'prod_01JD2Y5T1P8Q0W9KZ3M6N4R7BC', name: 'Monthly', amount: 1500, currency: 'USD', interval: 'month', interval_count: 1, trial_days: 0, prepaid_cycles: null, b2b: false, active: true, created_at: now, updated_at: now }).execute()
      const subscriber = await db.insertInto('subscribers').values({ id: 'cus_01JD2Y5T1P8Q0W9KZ3M6N4R7BC', store_id: shop.store.id, email: 'down@example.com', name: null, shipping_address: 'null', platform_customer_id: null, created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow()
      await db.insertInto('subscriptions').values({
        id: 'sub_01JD2Y5T1P8Q0W9KZ3M6N4R7BC', store_id: shop.store.id, subscriber_id: subscriber.id, plan_id: 'plan_01JD2Y5T1P8Q0W9KZ3M6N4R7BC', product_id: 'prod_01JD2Y5T1P8Q0W9KZ3M6N4R7BC',
        platform_order_id: 'order-down', status: 'active', quantity: 1, amount: 1500, currency: 'USD', interval: 'month', interval_count: 1, payment_instrument_id: 'instr_1',
        shipping_address: 'null', start_at: now, billing_anchor_at: now, next_charge_at: new Date(FEB_5), gift: 'null', prepaid_cycles_total: null, prepaid_cycles_remaining: null,
        latest_charge_id: null, pending_charge_id: null, paused_at: null, resume_at: null, cancelled_at: null, cancellation_reason: null, cancellation_reason_code: null,
        current_period_start: now, current_period_end: new Date(FEB_5), billing_issue: null, platform_customer_id: null, billing_address: 'null', platform_variant_id: null,
        payment_instrument_brand: null, payment_instrument_last4: null, payment_instrument_expiry_month: null, payment_instrument_expiry_year: null, discount_id: null, discount: 'null', discount_cycles_remaining: null,
        past_due_at: null, reminded_for: null, dunning_started_at: null, unpaid_period_start: null, out_of_stock_since: null,
        scheduled_amount: 1800, scheduled_amount_from: new Date(MAR_5), created_at: now, updated_at: now,
      } as never).execute()
      await assert.rejects(priceChangesMigration.down(db as never), /scheduled price change/)
      await db.updateTable('subscriptions').set({ status: 'cancelled', cancelled_at: now, next_charge_at: null }).execute()
      await priceChangesMigration.down(db as never)
      await priceChangesMigration.up(db as never)
      assert.equal((await db.selectFrom('stores').select('price_change_notice_days').where('id', '=', shop.store.id).executeTakeFirstOrThrow()).price_change_notice_days, 30)
    } finally {
      await handle.close()
    }
  })
})
