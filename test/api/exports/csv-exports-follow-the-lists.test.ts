import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createAdminKey, revokeAdminKey } from '../../../src/modules/stores/index.ts'
import { csvRecords, parseCsv } from '../../helpers/csv.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { checkoutViaApi } from '../../helpers/subscriptions.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'

/**
 * CSV exports (issue 27, docs/contract.md, Exports): GET /api/v1/admin/exports/{subscriptions,
 * charges, subscribers} answer every row their list's filters select as CSV, the subscriptions in
 * the `native` import format's columns in its order, text cells that a spreadsheet would run as a
 * formula defused, each store only its own rows, and the same credentials as the lists. Before,
 * every route here was 404.
 *
 * One store on New York time whose test clock stands at 03:00 UTC on 5 January 2027 (still the
 * 4th there): Ada (every field filled), Grace (paused), a subscriber whose details look like
 * formulas, and a declined card; a month later each active one has renewed. Another store has
 * its own Ada.
 */
const START = '2027-01-05T03:00:00.000Z'

/** The `native` format's columns as the brief fixed them: the importer reads exactly these, in this order. */
const NATIVE = [
  'id', 'external_id', 'status', 'email', 'name', 'platform_customer_id', 'plan_id', 'product_id', 'platform_product_id', 'product_name',
  'platform_variant_id', 'quantity', 'amount', 'currency', 'interval', 'interval_count', 'prepaid_cycles_total', 'prepaid_cycles_remaining',
  'current_period_start', 'current_period_end', 'next_charge_at', 'billing_anchor_at', 'period_index', 'paused_at', 'resume_at', 'skip_next',
  'cancel_at_period_end', 'payment_instrument_id', 'shipping_name', 'shipping_line1', 'shipping_line2', 'shipping_city', 'shipping_state',
  'shipping_postal_code', 'shipping_country', 'shipping_phone', 'billing_name', 'billing_line1', 'billing_line2', 'billing_city', 'billing_state',
  'billing_postal_code', 'billing_country', 'billing_phone', 'created_at',
]

type Shop = StoreWithKey & { productId: string; planId: string; prepaidPlanId: string }

