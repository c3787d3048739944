export { chargeIdempotencyKey, FAILURE_CODES, type ChargeOutcome, type ChargeRequest, type OrderOutcome, type RefundOutcome, type RefundRequest, type RenewalOrder, type RenewalOrderLine, type PlatformPricing, type OrderAddress, type FailureCode, type GatewayName, type PaymentGateway, type ShortItem, type StockOutcome } from './gateway.ts'
export { createTestGateway, scriptedOutcome, type TestGateway, type TestGatewayOptions } from './test-gateway.ts'
export { createPlatformGateway, type PlatformGateway, type PlatformGatewayOptions } from './platform-gateway.ts'
export { checkoutAddress, checkoutPricing, pickShippingOption } from './platform-checkout.ts'
