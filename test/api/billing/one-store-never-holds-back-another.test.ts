import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { fixedClock } from '../../../src/lib/clock.ts'
import { createGatewayResolver, createRenewalLoop, type RenewalEngine } from '../../../src/modules/billing/index.ts'
import { createPlatformBudget, createPlatformClient, type PlatformClient } from '../../../src/modules/platform/index.ts'
import type { BigCommerceSimulator } from '../../helpers/bigcommerce-simulator.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { testModules } from '../../helpers/modules.ts'
import { startPlatformHarness, type PlatformHarness } from '../../helpers/platform-harness.ts'
import { call, type TestApp } from '../../helpers/test-app.ts'
import { OTHER_ADDRESS, checkout, checkoutBody } from '../subscriptions/fixtures.ts'

/**
 * Many stores on one deployment (CONTRACT section 19), through the BigCommerce simulator and the
 * worker's renewal loop: one store whose platform answers 429 to everything and another whose
 * platform does not answer at all do not delay a third store's renewals; a store's budget, kept in
 * the database, holds across two claimers; and a budget row lost or corrupted never stops billing.
 */

const CUSTOMER_ID = 11
const PRODUCT = 90
const DUE = '2031-01-01T00:00:00.000Z'
const AFTER_DUE = '2031-01-01T00:05:00.000Z'

