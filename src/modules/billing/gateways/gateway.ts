/**
 * What the renewal engine needs from a payment gateway, and nothing more. Implementations: the
 * `test` gateway (outcome chosen by instrument id, docs/contract.md, Billing) and the commerce platform's
 * stored-instrument payments API.
 *
 * Exactly-once rests on two promises every implementation keeps:
 *   1. A charge with an idempotency key already seen never moves money again; it answers the
 *      first outcome (or, while that is still unknown, at most 'unknown').
 *   2. 'failed' is only answered when no money moved. When the gateway cannot tell (timeout, reset
 *      connection, server error after the request went out) it answers 'unknown', and the engine
 *      reconciles with `lookup` or retries with the SAME key, never a new one.
 * A rejected promise (a bug, the ledger database gone) must be treated exactly like 'unknown'.
 */

export type GatewayName = 'test' | 'platform'

/** Failure codes a charge can end with; stored on the charge and shown to the merchant. */
export const FAILURE_CODES = [
  'card_declined',
  'insufficient_funds',
  'expired_card',
  'instrument_invalid',
  'processing_error',
  // Our side is wrong (no credentials, credentials refused, no order to pay): no retry will help until fixed.
  'gateway_configuration',
  // The platform said an item of the renewal is out of stock before anything was ordered or paid: the
  // store's `out_of_stock` policy decides what follows; never dunning.
  'out_of_stock',
  // The store's billing was switched off (or stopped) after this charge was claimed and before anything
  // was sent: nothing was charged, and the renewal stays due for when billing is on again; never dunning.
  'billing_disabled',
] as const

export type FailureCode = (typeof FAILURE_CODES)[number]

export interface ChargeRequest {
  /** Derived from (subscription, period, attempt) by `chargeIdempotencyKey`; the same attempt always reuses it. */
  idempotencyKey: string
  storeId: string
  subscriptionId: string
  /** Integer minor units (cents). */
  amount: number
  /** ISO 4217, upper case. */
  currency: string
  /** The vault's stored-instrument id; card data never reaches this service. */
  paymentInstrumentId: string
  description: string
  /** The platform order this charge pays; the platform gateway needs it to obtain a payment access token. */
  orderId?: string | undefined
  /**
   * Called just before a request that raises an order on a platform without idempotency keys; the
   * engine records when (`orderRequestedAt` on the next attempt). If it throws (the lease was lost),
   * no order is requested and the outcome is unknown.
   */
  onOrderRequest?: (() => Promise<void>) | undefined
  /**
   * When an earlier holder of this charge asked for its order (none kept yet): that request may still
   * be in flight, so a new one waits until it cannot be, and looks for its order first.
   */
  orderRequestedAt?: Date | undefined
  /** The platform cart (and checkout) an earlier holder made for this charge's order, to be reused. */
  cartId?: string | undefined
  /**
   * Called with a new cart's id as soon as the platform made it, before anything else is done with it;
   * the engine keeps it on the charge, so a retry reuses the cart. If it throws (the lease was lost),
   * the cart is left alone: a cart moves no money, and an unused one expires on the platform.
   */
  onCart?: ((cartId: string) => Promise<void>) | undefined
  /**
   * Called just before the request that can move money is sent; the engine records it, so that a
   * charge whose answer is lost is only looked up afterwards, never sent again, on gateways that take
   * no idempotency key. If it throws (the lease was lost), nothing is sent and the outcome is unknown.
   */
  onSubmit?: (() => Promise<void>) | undefined
}

export interface RefundRequest {
  /** One per refund: `<charge key>:refund:<n>`; a retry of the same refund reuses it. */
  idempotencyKey: string
  storeId: string
  /** The idempotency key of the charge being refunded. */
  chargeIdempotencyKey: string
  /** What the gateway called the charge when it succeeded. */
  gatewayChargeId: string | null
  /** The platform order the charge paid (platform gateway). */
  orderId?: string | undefined
  /** Integer minor units, at most what is left of the charge. */
  amount: number
  currency: string
  reason?: string | undefined
  /** As for charges: called just before the request that can move money; if it throws, nothing is sent. */
  onSubmit?: (() => Promise<void>) | undefined
}

export type RefundOutcome =
  | { status: 'succeeded'; gatewayRefundId: string }
  /** Refused: no money moved. */
  | { status: 'failed'; message: string }
  | { status: 'unknown'; reason: string }

export type ChargeOutcome =
  | { status: 'succeeded'; gatewayChargeId: string }
  | { status: 'failed'; failureCode: FailureCode; failureMessage: string }
  /**
   * `notSent`: the gateway is certain the payment was refused before anything was done (a 429, a
   * connection that never opened): the engine may send it again on the same charge, even on a
   * gateway that takes no idempotency key, instead of only looking it up.
   */
  | { status: 'unknown'; reason: string; notSent?: boolean }

/** A postal address as subscriptions keep it. */
export interface OrderAddress {
  name: string
  line1: string
  line2?: string | null | undefined
  city: string
  state?: string | null | undefined
  postal_code: string
  country: string
  phone?: string | null | undefined
}

