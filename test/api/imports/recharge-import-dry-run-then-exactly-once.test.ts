import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { DateTime } from 'luxon'
import { fixedClock } from '../../../src/lib/clock.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { startPlatformHarness, type PlatformHarness } from '../../helpers/platform-harness.ts'
import { call, type StoreWithKey } from '../../helpers/test-app.ts'
import { COFFEE, emailOf, ESPRESSO, rechargeFixture, TEA, TWINS, WHOLE_1KG, type FixtureRow } from './recharge-fixture.ts'

/**
 * Import from Recharge (CONTRACT section 16, docs/contract.md Import) on a store charging through
 * BigCommerce (the simulator): a 200-row file in Recharge's columns. The dry run names each bad row
 * and writes nothing; the real run creates exactly the valid rows, matched to the catalogue, the
 * platform's customers and their stored cards; the same file again changes nothing; and the imported
 * subscriptions renew on their dates only after `billing_enabled` is turned on, each once.
 */
describe('a Recharge file imports: dry run, then exactly the valid rows, once', () => {
  let h: PlatformHarness
  let shop: StoreWithKey
  let csv: string
  let rows: FixtureRow[]
  let today: DateTime
  const tokens = new Map<number, string>()
  const plans: Record<string, string> = {}

  const upload = (query: string, body = csv) =>
    call(h.t.app, { method: 'POST', url: `/api/v1/admin/imports?${query}`, headers: { ...shop.auth, 'content-type': 'text/csv' }, payload: body })
  const subscriptionCount = async () => Number((await h.t.db.selectFrom('subscriptions').select((eb) => eb.fn.countAll<number>().as('n')).where('store_id', '=', shop.store.id).executeTakeFirstOrThrow()).n)

  before(async () => {
    h = await startPlatformHarness()
    const hash = `imports${process.pid}`
    shop = await h.connectedStore(hash)
    today = DateTime.utc().startOf('day')
    h.sim.addProduct(hash, { id: COFFEE, name: 'Coffee beans', price: 12.5 })
    h.sim.addProduct(hash, { id: ESPRESSO, name: 'Espresso blend', price: 12.5, variants: [{ id: WHOLE_1KG, option_values: [{ id: 1, label: 'Whole', option_id: 1, option_display_name: 'Grind' }, { id: 2, label: '1 kg', option_id: 2, option_display_name: 'Size' }] }, { id: 1012, option_values: [{ id: 3, label: 'Ground', option_id: 1, option_display_name: 'Grind' }, { id: 2, label: '1 kg', option_id: 2, option_display_name: 'Size' }] }] })
    h.sim.addProduct(hash, { id: TEA, name: 'Tea leaves', price: 8 })
    for (let index = 0; index < 200; index++) {
      if (index === 190) continue
      const customer = h.sim.addCustomer(hash, { email: emailOf(index), instruments: index === 191 ? [] : [{}] })
      tokens.set(index, customer.instruments[0]?.token ?? '')
    }
    // One email, two customers: the import cannot tell whose cards to use.
    const twin = h.sim.addCustomer(hash, { email: TWINS, instruments: [{}] })
    h.sim.addCustomer(hash, { email: TWINS, instruments: [{}] })
    tokens.set(190, twin.instruments[0]!.token)

    const coffee = await createProduct(h.t.app, shop.auth, { platform_product_id: String(COFFEE), name: 'Coffee beans' })
    const tea = await createProduct(h.t.app, shop.auth, { platform_product_id: String(TEA), name: 'Tea leaves' })
    const espresso = await createProduct(h.t.app, shop.auth, { platform_product_id: String(ESPRESSO), name: 'Espresso blend' })
    plans.espresso = (await createPlan(h.t.app, shop.auth, espresso.id, { amount: 1400 })).id
    plans.monthly = (await createPlan(h.t.app, shop.auth, coffee.id, { amount: 1400 })).id
    plans.biweekly = (await createPlan(h.t.app, shop.auth, coffee.id, { amount: 700, interval: 'week', interval_count: 2 })).id
    plans.prepaid = (await createPlan(h.t.app, shop.auth, coffee.id, { amount: 1200, prepaid_cycles: 6 })).id
    plans.tea = (await createPlan(h.t.app, shop.auth, tea.id, { amount: 800 })).id
    ;({ csv, rows } = rechargeFixture(today, (index) => tokens.get(index) ?? ''))
    // Cutover: the old system is off and this one does not bill yet.
    const off = await call(h.t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: shop.auth, payload: { billing_enabled: false } })
    assert.equal(off.statusCode, 200, off.body)
  })
  after(() => h?.close())

  test('the dry run names each bad row (row, column, code) and writes nothing', async () => {
    const dry = await upload('format=recharge&dry_run=true')
    assert.equal(dry.statusCode, 201, dry.body)
    const report = dry.json
    assert.equal(report.status, 'completed')
    assert.equal(report.dry_run, true)
    assert.deepEqual([report.rows, report.created, report.skipped, report.failed], [200, 197, 0, 3])
    assert.deepEqual(
      report.errors.map((e: any) => [e.row, e.column, e.code]),
      [
        [192, 'email', 'ambiguous_customer'],
        [194, 'external_product_id', 'product_not_found'],
        [195, 'next_charge_date', 'invalid_date'],
      ],
    )
    assert.deepEqual(report.ignored_columns, ['recharge_internal_note'])
    assert.equal(await subscriptionCount(), 0, 'a dry run creates nothing')
    const notified = await h.t.db.selectFrom('notifications').select('id').where('store_id', '=', shop.store.id).execute()
    assert.equal(notified.length, 0, 'and emails nobody')
    const again = await call(h.t.app, { method: 'GET', url: `/api/v1/admin/imports/${report.id}`, headers: shop.auth })
    assert.deepEqual(again.json, report, 'the report is kept')
  })

  test('the real run creates exactly the valid rows, each as the file says; a second run changes nothing', async () => {
    const run = await upload('format=recharge')
    assert.equal(run.statusCode, 201, run.body)
    assert.deepEqual([run.json.status, run.json.rows, run.json.created, run.json.skipped, run.json.failed], ['completed', 200, 197, 0, 3])
    assert.equal(await subscriptionCount(), 197)

    const byExternal = new Map((await h.t.db.selectFrom('subscriptions').selectAll().where('store_id', '=', shop.store.id).execute()).map((s) => [s.external_id, s]))
    const monthly = byExternal.get('90000000')!
    assert.deepEqual([monthly.plan_id, monthly.amount, monthly.quantity, monthly.interval, monthly.interval_count, monthly.status], [plans.monthly, 1250, 1, 'month', 1, 'active'], 'its own price, not the plan\'s')
    assert.equal(monthly.next_charge_at!.toISOString(), today.plus({ days: 2 }).toJSDate().toISOString())
    assert.equal(monthly.payment_instrument_id, tokens.get(0))
    assert.equal(monthly.payment_instrument_last4, '4242')
    assert.ok(monthly.platform_customer_id, 'matched to the platform customer of that email')
    assert.equal(monthly.billing_issue, null)
    const biweekly = byExternal.get('90000140')!
    assert.deepEqual([biweekly.plan_id, biweekly.interval, biweekly.interval_count], [plans.biweekly, 'week', 2], 'by exact title')
    const prepaid = byExternal.get('90000160')!
    const prepaidRow = rows[160]!
    assert.deepEqual([prepaid.plan_id, prepaid.prepaid_cycles_total, prepaid.prepaid_cycles_remaining, prepaid.period_index], [plans.prepaid, 6, 3, 2], '3 of 6 shipped: 3 still to come')
    assert.equal(prepaid.next_charge_at!.toISOString(), DateTime.fromISO(prepaidRow.nextChargeDate, { zone: 'utc' }).toJSDate().toISOString())
    assert.equal(prepaid.current_period_end!.toISOString(), DateTime.fromISO(prepaidRow.cells.last_success_charge, { zone: 'utc' }).plus({ months: 3 }).toJSDate().toISOString(), 'the 4th shipment is next')
    const variant = byExternal.get('90000180')!
    assert.equal(variant.platform_variant_id, String(WHOLE_1KG), "the variant matched by title among the product's variants")
    const noCard = byExternal.get('90000191')!
    assert.equal(noCard.billing_issue?.code, 'payment_method_required')
    assert.equal(noCard.payment_instrument_id, '')
    for (const missing of ['90000190', '90000192', '90000193']) assert.equal(byExternal.has(missing), false)

    // Only the subscriber without a card is emailed: a link to add one.
    const mails = await h.t.db.selectFrom('notifications').select(['template', 'subscription_id']).where('store_id', '=', shop.store.id).execute()
    const jobs = await h.t.db.selectFrom('jobs').select('payload').where('kind', '=', 'notifications.send').execute()
    const queued = [...mails.map((m) => [m.template, m.subscription_id]), ...jobs.map((j) => [(j.payload as any).template, (j.payload as any).subscription_id])]
    assert.deepEqual(queued, [['payment_update_link', noCard.id]])
    const imported = await h.t.db.selectFrom('events').select('event_type').where('store_id', '=', shop.store.id).where('event_type', '=', 'subscription.imported').execute()
    assert.equal(imported.length, 197)

    const second = await upload('format=recharge')
    assert.deepEqual([second.json.created, second.json.skipped, second.json.failed], [0, 197, 3])
    assert.equal(await subscriptionCount(), 197, 'the same file again creates nothing')
  })

  test('the imported subscriptions renew on their dates only once billing is on, each once', async () => {
    const at = today.plus({ days: 12 }).toISO()!
    const drain = async () => {
      let claimed = 0
      for (let round = 0; round < 20; round++) {
        const counts = await h.engineAt(at, { concurrency: 8 }).runDue({ storeId: shop.store.id })
        if (counts.claimed === 0) break
        claimed += counts.claimed
      }
      return claimed
    }
    assert.equal(await drain(), 0, 'nothing is charged while billing is off')
    const on = await call(h.t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: shop.auth, payload: { billing_enabled: true } })
    assert.equal(on.statusCode, 200, on.body)
    await drain()
    // On a loaded machine a platform call can outlast the client's 2 s timeout: that charge's outcome is
    // unknown and the reconciler looks it up later (here its lease clock is an hour on), as the worker would.
    await h.engineAt(at, { leaseClock: fixedClock(today.plus({ days: 12, hours: 1 }).toISO()!) }).reconcile()
    const charges = await h.t.db.selectFrom('charges').select(['subscription_id', 'status', 'amount', 'failure_code', 'failure_message', 'review']).where('store_id', '=', shop.store.id).execute()
    const due = rows.filter((row) => !['prepaid', 'twins', 'unknown_product', 'bad_date', 'no_card'].includes(row.kind))
    assert.equal(charges.length, due.length, 'one charge per renewal due (not the prepaid blocks, not the one without a card)')
    assert.equal(new Set(charges.map((c) => c.subscription_id)).size, charges.length, 'each once')
    const statuses = charges.reduce<Record<string, number>>((n, c) => ({ ...n, [c.status]: (n[c.status] ?? 0) + 1 }), {})
    assert.deepEqual(statuses, { succeeded: due.length }, JSON.stringify(charges.filter((c) => c.status !== 'succeeded').slice(0, 3)))
    assert.equal(await drain(), 0, 'and nothing more at the same time')
    assert.deepEqual(h.sim.violations, [])
  })
})
