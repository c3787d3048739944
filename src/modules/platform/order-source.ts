/**
 * How this service marks the orders it raises on the platform for renewals: `external_source` is
 * this value and `external_order_id` is the charge's idempotency key (`<subscription>:<period
 * start>:<attempt>`). The renewal gateway finds its order again by that key, and the order webhook
 * handler skips these orders (they fire `store/order/created` like any other).
 */
export const RENEWAL_ORDER_SOURCE = 'subscription-billing'
