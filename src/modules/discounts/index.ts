export { Discount, type DiscountView } from './discount.schemas.ts'
export { createDiscountService, discountColumns, presentDiscount, redeemDiscount, type DiscountService, type Redeemed, type RedemptionTarget } from './discounts.service.ts'
export { discountAdminRoutes, discountPortalRoutes, registerSubscriptionDiscountRoutes } from './discounts.routes.ts'
