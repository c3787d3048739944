import assert from 'node:assert/strict'
import type { Db, StoreRow } from '../../src/db/database.ts'
import type { App } from '../../src/http/types.ts'
import { systemClock, type Clock } from '../../src/lib/clock.ts'
import { type PlanView, type ProductView } from '../../src/modules/catalog/index.ts'
import type { CreatePlanInput } from '../../src/modules/catalog/catalog.schemas.ts'
import { type SubscriptionView } from '../../src/modules/subscriptions/index.ts'
import type { CheckoutInput } from '../../src/modules/subscriptions/subscription.schemas.ts'
import { call, createStoreWithKey, type StoreWithKey } from './test-app.ts'
import { testModules } from './modules.ts'
import { TEST_ADMIN } from './actors.ts'

/** The plan shapes the subscription tests need; `euro` and `archived` exist to be refused. */
export const PLAN_VARIANTS = {
  monthly: { name: 'Monthly', amount: 1500, currency: 'USD', interval: 'month' },
  weekly: { name: 'Weekly', amount: 500, currency: 'USD', interval: 'week' },
  trial: { name: 'Monthly, 14-day trial', amount: 1500, currency: 'USD', interval: 'month', trial_days: 14 },
  prepaid: { name: 'Three months prepaid', amount: 4000, currency: 'USD', interval: 'month', prepaid_cycles: 3 },
  b2b: { name: 'Business monthly', amount: 9000, currency: 'USD', interval: 'month', b2b: true },
  b2bQuarterly: { name: 'Business quarterly', amount: 25000, currency: 'USD', interval: 'month', interval_count: 3, b2b: true },
  euro: { name: 'Monthly in euros', amount: 1400, currency: 'EUR', interval: 'month' },
  archived: { name: 'Retired', amount: 1000, currency: 'USD', interval: 'month', active: false },
} as const satisfies Record<string, Omit<CreatePlanInput, 'product_id'>>

export type PlanVariant = keyof typeof PLAN_VARIANTS

export const SHIPPING_ADDRESS = { name: 'Ada Lovelace', line1: '12 Analytical Way', city: 'Portland', state: 'OR', postal_code: '97201', country: 'US' }

/** A test-mode store with an admin key; with `clockAt` its test clock stands at that instant. */
export async function createShop(db: Db, options: { timezone?: string; clockAt?: Date } = {}): Promise<StoreWithKey> {
  const shop = await createStoreWithKey(db, options.timezone ? { timezone: options.timezone } : {})
  if (!options.clockAt) return shop
  return { ...shop, store: await setStoreClock(db, shop.store.id, options.clockAt) }
}

/** Moves a test-mode store's own clock (null: real time); services read it from the row, so use the row returned. */
export async function setStoreClock(db: Db, storeId: string, at: Date | null): Promise<StoreRow> {
  return db.updateTable('stores').set({ test_clock_now: at }).where('id', '=', storeId).returningAll().executeTakeFirstOrThrow()
}

export function reloadStore(db: Db, storeId: string): Promise<StoreRow> {
  return db.selectFrom('stores').selectAll().where('id', '=', storeId).executeTakeFirstOrThrow()
}

export interface Catalog {
  product: ProductView
  plans: Record<PlanVariant, PlanView>
}

let productCounter = 0

/** One product with a plan of every variant, made through the catalogue service. */
export async function createCatalog(db: Db, store: StoreRow, clock: Clock = systemClock): Promise<Catalog> {
  const catalog = testModules(db, { clock: clock }).catalog
  productCounter += 1
  const product = await catalog.createProduct(store, { platform_product_id: `sub-test-${productCounter}`, name: `Coffee ${productCounter}` })
  const plans = {} as Record<PlanVariant, PlanView>
  for (const [variant, body] of Object.entries(PLAN_VARIANTS) as [PlanVariant, Omit<CreatePlanInput, 'product_id'>][]) {
    plans[variant] = await catalog.createPlan(store, { ...body, product_id: product.id })
  }
  return { product, plans }
}

let orderCounter = 0

/** A valid checkout body for the given plans (one item each) with a fresh platform order id. */
export function checkoutInput(planIds: string | string[], overrides: Partial<CheckoutInput> = {}): CheckoutInput {
  orderCounter += 1
  return {
    platform_order_id: `order-${process.pid}-${orderCounter}`,
    email: 'ada@example.com',
    name: 'Ada Lovelace',
    shipping_address: SHIPPING_ADDRESS,
    payment_instrument_id: 'instr_visa_4242',
    items: (Array.isArray(planIds) ? planIds : [planIds]).map((plan_id) => ({ plan_id, quantity: 1 })),
    ...overrides,
  }
}

/** A checkout through the service, as the admin route runs it. */
export async function checkout(db: Db, clock: Clock, store: StoreRow, input: CheckoutInput): Promise<SubscriptionView[]> {
  const outcome = await testModules(db, { clock: clock }).checkouts.checkout(store, input, TEST_ADMIN)
  return outcome.data
}

/**
 * A checkout through `POST /api/v1/admin/checkouts` that must succeed; asserts the 201 and answers the
 * subscriptions. (test/api/subscriptions/fixtures.ts offers it as `checkout`, with its loose bodies.)
 */
export async function checkoutViaApi(app: App, auth: Record<string, string>, input: CheckoutInput | Record<string, unknown>): Promise<any[]> {
  const response = await call(app, { method: 'POST', url: '/api/v1/admin/checkouts', headers: auth, payload: input })
  assert.equal(response.statusCode, 201, `checkout failed: ${response.body}`)
  return response.json.data
}

/** An entity's events as stored in the outbox, oldest first. */
export async function storedEvents(db: Db, entityId: string): Promise<any[]> {
  const rows = await db.selectFrom('events').select('payload').where('entity_id', '=', entityId).orderBy('sequence', 'asc').execute()
  return rows.map((row) => JSON.parse(row.payload))
}

/** A subscription bought through the admin checkout route; answers the new subscriber's id. */
export async function checkoutThroughApi(app: App, shop: { auth: Record<string, string>; planId: string }, overrides: Partial<CheckoutInput> = {}): Promise<string> {
  const created = await call(app, { method: 'POST', url: '/api/v1/admin/checkouts', headers: shop.auth, payload: checkoutInput(shop.planId, overrides) })
  assert.equal(created.statusCode, 201, created.body)
  return created.json.data[0].subscriber_id as string
}
