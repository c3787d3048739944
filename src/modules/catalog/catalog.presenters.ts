import { toRfc3339 } from '../../lib/time.ts'
import type { PlanWithProduct, ProductWithStore } from './catalog.repository.ts'
import type { PlanView, ProductView } from './catalog.schemas.ts'

export function presentProduct(row: ProductWithStore): ProductView {
  return {
    id: row.id,
    object: 'product',
    store_hash: row.store_hash,
    platform_product_id: row.platform_product_id,
    name: row.name,
    description: row.description,
    one_time_price:
      row.one_time_amount !== null && row.one_time_currency !== null
        ? { amount: row.one_time_amount, currency: row.one_time_currency }
        : null,
    active: row.active,
    created_at: toRfc3339(row.created_at),
    updated_at: toRfc3339(row.updated_at),
  }
}

export function presentPlan(row: PlanWithProduct): PlanView {
  return {
    id: row.id,
    object: 'plan',
    store_hash: row.store_hash,
    product_id: row.product_id,
    platform_product_id: row.platform_product_id,
    name: row.name,
    amount: row.amount,
    currency: row.currency,
    interval: row.interval,
    interval_count: row.interval_count,
    trial_days: row.trial_days,
    prepaid_cycles: row.prepaid_cycles,
    platform_variant_id: row.platform_variant_id ?? null,
    b2b: row.b2b,
    active: row.active,
    created_at: toRfc3339(row.created_at),
    updated_at: toRfc3339(row.updated_at),
  }
}

const APPROXIMATE_DAYS = { day: 1, week: 7, month: 30.44, year: 365.25 } as const

/** Widgets list the shortest cadence first, then the lower price: the order shoppers compare in. */
export function storefrontOrder(a: PlanWithProduct, b: PlanWithProduct): number {
  const cadence = APPROXIMATE_DAYS[a.interval] * a.interval_count - APPROXIMATE_DAYS[b.interval] * b.interval_count
  return cadence || a.amount - b.amount || (a.id < b.id ? -1 : 1)
}
