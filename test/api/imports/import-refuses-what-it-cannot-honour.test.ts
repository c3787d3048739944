import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { DateTime } from 'luxon'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'

/**
 * What an import refuses rather than guesses (docs/contract.md, Import), each case one a review found
 * accepted before: a renewal already due (a second charge at cutover), a prepaid block priced as one
 * delivery, a card number in the header, two columns of one name, an empty file, text that was not
 * UTF-8, two customers behind one email in one file, and the 31st of a month the next charge lacks.
 */
describe('an import refuses what it cannot honour', () => {
  let t: TestApp
  let shop: StoreWithKey
  const today = DateTime.utc().startOf('day')
  const HEADER = 'subscription_id,email,external_product_id,recurring_price,quantity,charge_interval_frequency,charge_interval_unit_type,shipping_interval_frequency,shipping_interval_unit_type,next_charge_date,processor_payment_method_token,charge_on_day_of_month,last_success_charge'
  const row = (id: string, cells: Partial<Record<string, string>> = {}) => {
    const values: Record<string, string> = { subscription_id: id, email: `${id}@example.com`, external_product_id: '4242', recurring_price: '12.50', quantity: '1', charge_interval_frequency: '1', charge_interval_unit_type: 'month', shipping_interval_frequency: '1', shipping_interval_unit_type: 'month', next_charge_date: today.plus({ days: 5 }).toISODate()!, processor_payment_method_token: 'tok_1', charge_on_day_of_month: '', last_success_charge: '', ...cells }
    return HEADER.split(',').map((c) => values[c] ?? '').join(',')
  }
  const upload = (body: string | Buffer, query = 'format=recharge', headers: Record<string, string> = {}) =>
    call(t.app, { method: 'POST', url: `/api/v1/admin/imports?${query}`, headers: { ...shop.auth, 'content-type': 'text/csv', ...headers }, payload: body })
  const subscription = (externalId: string) => t.db.selectFrom('subscriptions').selectAll().where('store_id', '=', shop.store.id).where('external_id', '=', externalId).executeTakeFirst()

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, shop.auth, { platform_product_id: '4242', name: 'Coffee beans' })
    await createPlan(t.app, shop.auth, product.id, { amount: 1500 })
    await createPlan(t.app, shop.auth, product.id, { name: 'Prepaid', amount: 1200, prepaid_cycles: 6 })
  })
  after(() => t?.close())

  test('a renewal due today or earlier is the old system\'s: refused in both formats', async () => {
    const recharge = await upload([HEADER, row('due-today', { next_charge_date: today.toISODate()! })].join('\n'))
    assert.deepEqual(recharge.json.errors.map((e: any) => [e.row, e.column, e.code]), [[2, 'next_charge_date', 'in_past']])
    const native = await upload('external_id,email,status,quantity,amount,currency,interval,interval_count,next_charge_at,platform_product_id,payment_instrument_id\nold-export,o@example.com,active,1,1400,USD,month,1,' + today.minus({ days: 30 }).toISO() + ',4242,tok_1', 'format=native')
    assert.deepEqual(native.json.errors.map((e: any) => [e.row, e.column, e.code]), [[2, 'next_charge_at', 'in_past']])
    assert.equal(native.json.created, 0)
  })

  test('a prepaid row charges its block: one delivery\'s price times the deliveries', async () => {
    const last = today.minus({ months: 1 }).set({ day: Math.min(today.minus({ months: 1 }).day, 28) })
    const report = await upload([HEADER, row('prepaid-6', { charge_interval_frequency: '6', last_success_charge: last.toISODate()!, next_charge_date: last.plus({ months: 6 }).toISODate()! })].join('\n'))
    assert.equal(report.json.created, 1, JSON.stringify(report.json.errors))
    const s = (await subscription('prepaid-6'))!
    assert.deepEqual([s.amount, s.prepaid_cycles_total], [7500, 6], '6 deliveries at 12.50 charge 75.00')
  })

  test('the 31st kept through a month that lacks it', async () => {
    // The next charge on the last day of a short month, the file saying "the 31st".
    let next = today.plus({ months: 1 }).endOf('month').startOf('day')
    while (next.day === 31) next = next.plus({ months: 1 }).endOf('month').startOf('day')
    const report = await upload([HEADER, row('day-31', { next_charge_date: next.toISODate()!, charge_on_day_of_month: '31' })].join('\n'))
    assert.equal(report.json.created, 1, JSON.stringify(report.json.errors))
    const s = (await subscription('day-31'))!
    assert.equal(s.next_charge_at!.toISOString(), next.toJSDate().toISOString())
    assert.equal(DateTime.fromJSDate(s.billing_anchor_at!, { zone: 'utc' }).day, 31, 'anchored on a 31st, so the month after comes back to it')
  })

  test('a card number in the header is never kept or shown; two columns of one name and an empty file are refused', async () => {
    const card = await upload([`${HEADER},4111111111111111`, `${row('with-card-header')},x`].join('\n'))
    assert.equal(card.statusCode, 201)
    assert.ok(!card.body.includes('4111111111111111'), 'not in the answer')
    const kept = await t.db.selectFrom('imports').select(['ignored_columns', 'errors']).where('id', '=', card.json.id).executeTakeFirstOrThrow()
    assert.ok(!JSON.stringify(kept).includes('4111111111111111'), 'not in the database')
    const twice = await upload([`${HEADER},recurring_price`, `${row('twice')},1.00`].join('\n'))
    assert.equal(twice.statusCode, 400)
    assert.match(twice.body, /recurring_price more than once/)
    assert.equal(await subscription('twice'), undefined)
    const empty = await upload('')
    assert.equal(empty.statusCode, 400)
    assert.match(empty.body, /empty/)
  })

  test('text that was not UTF-8 is refused, not turned into another email', async () => {
    const bytes = Buffer.concat([Buffer.from(`${HEADER}\n`), Buffer.from(row('latin1', { email: 'caf\u00e9@example.com' }), 'latin1')])
    const report = await upload(bytes)
    assert.deepEqual(report.json.errors.map((e: any) => [e.column, e.code]), [['email', 'invalid_encoding']])
  })

  test('one email naming two customers in one file: the second row is refused, never re-pointed', async () => {
    const file = [
      'external_id,email,status,quantity,amount,currency,interval,interval_count,next_charge_at,platform_product_id,payment_instrument_id,platform_customer_id',
      `shared-1,shared@example.com,active,1,1500,USD,month,1,${today.plus({ days: 3 }).toISO()},4242,tok_1,11`,
      `shared-2,shared@example.com,active,1,1500,USD,month,1,${today.plus({ days: 3 }).toISO()},4242,tok_2,22`,
      `same-customer,other@example.com,active,1,1500,USD,month,1,${today.plus({ days: 3 }).toISO()},4242,tok_3,11`,
    ].join('\n')
    const report = await upload(file, 'format=native')
    assert.deepEqual(report.json.errors.map((e: any) => [e.row, e.code]), [[3, 'customer_conflict']])
    const first = (await subscription('shared-1'))!
    const third = (await subscription('same-customer'))!
    assert.equal(third.subscriber_id, first.subscriber_id, 'one subscriber per platform customer, as a checkout keeps')
  })

  test('a file announced over the limit is refused before it is read', async () => {
    const big = await upload('x', 'format=recharge', { 'content-length': String(3_000_000_000) }).catch((error: unknown) => error)
    assert.equal((big as any).statusCode, 413, JSON.stringify(big))
  })
})