describe('CSV exports', () => {
  let t: TestApp
  let shop: Shop
  let other: Shop
  let ada: any
  let grace: any
  let formulas: any
  let declined: any
  let otherAda: any

  async function newShop(): Promise<Shop> {
    const s = await createStoreWithKey(t.db, { timezone: 'America/New_York' })
    await t.db.updateTable('stores').set({ test_clock_now: new Date(START) }).where('id', '=', s.store.id).execute()
    const product = await createProduct(t.app, s.auth, { name: 'House Coffee', platform_product_id: '4242' })
    const plan = await createPlan(t.app, s.auth, product.id, { amount: 1800, currency: 'USD', interval: 'month' })
    const prepaid = await createPlan(t.app, s.auth, product.id, { name: 'Quarter', amount: 5000, currency: 'USD', interval: 'week', interval_count: 2, prepaid_cycles: 3 })
    return { ...s, productId: product.id, planId: plan.id, prepaidPlanId: prepaid.id }
  }
  let orders = 0
  const buy = async (s: Shop, body: Record<string, unknown>) => {
    orders += 1
    const [subscription] = await checkoutViaApi(t.app, s.auth, { platform_order_id: `export-${process.pid}-${orders}`, payment_instrument_id: 'instr_visa', items: [{ plan_id: s.planId, quantity: 1 }], ...body })
    return subscription
  }
  const get = (url: string, headers: Record<string, string> = shop.auth) => call(t.app, { method: 'GET', url, headers })
  /** An export that must answer 200, read as records by column. */
  async function exported(path: string, headers: Record<string, string> = shop.auth) {
    const response = await get(path, headers)
    assert.equal(response.statusCode, 200, response.body)
    return { response, ...csvRecords(response.body) }
  }
  const idsOf = (records: Record<string, string>[]) => records.map((record) => record.id)
  /** Every id the JSON list answers for the same filters (pages of 100). */
  async function listed(path: string, query: string): Promise<string[]> {
    const ids: string[] = []
    let cursor: string | null = null
    do {
      const response = await get(`/api/v1/admin/${path}?${query}&limit=100${cursor ? `&cursor=${cursor}` : ''}`)
      assert.equal(response.statusCode, 200, response.body)
      ids.push(...response.json.data.map((row: any) => row.id))
      cursor = response.json.next_cursor
    } while (cursor)
    return ids
  }

  before(async () => {
    t = await buildTestApp()
    shop = await newShop()
    other = await newShop()
    ada = await buy(shop, {
      email: 'ada@example.com',
      name: 'Ada Lovelace',
      platform_customer_id: '77',
      shipping_address: { name: 'Ada Lovelace', line1: '12 Analytical Way', line2: 'Flat 3, "Engine" House', city: 'Portland', state: 'OR', postal_code: '97201', country: 'US', phone: '5035550100' },
      billing_address: { name: 'A. Lovelace', line1: '1 Ledger Lane', city: 'Salem', state: 'OR', postal_code: '97301', country: 'US' },
      items: [{ plan_id: shop.planId, quantity: 2 }],
    })
    grace = await buy(shop, { email: 'grace@example.com', name: 'Grace Hopper', items: [{ plan_id: shop.prepaidPlanId, quantity: 1 }] })
    formulas = await buy(shop, {
      email: 'calc@example.com',
      name: '=HYPERLINK("http://evil.example","click")',
      shipping_address: { name: "'quoted already", line1: '+1 Main Street', line2: '-2', city: '@Town', state: '\tTab', postal_code: '\rCR', country: 'US', phone: '+44 20 7946 0000' },
    })
    declined = await buy(shop, { email: 'declined@example.com', name: 'Dee Clined', payment_instrument_id: 'instr_declined' })
    otherAda = await buy(other, { email: 'ada@example.com', name: 'Ada Lovelace' })
    const paused = await call(t.app, { method: 'POST', url: `/api/v1/admin/subscriptions/${grace.id}/pause`, headers: shop.auth, payload: {} })
    assert.equal(paused.statusCode, 200, paused.body)
    // A month on: Ada's and the formula subscriber's renewals succeed, the declined card's fails.
    const advanced = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to: '2027-02-06T03:00:00.000Z' } })
    assert.equal(advanced.statusCode, 200, advanced.body)
  })
  after(() => t.close())

  test('the subscriptions export is a CSV download named for the store and its date, its header the native columns in order', async () => {
    const { response, header } = await exported('/api/v1/admin/exports/subscriptions')
    assert.equal(response.headers['content-type'], 'text/csv; charset=utf-8')
    // The store's clock (moved to 6 February 03:00 UTC) in its zone: still the 5th in New York.
    assert.equal(response.headers['content-disposition'], `attachment; filename="subscriptions-${shop.store.store_hash}-2027-02-05.csv"`)
    assert.equal(response.headers['cache-control'], 'no-store')
    assert.deepEqual(header, NATIVE)
    assert.ok(response.body.startsWith(`${NATIVE.join(',')}\r\n`), 'the first line is the header, no byte-order mark')
  })

  test("every column of a subscription: the API's values, amounts in minor units, times RFC 3339 UTC, booleans true/false, null empty", async () => {
    const { records } = await exported('/api/v1/admin/exports/subscriptions')
    const row = records.find((record) => record.id === ada.id)!
    const view = (await get(`/api/v1/admin/subscriptions/${ada.id}`)).json
    const stored = await t.db.selectFrom('subscriptions').select(['billing_anchor_at', 'period_index']).where('id', '=', ada.id).executeTakeFirstOrThrow()
    assert.equal(view.status, 'active')
    assert.equal(stored.period_index, 1, 'renewed once')
    assert.deepEqual(row, {
      id: ada.id,
      external_id: '',
      status: 'active',
      email: 'ada@example.com',
      name: 'Ada Lovelace',
      platform_customer_id: '77',
      plan_id: shop.planId,
      product_id: shop.productId,
      platform_product_id: '4242',
      product_name: 'House Coffee',
      platform_variant_id: '',
      quantity: '2',
      amount: '1800',
      currency: 'USD',
      interval: 'month',
      interval_count: '1',
      prepaid_cycles_total: '',
      prepaid_cycles_remaining: '',
      current_period_start: view.current_period_start,
      current_period_end: view.current_period_end,
      next_charge_at: view.next_charge_at,
      billing_anchor_at: stored.billing_anchor_at!.toISOString(),
      period_index: '1',
      paused_at: '',
      resume_at: '',
      skip_next: 'false',
      cancel_at_period_end: 'false',
      payment_instrument_id: 'instr_visa',
      shipping_name: 'Ada Lovelace',
      shipping_line1: '12 Analytical Way',
      shipping_line2: 'Flat 3, "Engine" House',
      shipping_city: 'Portland',
      shipping_state: 'OR',
      shipping_postal_code: '97201',
      shipping_country: 'US',
      shipping_phone: '5035550100',
      billing_name: 'A. Lovelace',
      billing_line1: '1 Ledger Lane',
      billing_line2: '',
      billing_city: 'Salem',
      billing_state: 'OR',
      billing_postal_code: '97301',
      billing_country: 'US',
      billing_phone: '',
      created_at: START,
    })
    assert.equal(row.current_period_start, '2027-02-05T03:00:00.000Z')
    assert.equal(row.next_charge_at, '2027-03-05T03:00:00.000Z')

    const paused = records.find((record) => record.id === grace.id)!
    assert.equal(paused.status, 'paused')
    assert.match(paused.paused_at!, /^2027-01-05T03:00:00\.000Z$/)
    const graceView = (await get(`/api/v1/admin/subscriptions/${grace.id}`)).json
    assert.deepEqual(graceView.prepaid, { cycles_total: 3, cycles_remaining: 2 })
    assert.deepEqual([paused.interval, paused.interval_count, paused.prepaid_cycles_total, paused.prepaid_cycles_remaining, paused.amount], ['week', '2', '3', '2', '5000'])
    assert.deepEqual([paused.shipping_line1, paused.billing_line1], ['', ''], 'no address: empty cells')
  })

  test('a text cell starting with =, +, -, @, a tab or a CR gets a leading quote, and so does one starting with a quote; plain numbers stay numbers', async () => {
    const { response, records } = await exported('/api/v1/admin/exports/subscriptions?q=calc%40')
    assert.deepEqual(idsOf(records), [formulas.id])
    const [row] = records
    assert.equal(row!.name, `'=HYPERLINK("http://evil.example","click")`)
    assert.equal(row!.shipping_name, "''quoted already", 'reversible: drop one leading quote to read it back')
    assert.equal(row!.shipping_line1, "'+1 Main Street")
    assert.equal(row!.shipping_line2, '-2', 'a plain (negative) number stays a number')
    assert.equal(row!.shipping_city, "'@Town")
    assert.equal(row!.shipping_state, "'\tTab")
    assert.equal(row!.shipping_postal_code, "'\rCR")
    assert.equal(row!.shipping_phone, "'+44 20 7946 0000", 'not a plain number: it holds spaces')
    assert.ok(response.body.includes(`"'\rCR"`), 'a carriage return is quoted, never left bare between fields')
    // No cell of any export starts a formula.
    for (const path of ['subscriptions', 'charges', 'subscribers']) {
      const { body } = await get(`/api/v1/admin/exports/${path}`)
      for (const cell of parseCsv(body).flat()) assert.ok(!/^[=+@\t\r]/.test(cell) && !/^-(?!\d+(\.\d+)?$)/.test(cell), `${path}: ${JSON.stringify(cell)}`)
    }
  })

  test("the list's filters select the same rows, newest first: status, q, email, plan_id, subscriber_id, and none", async () => {
    const queries = ['', 'status=paused', 'status=active', 'q=lovelace', 'q=ADA%40', `q=${ada.id}`, 'email=Grace%40example.com', `plan_id=${shop.prepaidPlanId}`, `subscriber_id=${ada.subscriber_id}`, 'status=active&q=example.com', 'q=nobody']
    for (const query of queries) {
      const { records } = await exported(`/api/v1/admin/exports/subscriptions?${query}`)
      assert.deepEqual(idsOf(records), await listed('subscriptions', query), query)
    }
    assert.deepEqual(idsOf((await exported('/api/v1/admin/exports/subscriptions?status=paused')).records), [grace.id])
    assert.deepEqual(idsOf((await exported('/api/v1/admin/exports/subscriptions?q=lovelace')).records), [ada.id])
    assert.deepEqual(idsOf((await exported('/api/v1/admin/exports/subscriptions')).records), [declined.id, formulas.id, grace.id, ada.id])
    const none = await exported('/api/v1/admin/exports/subscriptions?q=nobody')
    assert.deepEqual([none.header, none.records], [NATIVE, []], 'nothing found: the header alone')
  })

  test('a filter the list refuses is refused the same way (400), and paging parameters are not filters', async () => {
    for (const query of ['status=sleeping', 'plan_id=nope', 'limit=10', 'cursor=abc', 'colour=red']) {
      const response = await get(`/api/v1/admin/exports/subscriptions?${query}`)
      assert.equal(response.statusCode, 400, `${query}: ${response.body}`)
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8')
      assert.equal(response.json.code, 'validation_failed')
    }
  })

  test("charges: the charge list's rows for the same filters, amounts in minor units, failure codes, times", async () => {
    const { response, header, records } = await exported('/api/v1/admin/exports/charges')
    assert.equal(response.headers['content-disposition'], `attachment; filename="charges-${shop.store.store_hash}-2027-02-05.csv"`)
    assert.deepEqual(header, ['id', 'subscription_id', 'attempt', 'status', 'amount', 'subtotal', 'discount_amount', 'shipping_amount', 'tax_amount', 'amount_refunded', 'refund_status', 'currency', 'payment_instrument_id', 'platform_order_id', 'failure_code', 'failure_message', 'next_retry_at', 'period_start', 'period_end', 'created_at', 'settled_at'])
    for (const query of ['', 'status=failed', 'status=succeeded', `subscription_id=${ada.id}`, `subscriber_id=${declined.subscriber_id}`]) {
      assert.deepEqual(idsOf((await exported(`/api/v1/admin/exports/charges?${query}`)).records), await listed('charges', query), query)
    }
    const paid = records.find((record) => record.subscription_id === ada.id)!
    const view = (await get(`/api/v1/admin/charges/${paid.id}`)).json
    assert.deepEqual(paid, {
      id: view.id,
      subscription_id: ada.id,
      attempt: '1',
      status: 'succeeded',
      amount: String(view.amount),
      subtotal: '3600',
      discount_amount: '0',
      shipping_amount: String(view.shipping_amount),
      tax_amount: String(view.tax_amount),
      amount_refunded: '0',
      refund_status: 'none',
      currency: 'USD',
      payment_instrument_id: 'instr_visa',
      platform_order_id: view.platform_order_id ?? '',
      failure_code: '',
      failure_message: '',
      next_retry_at: '',
      period_start: view.period_start,
      period_end: view.period_end,
      created_at: view.created_at,
      settled_at: view.settled_at,
    })
    const failed = records.filter((record) => record.subscription_id === declined.id)
    assert.ok(failed.length >= 1)
    assert.deepEqual([failed.at(-1)!.status, failed.at(-1)!.failure_code], ['failed', 'card_declined'])
  })

  test('subscribers: each once with their subscription count; email and q filter them', async () => {
    const { response, header, records } = await exported('/api/v1/admin/exports/subscribers')
    assert.equal(response.headers['content-disposition'], `attachment; filename="subscribers-${shop.store.store_hash}-2027-02-05.csv"`)
    assert.deepEqual(header, ['id', 'email', 'name', 'platform_customer_id', 'subscription_count', 'created_at'])
    assert.deepEqual(idsOf(records), [declined.subscriber_id, formulas.subscriber_id, grace.subscriber_id, ada.subscriber_id], 'newest first')
    assert.deepEqual(records.at(-1), { id: ada.subscriber_id, email: 'ada@example.com', name: 'Ada Lovelace', platform_customer_id: '77', subscription_count: '1', created_at: START })
    assert.deepEqual(idsOf((await exported('/api/v1/admin/exports/subscribers?q=HOPPER')).records), [grace.subscriber_id])
    assert.deepEqual(idsOf((await exported(`/api/v1/admin/exports/subscribers?q=${ada.subscriber_id}`)).records), [ada.subscriber_id])
    assert.deepEqual(idsOf((await exported('/api/v1/admin/exports/subscribers?email=ADA%40example.com')).records), [ada.subscriber_id])
    assert.deepEqual(idsOf((await exported('/api/v1/admin/exports/subscribers?q=%25')).records), [], '% is matched literally')
  })

  test("a store never sees another store's rows, whatever it filters by", async () => {
    const mine = await exported('/api/v1/admin/exports/subscriptions', other.auth)
    assert.deepEqual(idsOf(mine.records), [otherAda.id])
    assert.deepEqual(idsOf((await exported(`/api/v1/admin/exports/subscriptions?subscriber_id=${ada.subscriber_id}`, other.auth)).records), [])
    assert.deepEqual(idsOf((await exported(`/api/v1/admin/exports/subscriptions?q=${ada.id}`, other.auth)).records), [])
    assert.deepEqual(idsOf((await exported('/api/v1/admin/exports/subscribers', other.auth)).records), [otherAda.subscriber_id])
    assert.deepEqual(idsOf((await exported(`/api/v1/admin/exports/charges?subscription_id=${ada.id}`, other.auth)).records), [])
    assert.deepEqual(idsOf((await exported('/api/v1/admin/exports/charges', other.auth)).records), [], "the other store's clock never moved: no charges")
    for (const path of ['subscriptions', 'charges', 'subscribers']) {
      assert.ok(!(await get(`/api/v1/admin/exports/${path}`, other.auth)).body.includes(shop.store.id))
    }
  })

  test('credentials as the lists: none or a revoked key is 401; every scope that reads the list may export it', async () => {
    const revoked = await createAdminKey(t.db, shop.store, 'gone')
    await revokeAdminKey(t.db, revoked.id, new Date())
    for (const path of ['subscriptions', 'charges', 'subscribers']) {
      for (const headers of [{}, { authorization: 'Bearer sk_test_nothing' }, { authorization: `Bearer ${revoked.key}` }] as Record<string, string>[]) {
        const refused = await get(`/api/v1/admin/exports/${path}`, headers)
        assert.equal(refused.statusCode, 401, `${path}: ${refused.body}`)
        assert.equal(refused.json.code, 'unauthenticated')
      }
    }
    for (const scope of ['read_only', 'support'] as const) {
      const { key } = await createAdminKey(t.db, shop.store, `${scope} exporter`, scope)
      const auth = { authorization: `Bearer ${key}` }
      const list = await get('/api/v1/admin/subscriptions', auth)
      assert.equal(list.statusCode, 200, list.body)
      assert.deepEqual(idsOf((await exported('/api/v1/admin/exports/subscriptions', auth)).records), list.json.data.map((row: any) => row.id), scope)
      for (const path of ['charges', 'subscribers']) assert.equal((await get(`/api/v1/admin/exports/${path}`, auth)).statusCode, 200, `${scope} ${path}`)
    }
  })
})
