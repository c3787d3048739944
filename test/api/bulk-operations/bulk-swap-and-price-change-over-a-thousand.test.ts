import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { COMMAND_LINE } from '../../../src/http/actors.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { nativeRows } from '../imports/native-rows.ts'
import { act } from '../subscriptions/fixtures.ts'

/**
 * Bulk operations (CONTRACT section 16, docs/contract.md Bulk operations): a dry run counts and shows
 * a sample; the operation fixes its targets, the worker runs the single action on each a page at a
 * time, progress is visible meanwhile, and a subscription the single action refuses (409) is recorded
 * with its code while every other one is done.
 */
const COUNT = 1_000
const DAY = 86_400_000

describe(`bulk operations over ${COUNT} subscriptions`, () => {
  let t: TestApp
  let shop: StoreWithKey
  let planA: string
  let planB: string
  let cancelled: string
  const start = new Date(Date.now() + 3 * DAY)

  const post = (payload: Record<string, unknown>) => call(t.app, { method: 'POST', url: '/api/v1/admin/bulk-operations', headers: shop.auth, payload })
  const get = (url: string) => call(t.app, { method: 'GET', url: `/api/v1/admin${url}`, headers: shop.auth })
  const bulk = () => t.services.modules.bulkOperations.service

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, shop.auth)
    planA = (await createPlan(t.app, shop.auth, product.id, { amount: 1500 })).id
    planB = (await createPlan(t.app, shop.auth, product.id, { name: 'Monthly, bigger bag', amount: 1800 })).id
    // 1,000 subscriptions at once, through the import.
    const report = await t.services.modules.imports.service.run(shop.store, nativeRows({ count: COUNT, planId: planA, nextChargeAt: start }), { format: 'native', dryRun: false, actor: COMMAND_LINE, bytesTotal: null })
    assert.equal(report.created, COUNT)
    const some = (await get(`/subscriptions?plan_id=${planA}&limit=1`)).json.data
    cancelled = some[0].id
    assert.equal((await act(t.app, shop.auth, cancelled, 'cancel')).statusCode, 200)
  })
  after(() => t?.close())

  test('a dry run counts the targets and shows a sample; nothing changes', async () => {
    const dry = await post({ action: 'swap_plan', filter: { plan_id: planA }, params: { plan_id: planB }, dry_run: true })
    assert.equal(dry.statusCode, 200, dry.body)
    assert.equal(dry.json.total, COUNT)
    assert.equal(dry.json.sample.length, 10)
    assert.ok(dry.json.sample.every((s: any) => s.plan_id === planA && s.email.endsWith('@example.com')))
    assert.equal((await get('/bulk-operations')).json.data.length, 0, 'a dry run leaves no operation')
    const bad = await post({ action: 'swap_plan', filter: { plan_id: planA }, params: {} })
    assert.equal(bad.statusCode, 400, 'a swap without its plan is refused for the whole operation')
    const both = await post({ action: 'pause', filter: { plan_id: planA }, subscription_ids: [cancelled] })
    assert.equal(both.statusCode, 400)
  })

  test('a swap runs on every target a page at a time; the refused one is recorded with its 409', async () => {
    const made = await post({ action: 'swap_plan', filter: { plan_id: planA }, params: { plan_id: planB } })
    assert.equal(made.statusCode, 202, made.body)
    assert.deepEqual([made.json.status, made.json.total, made.json.done], ['running', COUNT, 0])
    const id = made.json.id
    assert.equal(await bulk().runStep(id), 'more')
    const partway = (await get(`/bulk-operations/${id}`)).json
    assert.deepEqual([partway.status, partway.total, partway.done], ['running', COUNT, 100], 'progress is visible meanwhile')
    let steps = 1
    while ((await bulk().runStep(id)) === 'more') steps++
    assert.equal(steps + 1, COUNT / 100, 'ten pages of 100')
    const done = (await get(`/bulk-operations/${id}`)).json
    assert.deepEqual([done.status, done.done, done.succeeded, done.failed], ['completed', COUNT, COUNT - 1, 1])
    const failed = (await get(`/bulk-operations/${id}/results?status=failed`)).json.data
    assert.deepEqual(failed.map((r: any) => [r.subscription_id, r.code]), [[cancelled, 'invalid_state']])
    const { n } = await t.db.selectFrom('subscriptions').select((eb) => eb.fn.countAll<number>().as('n')).where('store_id', '=', shop.store.id).where('plan_id', '=', planB).executeTakeFirstOrThrow()
    assert.equal(Number(n), COUNT - 1)
    const swapped = await t.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('store_id', '=', shop.store.id).where('event_type', '=', 'subscription.swapped').executeTakeFirstOrThrow()
    assert.equal(Number(swapped.n), COUNT - 1, 'the same events as the single action, once each')
    assert.equal(await bulk().runStep(id), 'done', 'a finished operation does nothing more')
  })

  test('a price change with notice runs on every target; the cancelled one is refused (409)', async () => {
    const made = await post({ action: 'change_price', filter: {}, params: { amount: 1900, notice_days: 30 } })
    assert.equal(made.statusCode, 202, made.body)
    assert.equal(made.json.total, COUNT)
    while ((await bulk().runStep(made.json.id)) === 'more');
    const done = (await get(`/bulk-operations/${made.json.id}`)).json
    assert.deepEqual([done.status, done.succeeded, done.failed], ['completed', COUNT - 1, 1])
    assert.deepEqual((await get(`/bulk-operations/${made.json.id}/results?status=failed`)).json.data.map((r: any) => [r.subscription_id, r.code]), [[cancelled, 'invalid_state']])
    const scheduled = await t.db.selectFrom('subscriptions').select((eb) => eb.fn.countAll<number>().as('n')).where('store_id', '=', shop.store.id).where('scheduled_amount', '=', 1900).executeTakeFirstOrThrow()
    assert.equal(Number(scheduled.n), COUNT - 1)
    const notices = await t.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('store_id', '=', shop.store.id).where('event_type', '=', 'subscription.price_change_scheduled').executeTakeFirstOrThrow()
    assert.equal(Number(notices.n), COUNT - 1, 'one notice each (its email queued with it)')
    const tooSoon = await post({ action: 'change_price', filter: {}, params: { amount: 2000, notice_days: 1 } })
    assert.equal(tooSoon.statusCode, 400, "less notice than the store's setting is refused for the whole operation")
  })

  test("a holiday's renewals move a day later, and only those", async () => {
    // The first 60 renewals fall within an hour of `start`: call that hour the holiday.
    const from = new Date(start.getTime() - 1)
    const to = new Date(start.getTime() + 60 * 60_000)
    const before = await t.db.selectFrom('subscriptions').select(['id', 'next_charge_at']).where('store_id', '=', shop.store.id).where('status', '=', 'active').execute()
    const made = await post({ action: 'reschedule', filter: { status: 'active', next_charge_from: from.toISOString(), next_charge_to: to.toISOString() }, params: { shift_days: 1 } })
    assert.equal(made.statusCode, 202, made.body)
    assert.equal(made.json.total, 60)
    while ((await bulk().runStep(made.json.id)) === 'more');
    const after = new Map((await t.db.selectFrom('subscriptions').select(['id', 'next_charge_at']).where('store_id', '=', shop.store.id).execute()).map((s) => [s.id, s.next_charge_at?.getTime() ?? null]))
    for (const s of before) {
      const was = s.next_charge_at!.getTime()
      assert.equal(after.get(s.id), was >= from.getTime() && was < to.getTime() ? was + DAY : was)
    }
  })

  test('a reschedule moves only the renewal it chose: one renewed meanwhile, or a run repeated after a crash, is refused', async () => {
    const [a, b] = (await get(`/subscriptions?plan_id=${planB}&status=active&limit=2`)).json.data
    const target = new Date(start.getTime() + 5 * DAY).toISOString()
    const absolute = (await post({ action: 'reschedule', subscription_ids: [a.id], params: { next_charge_at: target } })).json
    const shifted = (await post({ action: 'reschedule', subscription_ids: [b.id], params: { shift_days: 2 } })).json
    // Before the worker reaches it, a's renewal is made (its next charge moves a period on, as a renewal's settlement does).
    const renewedTo = new Date(new Date(a.next_charge_at).getTime() + 30 * DAY)
    await t.db.updateTable('subscriptions').set({ next_charge_at: renewedTo }).where('id', '=', a.id).execute()
    while ((await bulk().runStep(absolute.id)) === 'more');
    const refused = (await get(`/bulk-operations/${absolute.id}/results`)).json.data
    assert.deepEqual(refused.map((r: any) => [r.status, r.code]), [['failed', 'invalid_state']], 'not moved onto the period just paid')
    assert.equal((await get(`/subscriptions/${a.id}`)).json.next_charge_at, renewedTo.toISOString())
    // b is moved once; its item set back to pending (a crash after the move, before its outcome) is refused, not moved again.
    while ((await bulk().runStep(shifted.id)) === 'more');
    const moved = new Date(new Date(b.next_charge_at).getTime() + 2 * DAY).toISOString()
    assert.equal((await get(`/subscriptions/${b.id}`)).json.next_charge_at, moved)
    await t.db.updateTable('bulk_operation_items').set({ status: 'pending' }).where('operation_id', '=', shifted.id).execute()
    await t.db.updateTable('bulk_operations').set({ status: 'running', finished_at: null }).where('id', '=', shifted.id).execute()
    while ((await bulk().runStep(shifted.id)) === 'more');
    assert.equal((await get(`/subscriptions/${b.id}`)).json.next_charge_at, moved, 'moved once')
    assert.deepEqual((await get(`/bulk-operations/${shifted.id}/results`)).json.data.map((r: any) => r.code), ['invalid_state'])
  })
})
