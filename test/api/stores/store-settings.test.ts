import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { assertInvalidField, assertProblem } from '../../helpers/problem.ts'

type Reply = Awaited<ReturnType<typeof call>>

describe('GET and PATCH /api/v1/admin/store', () => {
  let t: TestApp

  before(async () => {
    t = await buildTestApp()
  })
  after(() => t.close())

  const getStore = (shop: StoreWithKey) => call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: shop.auth })
  const patchStore = (shop: StoreWithKey, payload: unknown) => call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: shop.auth, payload: payload as object })

  /** A refused PATCH must leave every setting as it was. */
  async function assertUnchanged(shop: StoreWithKey, before: Reply, what: string): Promise<void> {
    const now = await getStore(shop)
    assert.deepEqual(now.json, before.json, `${what}: the store is unchanged`)
  }

  test("GET answers the key's own store with its settings and defaults", async () => {
    const shop = await createStoreWithKey(t.db)
    const response = await getStore(shop)
    assert.equal(response.statusCode, 200, response.body)
    assert.deepEqual(
      { ...response.json, created_at: undefined, updated_at: undefined },
      {
        id: shop.store.id,
        object: 'store',
        store_hash: shop.store.store_hash,
        name: shop.store.store_hash,
        mode: 'test',
        timezone: 'UTC',
        currency: 'USD',
        dunning_retry_days: [1, 3, 5, 7],
        renewal_reminder_days: 3,
        past_due_cancel_days: 30,
        gateway: 'test',
        renewal_shipping: 'checkout_rate',
        renewal_shipping_amount: null,
        test_tax_rate_bps: 0,
        out_of_stock: 'skip',
        out_of_stock_retry_days: 3,
        billing_stopped_at: null,
        billing_enabled: true,
        cancellation_reasons: [],
        retention_offers: [],
        portal_reactivation: false,
        price_change_notice_days: 30,
        notifications: { subscription_created: true, renewal_upcoming: true, payment_failed: true, past_due: true, cancelled: true, payment_instrument_expiring: true, renewal_skipped: true, price_change_notice: true },
        created_at: undefined,
        updated_at: undefined,
      },
    )
    assert.match(response.json.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    assert.match(response.json.updated_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
  })

  test('PATCH changes name, timezone, currency, dunning_retry_days, renewal_reminder_days and past_due_cancel_days, and GET reads them back', async () => {
    const shop = await createStoreWithKey(t.db)
    const before = await getStore(shop)
    const changes = {
      name: 'Roastery',
      timezone: 'America/New_York',
      currency: 'EUR',
      dunning_retry_days: [2, 4, 8],
      renewal_reminder_days: 0,
      past_due_cancel_days: 14,
    }
    const response = await patchStore(shop, changes)
    assert.equal(response.statusCode, 200, response.body)
    for (const [field, value] of Object.entries(changes)) assert.deepEqual(response.json[field], value, `${field} is changed`)
    assert.equal(response.json.id, shop.store.id)
    assert.equal(response.json.store_hash, shop.store.store_hash, 'store_hash is kept')
    assert.equal(response.json.mode, 'test', 'mode is kept')
    assert.equal(response.json.created_at, before.json.created_at)
    assert.ok(response.json.updated_at >= before.json.updated_at, 'updated_at does not go back')
    const read = await getStore(shop)
    assert.deepEqual(read.json, response.json, 'the change is stored')
  })

  test('PATCH changes only the fields it names', async () => {
    const shop = await createStoreWithKey(t.db)
    const before = await getStore(shop)
    const response = await patchStore(shop, { timezone: 'Europe/Berlin' })
    assert.equal(response.statusCode, 200, response.body)
    assert.deepEqual({ ...response.json, updated_at: before.json.updated_at }, { ...before.json, timezone: 'Europe/Berlin' })
  })

  test("a PATCH changes the key's store only, never another store", async () => {
    const shop = await createStoreWithKey(t.db)
    const neighbour = await createStoreWithKey(t.db)
    const neighbourBefore = await getStore(neighbour)
    assert.equal((await patchStore(shop, { name: 'Mine', currency: 'GBP' })).statusCode, 200)
    await assertUnchanged(neighbour, neighbourBefore, 'the other store')
  })

  test('an unknown time zone ("Mars/Olympus") is 400 validation_failed at /body/timezone and changes nothing', async () => {
    const shop = await createStoreWithKey(t.db)
    const before = await getStore(shop)
    const response = await patchStore(shop, { timezone: 'Mars/Olympus', name: 'Should not stick' })
    assertProblem(response, 400, 'validation_failed', { what: 'Mars/Olympus' })
    assert.deepEqual(response.json.errors.map((error: any) => error.path), ['/body/timezone'])
    await assertUnchanged(shop, before, 'bad timezone')
  })

  test('every current IANA zone name is accepted, including ones ICU lists under an older alias (Asia/Kolkata, Europe/Kyiv)', async () => {
    const shop = await createStoreWithKey(t.db)
    const refused: string[] = []
    for (const timezone of ['UTC', 'Asia/Kolkata', 'Europe/Kyiv', 'Asia/Ho_Chi_Minh', 'Asia/Kathmandu', 'America/Argentina/Buenos_Aires', 'Etc/UTC']) {
      const response = await patchStore(shop, { timezone })
      if (response.statusCode !== 200) refused.push(`${timezone} (${response.statusCode} ${response.json?.detail})`)
      else assert.equal(response.json.timezone, timezone, `${timezone} is stored as given`)
    }
    assert.deepEqual(refused, [], 'valid IANA time zones were refused')
  })

  test('a currency that is not upper-case ISO 4217 is 400 at /body/currency and changes nothing', async () => {
    const shop = await createStoreWithKey(t.db)
    const before = await getStore(shop)
    for (const currency of ['usd', 'XYZ', 'DOLLAR']) {
      assertInvalidField(await patchStore(shop, { currency }), '/body/currency', `currency ${currency}`)
    }
    await assertUnchanged(shop, before, 'bad currency')
  })

  test('dunning_retry_days that are not strictly ascending are 400 at /body/dunning_retry_days and change nothing', async () => {
    const shop = await createStoreWithKey(t.db)
    const before = await getStore(shop)
    for (const days of [[3, 1], [1, 3, 3], [5, 4, 7]]) {
      assertInvalidField(await patchStore(shop, { dunning_retry_days: days }), '/body/dunning_retry_days', `dunning_retry_days ${JSON.stringify(days)}`)
    }
    await assertUnchanged(shop, before, 'non-ascending dunning days')
  })

  const outOfRange: Array<[string, unknown, string]> = [
    ['an empty dunning schedule', { dunning_retry_days: [] }, '/body/dunning_retry_days'],
    ['a dunning retry on day 0', { dunning_retry_days: [0, 3] }, '/body/dunning_retry_days/0'],
    ['a dunning day as a string', { dunning_retry_days: ['1'] }, '/body/dunning_retry_days/0'],
    ['renewal_reminder_days of -1', { renewal_reminder_days: -1 }, '/body/renewal_reminder_days'],
    ['renewal_reminder_days of 2.5', { renewal_reminder_days: 2.5 }, '/body/renewal_reminder_days'],
    ['past_due_cancel_days of 0', { past_due_cancel_days: 0 }, '/body/past_due_cancel_days'],
    ['past_due_cancel_days as a string', { past_due_cancel_days: '30' }, '/body/past_due_cancel_days'],
    ['an empty name', { name: '' }, '/body/name'],
  ]
  for (const [what, body, path] of outOfRange) {
    test(`${what} is 400 validation_failed at ${path}`, async () => {
      const shop = await createStoreWithKey(t.db)
      const before = await getStore(shop)
      assertInvalidField(await patchStore(shop, body), path, what)
      await assertUnchanged(shop, before, what)
    })
  }

  test('an empty body {} is 400 validation_failed', async () => {
    const shop = await createStoreWithKey(t.db)
    assertProblem(await patchStore(shop, {}), 400, 'validation_failed', { what: 'PATCH {}' })
  })

  test('mode is not patchable: 400 validation_failed at /body/mode and the mode stays', async () => {
    const shop = await createStoreWithKey(t.db)
    const before = await getStore(shop)
    const response = await patchStore(shop, { mode: 'live' })
    assertInvalidField(response, '/body/mode', 'PATCH mode')
    assert.equal(response.json.errors.find((error: any) => error.path === '/body/mode').message, 'is not a known field')
    await assertUnchanged(shop, before, 'PATCH mode')
    const row = await t.db.selectFrom('stores').select('mode').where('id', '=', shop.store.id).executeTakeFirstOrThrow()
    assert.equal(row.mode, 'test', 'the stored mode is still test')
  })

  test('store_hash and id are not patchable either', async () => {
    const shop = await createStoreWithKey(t.db)
    const before = await getStore(shop)
    assertInvalidField(await patchStore(shop, { store_hash: 'stolen' }), '/body/store_hash', 'PATCH store_hash')
    assertInvalidField(await patchStore(shop, { id: 'store_00000000000000000000000000' }), '/body/id', 'PATCH id')
    await assertUnchanged(shop, before, 'PATCH store_hash/id')
  })
})
