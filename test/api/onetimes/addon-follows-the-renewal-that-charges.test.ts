import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
import { storedEvents } from '../../helpers/subscriptions.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, checkout, checkoutBody } from '../subscriptions/fixtures.ts'

/**
 * A one-time add-on follows the renewal that is actually charged next, and says which one (issue 26:
 * "an add-on promised 'with the renewal of Mar 26' waits for the one after when that renewal is
 * skipped"). The engine already left an add-on pending through a skipped renewal and charged it with
 * the next one; what was wrong was the promise: the add-on named no renewal, and the pages put the
 * subscription's `next_charge_at` (the skipped renewal) beside it. Now each pending add-on carries
 * `renewal_at`, the renewal that will charge it as the upcoming preview finds it, in the API, in its
 * `onetime.created` event and in the portal's list; this file failed before (no `renewal_at`).
 *
 * A UTC test store whose clock starts at Tue 2027-01-05 12:00, a plan of 1,000 USD a month, a mug of 350.
 */
const START = '2027-01-05T12:00:00.000Z'
const FEB = '2027-02-05T12:00:00.000Z'
const MAR = '2027-03-05T12:00:00.000Z'
const APR = '2027-04-05T12:00:00.000Z'
const hourAfter = (at: string) => new Date(new Date(at).getTime() + 3_600_000).toISOString()

describe('a one-time add-on names and waits for the renewal that is actually charged', () => {
  let t: TestApp
  before(async () => {
    t = await buildTestApp()
  })
  after(() => t.close())

  async function shop(): Promise<StoreWithKey & { planId: string; mugId: string }> {
    const s = await createStoreWithKey(t.db, { timezone: 'UTC' })
    await t.db.updateTable('stores').set({ test_clock_now: new Date(START) }).where('id', '=', s.store.id).execute()
    const product = await createProduct(t.app, s.auth, { name: 'Coffee' })
    const plan = await createPlan(t.app, s.auth, product.id, { amount: 1000, currency: 'USD', interval: 'month' })
    const mug = await createProduct(t.app, s.auth, { name: 'Mug', one_time_price: { amount: 350, currency: 'USD' } })
    return { ...s, planId: plan.id, mugId: mug.id }
  }
  const post = (auth: Record<string, string>, url: string, payload: object = {}) => call(t.app, { method: 'POST', url, headers: auth, payload })
  const get = (auth: Record<string, string>, url: string) => call(t.app, { method: 'GET', url, headers: auth })
  const advance = async (auth: Record<string, string>, to: string) => {
    const response = await post(auth, '/api/v1/admin/test-clock/advance', { to })
    assert.equal(response.statusCode, 200, response.body)
  }
  const onetimes = async (auth: Record<string, string>, url: string) => {
    const response = await get(auth, url)
    assert.equal(response.statusCode, 200, response.body)
    return response.json.data as any[]
  }
  const charges = async (auth: Record<string, string>, subscriptionId: string) =>
    ((await get(auth, `/api/v1/admin/charges?subscription_id=${subscriptionId}&limit=100`)).json.data as any[]).reverse()

  test('added for Feb 5, then Feb 5 is skipped: it names Mar 5 (admin and portal), nothing is charged on Feb 5, and the Mar 5 charge carries it', async () => {
    const { auth, store, planId, mugId } = await shop()
    const [sub] = await checkout(t.app, auth, checkoutBody(planId))
    const added = await post(auth, `/api/v1/admin/subscriptions/${sub.id}/onetimes`, { product_id: mugId, quantity: 1 })
    assert.equal(added.statusCode, 201, added.body)
    assert.equal(added.json.renewal_at, FEB, 'added before the skip: the Feb 5 renewal charges it')
    assert.equal((await storedEvents(t.db, added.json.id))[0].data.renewal_at, FEB, 'the onetime.created event says so too')

    assert.equal((await act(t.app, auth, sub.id, 'skip')).statusCode, 200)
    const portal = await signInSubscriber(t.app, t.db, store.id, sub.subscriber_id)
    for (const [who, url, credential] of [
      ['admin', `/api/v1/admin/subscriptions/${sub.id}/onetimes`, auth],
      ['portal', `/api/v1/portal/subscriptions/${sub.id}/onetimes?status=pending`, portal.auth],
    ] as const) {
      const [row] = await onetimes(credential, url)
      assert.deepEqual([row.id, row.status, row.renewal_at], [added.json.id, 'pending', MAR], `${who}: the promise moves to the renewal that will charge it`)
    }
    // The same renewal the preview prices, with the add-on among its lines.
    const upcoming = (await get(auth, `/api/v1/admin/subscriptions/${sub.id}/upcoming`)).json
    assert.equal(upcoming.next_charge_at, MAR)
    assert.ok(upcoming.line_items.some((line: any) => line.onetime_id === added.json.id))

    await advance(auth, hourAfter(FEB))
    assert.deepEqual(await charges(auth, sub.id), [], 'the skipped renewal charges nothing')
    const [waiting] = await onetimes(auth, `/api/v1/admin/subscriptions/${sub.id}/onetimes`)
    assert.deepEqual([waiting.status, waiting.renewal_at], ['pending', MAR])

    await advance(auth, hourAfter(MAR))
    const made = await charges(auth, sub.id)
    assert.deepEqual(made.map((charge) => [charge.status, charge.created_at, charge.amount]), [['succeeded', MAR, 1350]])
    assert.deepEqual(made[0].line_items.map((line: any) => [line.type, line.onetime_id, line.amount]), [['subscription', null, 1000], ['onetime', added.json.id, 350]])
    const [charged] = await onetimes(auth, `/api/v1/admin/subscriptions/${sub.id}/onetimes`)
    assert.deepEqual([charged.status, charged.charge_id, charged.renewal_at], ['charged', made[0].id, null])

    await advance(auth, hourAfter(APR))
    assert.deepEqual((await charges(auth, sub.id)).map((charge) => charge.amount), [1350, 1000], 'charged once, then gone')
  })

  test('paused until Mar 5: an add-on names the resume (the renewal charged then); paused without a date: no renewal is named', async () => {
    const { auth, planId, mugId } = await shop()
    const [until, open] = await checkout(t.app, auth, checkoutBody([planId, planId]))
    assert.equal((await act(t.app, auth, until.id, 'pause', { resume_at: MAR })).statusCode, 200)
    assert.equal((await act(t.app, auth, open.id, 'pause', {})).statusCode, 200)
    const later = await post(auth, `/api/v1/admin/subscriptions/${until.id}/onetimes`, { product_id: mugId, quantity: 2 })
    const never = await post(auth, `/api/v1/admin/subscriptions/${open.id}/onetimes`, { product_id: mugId, quantity: 1 })
    assert.deepEqual([later.statusCode, later.json.renewal_at], [201, MAR])
    assert.deepEqual([never.statusCode, never.json.renewal_at], [201, null])

    await advance(auth, hourAfter(MAR))
    const made = await charges(auth, until.id)
    assert.deepEqual(made.map((charge) => [charge.created_at, charge.amount]), [[MAR, 1700]], 'charged at the resume with the add-on')
  })
})
