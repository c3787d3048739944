import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { fixedClock } from '../../../src/lib/clock.ts'
import { createTestRenewals } from '../../helpers/billing.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { checkout, checkoutBody, closeTestApp, getSubscription } from '../subscriptions/fixtures.ts'

const T0 = '2026-01-10T09:00:00.000Z'
const FEB10 = '2026-02-10T09:00:00.000Z'
const DAY = 86_400_000
const plus = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString()

describe('scratch review: bulk', () => {
  const clock = fixedClock(T0)
  let t: TestApp
  let shop: StoreWithKey
  let other: StoreWithKey
  let plan: string
  const post = (payload: Record<string, unknown>, s = shop) => call(t.app, { method: 'POST', url: '/api/v1/admin/bulk-operations', headers: s.auth, payload })
  const bulk = () => t.services.modules.bulkOperations.service
  const charges = async (sid: string) => (await t.db.selectFrom('charges').select(['id', 'status', 'amount', 'created_at']).where('subscription_id', '=', sid).execute())

  before(async () => {
    t = await buildTestApp({ clock })
    shop = await createStoreWithKey(t.db)
    other = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, shop.auth)
    plan = (await createPlan(t.app, shop.auth, product.id, { name: 'Monthly', amount: 1500, interval: 'month' })).id
    const p2 = await createProduct(t.app, other.auth)
    await createPlan(t.app, other.auth, p2.id, { name: 'Monthly', amount: 1500, interval: 'month' })
  })
  after(() => closeTestApp(t))

  test('reschedule to an absolute date after the renewal already ran: charged twice', async () => {
    clock.set(T0)
    const [s] = await checkout(t.app, shop.auth, checkoutBody(plan))
    assert.equal(s.next_charge_at, FEB10)
    // A merchant, on Feb 9, moves the Feb 10 renewals to Feb 11.
    clock.set(plus(FEB10, -DAY))
    const made = await post({ action: 'reschedule', subscription_ids: [s.id], params: { next_charge_at: plus(FEB10, DAY) } })
    assert.equal(made.statusCode, 202, made.body)
    // The worker is busy; the renewal engine runs first on Feb 10.
    clock.set(plus(FEB10, 60_000))
    const r = await createTestRenewals(t.db, clock).runDue({ storeId: shop.store.id })
    console.log('ABS renewals', r.renewals)
    await bulk().runStep(made.json.id)
    const after1 = (await getSubscription(t.app, shop.auth, s.id))
    console.log('ABS after bulk', after1.next_charge_at, after1.current_period_start, after1.current_period_end)
    clock.set(plus(FEB10, DAY + 60_000))
    const r2 = await createTestRenewals(t.db, clock).runDue({ storeId: shop.store.id })
    console.log('ABS second renewal pass', r2.renewals, JSON.stringify(await charges(s.id)))
  })

  test('shift_days re-run after a crash between action and outcome: shifted twice', async () => {
    clock.set(T0)
    const [s] = await checkout(t.app, shop.auth, checkoutBody(plan))
    const made = await post({ action: 'reschedule', subscription_ids: [s.id], params: { shift_days: 1 } })
    await bulk().runStep(made.json.id)
    // The crash window: the action committed, its outcome was not recorded.
    await t.db.updateTable('bulk_operation_items').set({ status: 'pending' }).where('operation_id', '=', made.json.id).execute()
    await t.db.updateTable('bulk_operations').set({ status: 'running' }).where('id', '=', made.json.id).execute()
    await bulk().runStep(made.json.id)
    const now = await getSubscription(t.app, shop.auth, s.id)
    const items = await t.db.selectFrom('bulk_operation_items').selectAll().where('operation_id', '=', made.json.id).execute()
    console.log('SHIFT twice', s.next_charge_at, '->', now.next_charge_at, JSON.stringify(items.map((i) => [i.status, i.code])))
  })

  test('subscription_ids of another store, dry-run vs real totals', async () => {
    clock.set(T0)
    const [mine] = await checkout(t.app, shop.auth, checkoutBody(plan))
    const theirsPlan = (await call(t.app, { method: 'GET', url: '/api/v1/admin/plans?limit=1', headers: other.auth })).json.data[0].id
    const [theirs] = await checkout(t.app, other.auth, checkoutBody(theirsPlan))
    const dry = await post({ action: 'pause', subscription_ids: [mine.id, theirs.id], dry_run: true })
    const real = await post({ action: 'pause', subscription_ids: [mine.id, theirs.id] })
    await bulk().runStep(real.json.id)
    const theirsNow = await getSubscription(t.app, other.auth, theirs.id)
    console.log('CROSS dry total', dry.json.total, 'real total', real.json.total, 'theirs status', theirsNow.status)
  })

  test('revoked key: operation still runs as it', async () => {
    clock.set(T0)
    const [s] = await checkout(t.app, shop.auth, checkoutBody(plan))
    const made = await post({ action: 'cancel', subscription_ids: [s.id] })
    const keys = (await call(t.app, { method: 'GET', url: '/api/v1/admin/api-keys', headers: shop.auth })).json
    console.log('KEYS', JSON.stringify(keys).slice(0, 300))
  })

  test('scopes: read_only and support keys', async () => {
    for (const scope of ['read_only', 'support']) {
      const k = await call(t.app, { method: 'POST', url: '/api/v1/admin/api-keys', headers: shop.auth, payload: { name: scope, scope } })
      const auth = { authorization: `Bearer ${k.json.key ?? k.json.secret ?? k.json.token}` }
      const b = await call(t.app, { method: 'POST', url: '/api/v1/admin/bulk-operations', headers: auth, payload: { action: 'pause', subscription_ids: ['sub_01M8JRGAKQWCJKNAJJ3H0X1E0A'], dry_run: true } })
      const i = await call(t.app, { method: 'POST', url: '/api/v1/admin/imports?format=native&dry_run=true', headers: { ...auth, 'content-type': 'text/csv' }, payload: 'a,b\n' })
      console.log('SCOPE', scope, k.statusCode, b.statusCode, i.statusCode)
    }
  })

  test('poison target: one subscription whose action throws a non-AppError', async () => {
    clock.set(T0)
    const [good] = await checkout(t.app, shop.auth, checkoutBody(plan))
    const cols = ['external_id','email','status','quantity','amount','currency','interval','interval_count','next_charge_at','billing_anchor_at','period_index','current_period_start','current_period_end','plan_id','payment_instrument_id']
    const csv = [cols.join(','), ['poison','p@example.com','active','1','1500','USD','month','1','2026-02-01T00:00:00Z','2001-01-01T00:00:00Z','99999','2030-01-01T00:00:00Z','2001-01-01T00:00:00Z',plan,'tok_1'].join(',')].join('\n')
    const imp = await call(t.app, { method: 'POST', url: '/api/v1/admin/imports?format=native', headers: { ...shop.auth, 'content-type': 'text/csv' }, payload: csv })
    console.log('POISON import', imp.json.created, JSON.stringify(imp.json.errors))
    const poison = (await t.db.selectFrom('subscriptions').select('id').where('external_id', '=', 'poison').executeTakeFirstOrThrow()).id
    for (const [action, params] of [['reschedule', { shift_days: 1 }], ['cancel', { at_period_end: true }], ['swap_plan', { plan_id: plan }], ['pause', {}], ['change_price', { amount: 2000 }]] as const) {
      const made = await post({ action, subscription_ids: [good.id, poison], params })
      let outcome = ''
      for (let i = 0; i < 3; i++) {
        try { outcome += (await bulk().runStep(made.json.id)) + ' ' } catch (e) { outcome += 'THREW:' + String(e).slice(0, 120) + ' ' }
      }
      const op = (await call(t.app, { method: 'GET', url: `/api/v1/admin/bulk-operations/${made.json.id}`, headers: shop.auth })).json
      const items = await t.db.selectFrom('bulk_operation_items').select(['subscription_id','status','code']).where('operation_id', '=', made.json.id).execute()
      console.log('POISON', action, outcome, op.status, op.done, '/', op.total, JSON.stringify(items.map((i) => [i.subscription_id === poison ? 'poison' : 'good', i.status, i.code])))
    }
  })

  test('filter matching nothing', async () => {
    const made = await post({ action: 'cancel', filter: { email: 'nobody@example.com' } })
    console.log('ZERO', made.statusCode, made.json.total, made.json.status)
    await bulk().runStep(made.json.id)
    console.log('ZERO after', (await call(t.app, { method: 'GET', url: `/api/v1/admin/bulk-operations/${made.json.id}`, headers: shop.auth })).json.status)
  })
})
