import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { fixedClock } from '../../../src/lib/clock.ts'
import { createGatewayResolver, createRenewalLoop } from '../../../src/modules/billing/index.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { testModules } from '../../helpers/modules.ts'
import { buildTestApp, createStoreWithKey, testConfig, type TestApp } from '../../helpers/test-app.ts'
import { checkout, checkoutBody, closeTestApp } from '../subscriptions/fixtures.ts'

/**
 * The worker's renewal loop counts the renewals it has in hand to know when to claim more. Work that
 * fails before it reports a single renewal (the database gone when it starts) must still give its
 * renewals back to the count: else the loop believes itself full and never claims again.
 */
describe('the renewal loop after work that failed before it began', () => {
  let t: TestApp
  before(async () => (t = await buildTestApp()))
  after(() => closeTestApp(t))

  test('a batch whose work fails at once does not cost the loop its room', async () => {
    const shop = await createStoreWithKey(t.db)
    await t.db.updateTable('stores').set({ test_clock_now: new Date('2026-01-10T09:00:00.000Z') }).where('id', '=', shop.store.id).execute()
    const product = await createProduct(t.app, shop.auth)
    const plan = (await createPlan(t.app, shop.auth, product.id, { name: 'M', amount: 1500, interval: 'month' })).id
    for (let i = 0; i < 6; i++) await checkout(t.app, shop.auth, checkoutBody(plan))
    await t.db.updateTable('stores').set({ test_clock_now: new Date('2026-02-11T09:00:00.000Z') }).where('id', '=', shop.store.id).execute()

    const engine = testModules(t.db).renewalEngine({ clock: fixedClock('2026-02-11T09:00:00.000Z'), gateways: createGatewayResolver(t.db, testConfig({}).billing), concurrency: 4 })
    let failing = true
    let failed!: () => void
    const failure = new Promise<void>((resolve) => (failed = resolve))
    const loop = createRenewalLoop({
      db: t.db,
      concurrency: 4,
      perStore: 4,
      engine: {
        claimFairly: engine.claimFairly,
        work: (attempts, token, onSettled) => {
          if (!failing) return engine.work(attempts, token, onSettled)
          failing = false
          // After the loop's handlers are attached: the rejection travels through them first.
          const rejected = Promise.reject(new Error('connection reset'))
          void rejected.catch(() => {}).then(() => Promise.resolve()).then(failed)
          return rejected
        },
      },
    })
    assert.equal(await loop.step(), 4, 'the first claim fills the loop')
    await failure
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(await loop.step(), 2, 'with the failed work over, its room is free again: the two still due are claimed')
  })
})
