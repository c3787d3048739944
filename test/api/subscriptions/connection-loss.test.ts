import assert from 'node:assert/strict'
// wall clock: the PostgreSQL server's termination notices arrive over real sockets (below).
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, test } from 'node:test'
import { onPostgres } from '../../helpers/database.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { adminQuery, checkout, checkoutBody, closeTestApp, scratchDatabaseName } from './fixtures.ts'

// Only a server can drop a connection under the service; embedded PGlite has none to lose.
describe('subscriptions on PostgreSQL that drops idle connections', { skip: !onPostgres && 'needs DATABASE_URL (PostgreSQL)' }, () => {
  let t: TestApp
  let shop: StoreWithKey
  let plan: any

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, shop.auth)
    plan = await createPlan(t.app, shop.auth, product.id)
  })
  after(() => closeTestApp(t))

  test('the service survives the server terminating its idle pool connections (failover, pg_terminate_backend) and keeps serving', async () => {
    // Concurrent requests leave several idle connections in the pool.
    const warm = await Promise.all(Array.from({ length: 4 }, () => checkout(t.app, shop.auth, checkoutBody(plan.id))))
    const { rowCount } = await adminQuery('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [
      scratchDatabaseName(t),
    ])
    assert.ok((rowCount ?? 0) > 0, 'idle connections were terminated')
    // Let the termination notices reach the idle clients: with no pool 'error' listener they crash the process here.
    // wall clock: the server's notices reach the idle clients over their sockets; nothing in the pool can be polled for it.
    await sleep(300)
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(plan.id))
    assert.equal(subscription.status, 'active')
    const read = await call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${warm[0]![0].id}`, headers: shop.auth })
    assert.equal(read.statusCode, 200)
  })
})
