import type { Db } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Module } from '../module.ts'
import type { SubscriptionWrites } from '../subscriptions/index.ts'
import { Discount } from './discount.schemas.ts'
import { discountAdminRoutes, discountPortalRoutes } from './discounts.routes.ts'
import { createDiscountService, type DiscountService } from './discounts.service.ts'

/** The store's discount codes, and applying them to subscriptions (at checkout, by the merchant, by the subscriber). */
export function createDiscountsModule({ db, clock, writes }: { db: Db; clock: Clock; writes: SubscriptionWrites }): Module<DiscountService> {
  const service = createDiscountService({ db, clock, writes })
  return {
    name: 'discounts',
    service,
    routes: {
      admin: (app) => discountAdminRoutes(app, service),
      portal: (app) => discountPortalRoutes(app, service),
    },
    schemas: [Discount],
  }
}

export { Discount, type DiscountView } from './discount.schemas.ts'
export { discountColumns, presentDiscount, redeemDiscount, type DiscountService, type Redeemed, type RedemptionTarget } from './discounts.service.ts'