describe('one store never holds back another', () => {
  let h: PlatformHarness
  let sim: BigCommerceSimulator
  let t: TestApp
  let seq = 0
  // Calls to these stores wait until the case lets them go: a platform that does not answer.
  const held = new Map<string, Promise<void>>()
  const closers: (() => Promise<void>)[] = []
  // Every worker's ended charges, by subscription, so a case waits for exactly the ones it expects.
  const ended: string[] = []
  const waiters: { ids: string[]; resolve: () => void }[] = []
  const settledAll = (ids: string[]) => (ids.every((id) => ended.includes(id)) ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ ids, resolve })))

  before(async () => {
    h = await startPlatformHarness()
    ;({ sim, t } = h)
  })
  after(async () => {
    for (const close of closers) await close()
    await h?.close()
  })

  /** A worker of its own: the platform client with its budget, the engine, and its renewal loop (stepped by hand). */
  function worker(options: { concurrency?: number; perStore?: number } = {}) {
    const budget = createPlatformBudget({ db: t.db })
    const client = createPlatformClient({ apiUrl: sim.apiUrl, paymentsUrl: sim.paymentsUrl, timeoutMs: 5_000, budget })
    const holding: PlatformClient = {
      ...client,
      call: async (access, request) => {
        await held.get(access.storeHash)
        return client.call(access, request)
      },
    }
    const gateways = createGatewayResolver(t.db, { platformApiUrl: sim.apiUrl, platformPaymentsUrl: sim.paymentsUrl, platformTimeoutMs: 5_000, testGatewayLatencyMs: 0, platformAccessOf: h.connections.accessOf, platformClient: holding })
    const engine: RenewalEngine = testModules(t.db).renewalEngine({ clock: fixedClock(AFTER_DUE), gateways, budget, concurrency: options.concurrency ?? 16 })
    const loop = createRenewalLoop({
      db: t.db,
      concurrency: options.concurrency ?? 16,
      perStore: options.perStore ?? 4,
      engine: {
        claimFairly: engine.claimFairly,
        work: (attempts, token, onSettled) =>
          engine.work(attempts, token, (charges) => {
            onSettled?.(charges)
            ended.push(...charges.map((charge) => charge.subscription_id))
            for (const waiter of [...waiters]) {
              if (waiter.ids.every((id) => ended.includes(id))) {
                waiters.splice(waiters.indexOf(waiter), 1)
                waiter.resolve()
              }
            }
          }),
      },
    })
    closers.push(async () => {
      await budget.settled()
      await gateways.close()
      await client.close()
    })
    return { loop, budget }
  }

  /** A live store on the simulator with a product, a customer's card and `count` subscriptions due at DUE. */
  async function storeWith(count: number) {
    const hash = `fair${process.pid}x${++seq}`
    const shop = await h.connectedStore(hash)
    sim.addProduct(hash, { id: PRODUCT, name: 'Beans', price: 9.99, type: 'physical' })
    const [card] = sim.addCustomer(hash, { id: CUSTOMER_ID, email: 'ada@example.com', instruments: [{}] }).instruments.map((instrument) => instrument.token)
    const product = await createProduct(t.app, shop.auth, { platform_product_id: String(PRODUCT) })
    const plan = (await createPlan(t.app, shop.auth, product.id, { amount: 1250 })).id
    const ids: string[] = []
    for (let i = 0; i < count; i++) {
      const body = checkoutBody(plan, { payment_instrument_id: card, platform_customer_id: CUSTOMER_ID, shipping_address: OTHER_ADDRESS, billing_address: OTHER_ADDRESS })
      const [subscription] = (await checkout(t.app, shop.auth, body)) as { id: string }[]
      ids.push(subscription!.id)
    }
    await t.db.updateTable('subscriptions').set({ next_charge_at: new Date(DUE) }).where('store_id', '=', shop.store.id).execute()
    return { hash, shop, ids }
  }

  const chargesOf = (storeId: string) => t.db.selectFrom('charges').select(['subscription_id', 'status']).where('store_id', '=', storeId).execute()
  async function setBudget(storeId: string, row: { quota: number; window_ms: number; requests_left: number; resets_at: Date }) {
    const values = { ...row, updated_at: new Date() }
    await t.db.insertInto('platform_budgets').values({ store_id: storeId, ...values }).onConflict((oc) => oc.column('store_id').doUpdateSet(values)).execute()
  }
  const budgetOf = (storeId: string) => t.db.selectFrom('platform_budgets').selectAll().where('store_id', '=', storeId).executeTakeFirst()

  test("a store answering 429 to everything and a store that does not answer leave a third store's renewals on time", async () => {
    const limited = await storeWith(6)
    const silent = await storeWith(6)
    const healthy = await storeWith(3)
    // One request per ten minutes: everything after the first answers 429, with a reset far past the client's patience.
    sim.setRateLimit(limited.hash, { quota: 1, windowMs: 600_000 })
    let letGo!: () => void
    held.set(silent.hash, new Promise<void>((resolve) => (letGo = resolve)))
    const { loop, budget } = worker({ perStore: 4 })

    await loop.step()
    await settledAll(healthy.ids)
    assert.deepEqual((await chargesOf(healthy.shop.store.id)).map((charge) => charge.status), ['succeeded', 'succeeded', 'succeeded'], "the third store's renewals are charged while the others' are stuck")
    const silentCharges = await chargesOf(silent.shop.store.id)
    assert.equal(silentCharges.length, 4, 'the silent store has no more than its share in hand')
    assert.ok(silentCharges.every((charge) => charge.status === 'pending'), 'and none of them has an answer yet')

    // The 429s reached the budget: the limited store is not claimed again until its window refills.
    await settledAll((await chargesOf(limited.shop.store.id)).map((charge) => charge.subscription_id))
    await budget.settled()
    const limitedBudget = await budgetOf(limited.shop.store.id)
    assert.ok(limitedBudget, 'the limited store has a budget row, written from its 429s')
    assert.ok(limitedBudget.requests_left <= 0, `nothing left for the limited store (${limitedBudget.requests_left})`)
    assert.ok(limitedBudget.resets_at.getTime() > Date.now() + 500_000, 'until the platform said its window refills')
    const limitedClaimed = (await chargesOf(limited.shop.store.id)).length
    assert.ok(limitedClaimed <= 4)

    assert.equal(await loop.step(), 0, 'nothing more is claimed: the limited store is out of budget, the silent store has its share in hand')
    assert.equal((await chargesOf(limited.shop.store.id)).length, limitedClaimed, 'the limited store is not tried again')

    letGo()
    await settledAll(silentCharges.map((charge) => charge.subscription_id))
    assert.ok((await chargesOf(silent.shop.store.id)).every((charge) => charge.status === 'succeeded'), 'the silent store, answering again, is charged')
    assert.ok((await loop.step()) > 0, "the silent store's other renewals are claimed now that its share is free")
    await settledAll(silent.ids)
    assert.equal((await chargesOf(silent.shop.store.id)).filter((charge) => charge.status === 'succeeded').length, 6)
  })

  test('two claimers spend one store budget between them: no more renewals claimed than its window allows, and no 429', async () => {
    const store = await storeWith(10)
    // 33 requests a window: three renewals at the 11 calls a renewal is first reckoned to cost. The
    // budget row says so, as the platform's headers would have (its checkouts already called it).
    sim.setRateLimit(store.hash, { quota: 33, windowMs: 600_000 })
    await setBudget(store.shop.store.id, { quota: 33, window_ms: 600_000, requests_left: 33, resets_at: new Date(Date.now() + 600_000) })
    const first = worker()
    const second = worker()
    await Promise.all([first.loop.step(), second.loop.step(), first.loop.step(), second.loop.step()])
    const claimed = await chargesOf(store.shop.store.id)
    assert.equal(claimed.length, 3, 'three renewals between the two claimers')
    await settledAll(claimed.map((charge) => charge.subscription_id))
    await Promise.all([first.budget.settled(), second.budget.settled()])
    const statuses = sim.requests.filter((request) => request.store === store.hash).map((request) => request.outcome)
    assert.ok(!statuses.includes(429), `no request of the store was refused (${statuses.join(', ')})`)
  })

  test('a budget row lost or corrupted never stops billing: it is rebuilt from the headers', async () => {
    const store = await storeWith(2)
    // A reset in the year 2999 and a deep overdraft: believed, it would stop the store for good.
    await setBudget(store.shop.store.id, { quota: 150, window_ms: 30_000, requests_left: -1_000_000, resets_at: new Date('2999-01-01T00:00:00Z') })
    const { loop, budget } = worker()
    assert.ok((await loop.step()) >= 1, 'the corrupted row counts as a fresh window')
    await settledAll(store.ids)
    await budget.settled()
    assert.deepEqual((await chargesOf(store.shop.store.id)).map((charge) => charge.status), ['succeeded', 'succeeded'])
    const rebuilt = await budgetOf(store.shop.store.id)
    assert.ok(rebuilt && rebuilt.resets_at.getTime() < Date.now() + 600_000, 'the row is the platform window again')
    assert.ok(rebuilt.requests_left > 0)

    // Lost: the row deleted, the next renewals are claimed and the row is written again.
    await t.db.deleteFrom('platform_budgets').where('store_id', '=', store.shop.store.id).execute()
    const later = await storeWith(1)
    await t.db.deleteFrom('platform_budgets').where('store_id', '=', later.shop.store.id).execute()
    assert.ok((await loop.step()) >= 1, 'claimed with no row at all')
    await settledAll(later.ids)
    await budget.settled()
    assert.ok(await budgetOf(later.shop.store.id), 'the row is back, from the answers')
  })
})
