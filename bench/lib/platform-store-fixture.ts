// What the platform renewal benches (renewals-platform, spike) seed a store with: one physical product at
// PLAN_AMOUNT, a customer with a stored card at ADDRESS, a tax rate; subscriptions bought at BOUGHT_AT and
// due at DUE_AT on the store's test clock (a month and an hour later).
export const BOUGHT_AT = new Date('2026-03-02T15:00:00Z')
export const DUE_AT = new Date('2026-04-02T16:00:00Z')
export const PRODUCT_ID = 77
export const CUSTOMER_ID = 11
export const PLAN_AMOUNT = 1500
export const TAX_RATE_BPS = 825
export const ADDRESS = { name: 'Ada Lovelace', line1: '12 Analytical Way', city: 'Portland', state: 'OR', postal_code: '97201', country: 'US' }
