import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
import { assertProblem } from '../../helpers/problem.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, checkout, checkoutBody } from '../subscriptions/fixtures.ts'

/**
 * GET .../subscriptions/{id}/upcoming (docs/contract.md, Upcoming renewal): the next renewal as it
 * stands, priced by the renewal plan the engine charges with. Amounts are worked out by hand here;
 * the last tests take the preview, move the test clock past the renewal and compare it with the
 * charge the engine made. Each store's clock starts at 2027-01-05 12:00 UTC.
 */
const START = '2027-01-05T12:00:00.000Z'
const monthsLater = (months: number, from = START) => {
  const at = new Date(from)
  at.setUTCMonth(at.getUTCMonth() + months)
  return at.toISOString()
}

type Auth = Record<string, string>

describe('the upcoming renewal', () => {
  let t: TestApp
  before(async () => {
    t = await buildTestApp()
  })
  after(() => t.close())

  async function shop(plan: Record<string, unknown> = {}): Promise<StoreWithKey & { planId: string; productId: string }> {
    const s = await createStoreWithKey(t.db)
    await t.db.updateTable('stores').set({ test_clock_now: new Date(START) }).where('id', '=', s.store.id).execute()
    const product = await createProduct(t.app, s.auth)
    const created = await createPlan(t.app, s.auth, product.id, { amount: 1800, currency: 'USD', interval: 'month', ...plan })
    return { ...s, planId: created.id, productId: product.id }
  }
  const get = (auth: Auth, url: string) => call(t.app, { method: 'GET', url, headers: auth })
  const post = (auth: Auth, url: string, payload: unknown) => call(t.app, { method: 'POST', url, headers: auth, payload: payload as object })
  const upcoming = async (auth: Auth, id: string, audience: 'admin' | 'portal' = 'admin') => {
    const response = await get(auth, `/api/v1/${audience}/subscriptions/${id}/upcoming`)
    assert.equal(response.statusCode, 200, response.body)
    return response.json
  }
  const discount = async (auth: Auth, body: Record<string, unknown>) => {
    const response = await post(auth, '/api/v1/admin/discounts', body)
    assert.equal(response.statusCode, 201, response.body)
    return response.json
  }
  const addOn = async (auth: Auth, subscriptionId: string, amount: number, quantity: number) => {
    const product = await createProduct(t.app, auth, { name: `Add-on ${amount}`, one_time_price: { amount, currency: 'USD' } })
    const response = await post(auth, `/api/v1/admin/subscriptions/${subscriptionId}/onetimes`, { product_id: product.id, quantity })
    assert.equal(response.statusCode, 201, response.body)
    return response.json
  }
  const advance = async (auth: Auth, to: string) => {
    const response = await post(auth, '/api/v1/admin/test-clock/advance', { to })
    assert.equal(response.statusCode, 200, response.body)
  }
  const latestCharge = async (auth: Auth, subscriptionId: string) => (await get(auth, `/api/v1/admin/charges?subscription_id=${subscriptionId}&limit=1`)).json.data[0]

  test('plan x quantity, no discount: one line, the charge names and shipping and tax at 0', async () => {
    const { auth, planId, productId } = await shop()
    const [sub] = await checkout(t.app, auth, checkoutBody(planId, { items: [{ plan_id: planId, quantity: 3 }] }))
    const preview = await upcoming(auth, sub.id)
    assert.deepEqual(preview, {
      object: 'upcoming_renewal',
      subscription_id: sub.id,
      next_charge_at: monthsLater(1),
      period_start: monthsLater(1),
      period_end: monthsLater(2),
      currency: 'USD',
      line_items: [{ type: 'subscription', product_id: productId, onetime_id: null, quantity: 3, unit_amount: 1800, amount: 5400, discount_amount: 0 }],
      subtotal: 5400,
      discount_amount: 0,
      shipping_amount: 0,
      shipping_method: null,
      tax_amount: 0,
      amount: 5400,
    })
  })

  test('1,800 x 2 with 20% off and a 1,200 add-on: 3,600 - 720 + 1,200 = 4,080 (the add-on is not discounted)', async () => {
    const { auth, planId } = await shop()
    await discount(auth, { code: 'SAVE20', type: 'percentage', value: 20, duration: 'forever' })
    const [sub] = await checkout(t.app, auth, checkoutBody(planId, { items: [{ plan_id: planId, quantity: 2, discount_code: 'SAVE20' }] }))
    const mug = await addOn(auth, sub.id, 1200, 1)
    const preview = await upcoming(auth, sub.id)
    assert.deepEqual(
      preview.line_items.map((line: any) => [line.type, line.onetime_id, line.quantity, line.unit_amount, line.amount, line.discount_amount]),
      [['subscription', null, 2, 1800, 3600, 720], ['onetime', mug.id, 1, 1200, 1200, 0]],
    )
    assert.deepEqual([preview.subtotal, preview.discount_amount, preview.amount], [4800, 720, 4080])
  })

  test('a percentage rounds half up once per charge: 999 x 1 at 15% takes 150', async () => {
    const { auth, planId } = await shop({ amount: 999 })
    await discount(auth, { code: 'FIFTEEN', type: 'percentage', value: 15, duration: 'forever' })
    const [sub] = await checkout(t.app, auth, checkoutBody(planId, { items: [{ plan_id: planId, quantity: 1, discount_code: 'fifteen' }] }))
    const preview = await upcoming(auth, sub.id)
    assert.deepEqual([preview.subtotal, preview.discount_amount, preview.amount], [999, 150, 849])
  })

  test('a fixed amount is taken off the subscription line and capped at it; add-ons stay in full', async () => {
    const { auth, planId } = await shop({ amount: 400 })
    await discount(auth, { code: 'TENOFF', type: 'fixed_amount', value: 1000, currency: 'USD', duration: 'forever' })
    const [sub] = await checkout(t.app, auth, checkoutBody(planId, { items: [{ plan_id: planId, quantity: 2, discount_code: 'TENOFF' }] }))
    await addOn(auth, sub.id, 350, 2)
    const preview = await upcoming(auth, sub.id)
    // Line 800, capped discount 800 (not 1000), add-ons 700.
    assert.deepEqual([preview.subtotal, preview.discount_amount, preview.amount], [1500, 800, 700])
    assert.deepEqual(preview.line_items.map((line: any) => line.discount_amount), [800, 0])
  })

  test('a discount for one cycle shows on the next renewal only; the one after is full price', async () => {
    const { auth, planId } = await shop()
    await discount(auth, { code: 'ONCE5', type: 'fixed_amount', value: 500, currency: 'USD', duration: 'once' })
    const [sub] = await checkout(t.app, auth, checkoutBody(planId, { items: [{ plan_id: planId, quantity: 1, discount_code: 'ONCE5' }] }))
    assert.deepEqual([(await upcoming(auth, sub.id)).discount_amount, (await upcoming(auth, sub.id)).amount], [500, 1300])
    await advance(auth, monthsLater(1))
    const after = await upcoming(auth, sub.id)
    assert.equal(after.next_charge_at, monthsLater(2))
    assert.deepEqual([after.subtotal, after.discount_amount, after.amount], [1800, 0, 1800])
  })

  test('after a skip: the renewal after the skipped one, with the add-ons that wait for it', async () => {
    const { auth, planId } = await shop()
    const [sub] = await checkout(t.app, auth, checkoutBody(planId))
    await addOn(auth, sub.id, 1200, 1)
    assert.equal((await act(t.app, auth, sub.id, 'skip')).statusCode, 200)
    const preview = await upcoming(auth, sub.id)
    assert.equal(preview.next_charge_at, monthsLater(2))
    assert.equal(preview.period_start, monthsLater(2))
    assert.equal(preview.amount, 3000)
  })

  test('a pending subscription after a trial: the first charge, at activation', async () => {
    const { auth, planId } = await shop({ trial_days: 14 })
    const [sub] = await checkout(t.app, auth, checkoutBody(planId))
    assert.equal(sub.status, 'pending')
    const preview = await upcoming(auth, sub.id)
    assert.equal(preview.next_charge_at, '2027-01-19T12:00:00.000Z')
    assert.equal(preview.amount, 1800)
  })

  test('paused with a resume date: the charge after it resumes; paused without one: 409 invalid_state', async () => {
    const { auth, planId } = await shop()
    const [sub] = await checkout(t.app, auth, checkoutBody(planId))
    const resumeAt = monthsLater(3)
    assert.equal((await act(t.app, auth, sub.id, 'pause', { resume_at: resumeAt })).statusCode, 200)
    // The renewal due while paused is not charged: a new period starts at the resumption.
    assert.equal((await upcoming(auth, sub.id)).next_charge_at, resumeAt)
    const [other] = await checkout(t.app, auth, checkoutBody(planId))
    assert.equal((await act(t.app, auth, other.id, 'pause')).statusCode, 200)
    assertProblem(await get(auth, `/api/v1/admin/subscriptions/${other.id}/upcoming`), 409, 'invalid_state')
  })

  test('no next renewal: cancelled, cancelling at period end, past due: 409 invalid_state saying why', async () => {
    const { auth, planId } = await shop()
    const [cancelled, cancelling, pastDue] = await checkout(t.app, auth, checkoutBody([planId, planId, planId]))
    assert.equal((await act(t.app, auth, cancelled.id, 'cancel')).statusCode, 200)
    assert.equal((await act(t.app, auth, cancelling.id, 'cancel', { at_period_end: true })).statusCode, 200)
    await t.db.updateTable('subscriptions').set({ status: 'past_due', next_charge_at: null }).where('id', '=', pastDue.id).execute()
    for (const [sub, words] of [[cancelled, /cancelled/], [cancelling, /cancel at the end/], [pastDue, /past due/]] as const) {
      const response = await get(auth, `/api/v1/admin/subscriptions/${sub.id}/upcoming`)
      assertProblem(response, 409, 'invalid_state')
      assert.match(response.json.detail, words)
    }
  })

  test('the portal shows the signed-in subscriber their own; another subscriber\'s or store\'s is 404', async () => {
    const { auth, planId, store } = await shop()
    const [mine] = await checkout(t.app, auth, checkoutBody(planId, { items: [{ plan_id: planId, quantity: 2 }] }))
    const [theirs] = await checkout(t.app, auth, checkoutBody(planId))
    const portal = await signInSubscriber(t.app, t.db, store.id, mine.subscriber_id)
    assert.deepEqual(await upcoming(portal.auth, mine.id, 'portal'), await upcoming(auth, mine.id))
    assertProblem(await get(portal.auth, `/api/v1/portal/subscriptions/${theirs.id}/upcoming`), 404, 'not_found')
    const elsewhere = await shop()
    assertProblem(await get(elsewhere.auth, `/api/v1/admin/subscriptions/${mine.id}/upcoming`), 404, 'not_found')
    assertProblem(await get(auth, '/api/v1/admin/subscriptions/sub_nope/upcoming'), 404, 'not_found')
  })

  test('the preview taken just before equals the charge the renewal makes: lines, subtotal, discount, amount, period', async () => {
    const { auth, planId } = await shop()
    await discount(auth, { code: 'TWICE', type: 'percentage', value: 25, duration: 'repeating', duration_in_cycles: 2 })
    const [sub] = await checkout(t.app, auth, checkoutBody(planId, { items: [{ plan_id: planId, quantity: 3, discount_code: 'TWICE' }] }))
    await addOn(auth, sub.id, 990, 3)
    await addOn(auth, sub.id, 1201, 1)
    // Three renewals: discounted with add-ons, discounted, full price (the discount ended after two).
    const expected = [[5400 + 2970 + 1201, 1350], [5400, 1350], [5400, 0]]
    for (const [index, [subtotal, off]] of expected.entries()) {
      const preview = await upcoming(auth, sub.id)
      assert.deepEqual([preview.subtotal, preview.discount_amount], [subtotal, off], `renewal ${index + 1} by hand`)
      await advance(auth, preview.next_charge_at)
      const charge = await latestCharge(auth, sub.id)
      assert.equal(charge.status, 'succeeded')
      assert.deepEqual(
        { subtotal: charge.subtotal, discount_amount: charge.discount_amount, amount: charge.amount, currency: charge.currency, line_items: charge.line_items, period_start: charge.period_start, period_end: charge.period_end, created_at: charge.created_at },
        { subtotal: preview.subtotal, discount_amount: preview.discount_amount, amount: preview.amount, currency: preview.currency, line_items: preview.line_items, period_start: preview.period_start, period_end: preview.period_end, created_at: preview.next_charge_at },
        `renewal ${index + 1}: the charge is the preview`,
      )
    }
  })

  test('in dunning the preview is the next retry, priced again; it equals that retry', async () => {
    const { auth, planId } = await shop()
    const [sub] = await checkout(t.app, auth, checkoutBody(planId, { payment_instrument_id: 'instr_declined' }))
    await advance(auth, monthsLater(1))
    assert.equal((await latestCharge(auth, sub.id)).status, 'failed')
    await addOn(auth, sub.id, 500, 1)
    const preview = await upcoming(auth, sub.id)
    assert.equal(preview.period_start, monthsLater(1), 'the unpaid period')
    assert.equal(preview.amount, 2300)
    await advance(auth, preview.next_charge_at)
    const retry = await latestCharge(auth, sub.id)
    assert.equal(retry.attempt, 2)
    assert.deepEqual([retry.subtotal, retry.amount, retry.line_items, retry.created_at], [preview.subtotal, preview.amount, preview.line_items, preview.next_charge_at])
  })
})
