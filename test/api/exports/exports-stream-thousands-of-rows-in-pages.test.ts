import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { systemClock } from '../../../src/lib/clock.ts'
import { newId } from '../../../src/lib/ids.ts'
import { createExportsService } from '../../../src/modules/exports/exports.service.ts'
import type { SubscriptionService } from '../../../src/modules/subscriptions/index.ts'
import { TEST_ADMIN } from '../../helpers/actors.ts'
import { csvRecords } from '../../helpers/csv.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { checkoutViaApi } from '../../helpers/subscriptions.ts'
import { buildTestApp, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'

/**
 * Exports of a large store (issue 27, docs/contract.md, Exports): 2,100 subscriptions and their
 * 2,100 subscribers come out whole over real HTTP, chunked as they are written, newest first,
 * each row once, across five reads of 500; and the rows are read only as fast as the reader takes
 * the text, so a reader who stops early stops the reads (nothing is gathered in memory first).
 */
const ROWS = 2_100

describe('exports of thousands of rows, a page at a time', () => {
  let t: TestApp
  let shop: StoreWithKey
  let base: string
  let ids: string[]
  let subscriberIds: string[]

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, shop.auth)
    const plan = await createPlan(t.app, shop.auth, product.id)
    const [first] = await checkoutViaApi(t.app, shop.auth, { platform_order_id: 'bulk-0', email: 'bulk-0@example.com', name: 'Bulk 0', payment_instrument_id: 'instr_visa', items: [{ plan_id: plan.id, quantity: 1 }] })
    const template = await t.db.selectFrom('subscriptions').selectAll().where('id', '=', first.id).executeTakeFirstOrThrow()
    const subscriber = await t.db.selectFrom('subscribers').selectAll().where('id', '=', first.subscriber_id).executeTakeFirstOrThrow()
    ids = [first.id]
    subscriberIds = [first.subscriber_id]
    // Written straight to the tables, 500 a statement: 2,099 checkouts would take most of the test's time.
    for (let start = 1; start < ROWS; start += 500) {
      const batch = Array.from({ length: Math.min(500, ROWS - start) }, (_, i) => start + i)
      const subscribers = batch.map((n) => ({ ...subscriber, id: newId('cus'), email: `bulk-${n}@example.com`, name: `Bulk ${n}`, shipping_address: null }))
      await t.db.insertInto('subscribers').values(subscribers).execute()
      const subscriptions = batch.map((n, i) => ({
        ...template,
        id: newId('sub'),
        subscriber_id: subscribers[i]!.id,
        platform_order_id: `bulk-${n}`,
        shipping_address: JSON.stringify(template.shipping_address),
        billing_address: null,
        gift: null,
        billing_issue: null,
        discount: null,
      }))
      await t.db.insertInto('subscriptions').values(subscriptions).execute()
      ids.push(...subscriptions.map((row) => row.id))
      subscriberIds.push(...subscribers.map((row) => row.id))
    }
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
  })
  after(() => t.close())

  /** An export over HTTP: its headers, its text and how many chunks it came in. */
  async function download(path: string) {
    const response = await fetch(`${base}${path}`, { headers: shop.auth })
    assert.equal(response.status, 200)
    let text = ''
    let chunks = 0
    const decoder = new TextDecoder()
    for await (const chunk of response.body!) {
      chunks += 1
      text += decoder.decode(chunk, { stream: true })
    }
    return { headers: response.headers, text: text + decoder.decode(), chunks }
  }

  test('2,100 subscriptions over HTTP: chunked, newest first, every one once', async () => {
    const { headers, text, chunks } = await download('/api/v1/admin/exports/subscriptions')
    assert.equal(headers.get('transfer-encoding'), 'chunked', 'streamed: no length known before the end')
    assert.equal(headers.get('content-length'), null)
    assert.ok(chunks > 1, `${chunks} chunks`)
    const { records } = csvRecords(text)
    assert.equal(records.length, ROWS)
    assert.deepEqual(records.map((record) => record.id), [...ids].reverse(), 'newest first, none missing, none twice')
    assert.equal(new Set(records.map((record) => record.email)).size, ROWS, 'each row with its own subscriber')
  })

  test('2,100 subscribers over HTTP, newest first, every one once, filters applied across pages', async () => {
    const { records } = csvRecords((await download('/api/v1/admin/exports/subscribers')).text)
    assert.deepEqual(records.map((record) => record.id), [...subscriberIds].reverse())
    assert.ok(records.every((record) => record.subscription_count === '1'))
    // "Bulk 1" is in Bulk 1, 10-19, 100-199 and 1000-1999: 1 + 10 + 100 + 1000 rows, across three reads.
    const matching = csvRecords((await download('/api/v1/admin/exports/subscribers?q=bulk%201')).text).records
    assert.equal(matching.length, 1_111)
    assert.ok(matching.every((record) => /^Bulk 1/.test(record.name!)))
    const subscriptions = csvRecords((await download('/api/v1/admin/exports/subscriptions?q=bulk-1')).text).records
    assert.equal(subscriptions.length, 1_111)
  })

  test('rows are read a page at a time as the reader takes them: a reader who stops stops the reads', async () => {
    const reads: number[] = []
    const subscriptions = t.services.modules.subscriptions.service.subscriptions
    const counted: Pick<SubscriptionService, 'listRows' | 'listSubscribers'> = {
      listRows: (store, query, actor) => {
        reads.push(query.limit)
        return subscriptions.listRows(store, query, actor)
      },
      listSubscribers: subscriptions.listSubscribers,
    }
    const exports = createExportsService({ clock: systemClock, subscriptions: counted, charges: t.services.modules.billing.service.charges })
    const settle = async () => {
      for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve))
    }
    const store = shop.store

    const stopped = await exports.subscriptions(store, {}, TEST_ADMIN)
    assert.deepEqual(reads, [500], 'the first page is read before the answer starts')
    const first = await stopped.body[Symbol.asyncIterator]().next()
    assert.ok(!first.done)
    await settle()
    assert.deepEqual(reads, [500], 'one chunk taken: no further page read ahead')
    stopped.body.destroy()
    await settle()
    assert.deepEqual(reads, [500], 'the reader went away: nothing more is read')

    reads.length = 0
    const whole = await exports.subscriptions(store, {}, TEST_ADMIN)
    let text = ''
    for await (const chunk of whole.body) text += chunk
    assert.deepEqual(reads, [500, 500, 500, 500, 500], '2,100 rows: five reads of 500 (the fifth finds 100)')
    assert.equal(csvRecords(text).records.length, ROWS)
  })
})