/** What the platform needs to raise the order a renewal pays (platform gateway only). */
export interface RenewalOrder {
  platformProductId: string
  /** The catalog variant, for a product with variants. */
  platformVariantId: string | null
  quantity: number
  /** The subscription's price for one unit, before its discount, in integer minor units. */
  unitAmount: number
  /** Lines before the discount (the charge's `subtotal`) and the discount on them, in integer minor units. */
  subtotal: number
  discountAmount: number
  /**
   * The store's shipping policy for this renewal: `amount` is what it ships for whatever the platform
   * quotes (`checkout_rate`, `flat`, `free`), or null to take the platform's quote (`requote`);
   * `method` is the method to pick among the platform's options (the checkout's), else the cheapest.
   */
  shipping: { amount: number | null; method: string | null }
  /** The charge's amount as the claim priced it, in integer minor units; the platform's checkout prices the order itself. */
  amount: number
  /** One-time add-ons, extra product lines of the same order, each at its own price (never discounted). */
  addOns?: RenewalOrderLine[]
  currency: string
  email: string
  /** The customer who owns the stored instrument; the platform refuses a card of someone else (30051). */
  platformCustomerId: string | null
  /** Required by the platform's orders; the shipping address stands in when there is none. */
  billingAddress: OrderAddress | null
  shippingAddress: OrderAddress | null
}

/** A product line of a renewal order beside the subscription's own. */
export interface RenewalOrderLine {
  platformProductId: string
  quantity: number
  /** The price of one unit, in integer minor units. */
  unitAmount: number
  /** unit price x quantity, in integer minor units. */
  amount: number
  /** The one-time add-on this line is (module onetimes). */
  onetimeId?: string | null
}

/** An item the platform has less of than the renewal wants; `lines`: 0 is the subscription's own, n the n-th add-on. */
export interface ShortItem {
  text: string
  lines: number[]
  available: number
}

export type StockOutcome =
  /** `unchecked`: why the stock could not be read (a token without the scopes): the cart is left to refuse what is not sold. */
  | { status: 'checked'; short: ShortItem[]; unchecked?: string }
  | { status: 'failed'; failureCode: FailureCode; failureMessage: string }
  | { status: 'unknown'; reason: string }

/** What the platform priced a renewal at: the charge's shipping and tax, and the whole it pays. */
export interface PlatformPricing {
  shippingAmount: number
  shippingMethod: string | null
  taxAmount: number
  amount: number
}

export type OrderOutcome =
  /** `priced`: the order's figures, when the platform priced it (its checkout); the charge takes them before it is paid. */
  | { status: 'created'; orderId: string; priced?: PlatformPricing }
  | { status: 'failed'; failureCode: FailureCode; failureMessage: string }
  /** `refused`: the platform refused (422) making the cart or the order: nothing was made, possibly for stock. */
  | { status: 'unknown'; reason: string; refused?: 'cart' | 'order' }

export interface PaymentGateway {
  readonly name: GatewayName
  /**
   * True when a second `charge` with the same idempotency key can never move money again (the
   * gateway deduplicates by key). Otherwise a charge sent once is only ever looked up afterwards.
   */
  readonly honoursIdempotencyKeys: boolean
  /**
   * Raises the order a renewal pays, for gateways that pay orders (the platform's payments API does).
   * Called once per charge before `charge`, under the charge's idempotency key; the engine stores
   * the order id on the charge, so a retry after a crash asks again with the same key.
   */
  createOrder?(request: ChargeRequest, order: RenewalOrder): Promise<OrderOutcome>
  /**
   * What the platform has in stock of the order's lines (gateways with a catalogue): the items it has
   * less of than the order wants. Moves nothing; asked before the order while none can exist yet.
   */
  checkStock?(request: ChargeRequest, order: RenewalOrder): Promise<StockOutcome>
  /**
   * For an order with nothing to pay (a renewal discounted to nothing, as its checkout priced it): moves
   * the order on to fulfilment without a payment, so it ships. Repeating it is harmless. Gateways
   * without orders have nothing to release: the engine settles such a charge as paid without asking.
   */
  releaseUnpaidOrder?(request: ChargeRequest): Promise<ChargeOutcome>
  /** Charges once per idempotency key; never throws for a payment outcome (see the promises above). */
  charge(request: ChargeRequest): Promise<ChargeOutcome>
  /**
   * What became of an earlier charge with this request's key: its outcome; `undefined` when the
   * gateway has no trace of it (no money moved, so charging again with the same key is safe); or
   * 'unknown' when the gateway still cannot tell, and the engine should ask again later.
   */
  lookup(request: ChargeRequest): Promise<ChargeOutcome | undefined>
  /** Refunds part or all of a succeeded charge, once per refund idempotency key; never throws for a refund outcome. */
  refund(request: RefundRequest): Promise<RefundOutcome>
}

/**
 * The idempotency key of one attempt to collect one period. A retry of the same attempt (after a
 * crash or an unknown outcome) reuses it; a dunning retry is a new attempt and gets a new key.
 */
export function chargeIdempotencyKey(subscriptionId: string, periodStart: Date, attempt: number): string {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be a positive integer, got ${attempt}`)
  return `${subscriptionId}:${periodStart.toISOString()}:${attempt}`
}
