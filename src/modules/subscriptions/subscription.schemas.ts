import { Type, type Static, type TSchema } from 'typebox'
import { SEARCH_MAX_LENGTH } from './subscription-search.ts'
import { Amount, Currency, Id, Nullable, Ref, StringEnum, Timestamp } from '../../http/schemas.ts'
import { MAX_AMOUNT } from '../../lib/money.ts'

export const SUBSCRIPTION_STATUSES = ['pending', 'active', 'paused', 'past_due', 'cancelled', 'expired'] as const
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number]

export const ShippingAddress = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    line1: Type.String({ minLength: 1, maxLength: 200 }),
    line2: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    city: Type.String({ minLength: 1, maxLength: 100 }),
    state: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
    postal_code: Type.String({ minLength: 1, maxLength: 20 }),
    country: Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2', example: 'US' }),
    phone: Type.Optional(Nullable(Type.String({ maxLength: 40 }))),
  },
  { $id: 'ShippingAddress', title: 'ShippingAddress', additionalProperties: false },
)

/** Why billing stopped for a person to look at (a subscription's `billing_issue`, a charge's `review`). */
export const BillingIssue = Type.Object(
  {
    code: StringEnum(['renewal_failed', 'charge_requires_review', 'outcome_unknown', 'settlement_failed', 'payment_method_required'] as const, {
      description: 'renewal_failed: the renewal failed on this subscription\'s own data and is set aside until the subscription is changed; charge_requires_review: a charge waits for an admin to resolve it; outcome_unknown: the gateway never told whether the charge went through; settlement_failed: the outcome could not be recorded; payment_method_required: it was imported without a usable stored card, and renews once the subscriber (emailed a link) or an admin sets one',
    }),
    message: Type.String(),
    since: Timestamp,
  },
  { additionalProperties: false },
)

/** A checkout's shipping: the method the shopper chose and what it cost (docs/contract.md, Renewal pricing). */
export const CheckoutShipping = Type.Object(
  {
    method: Type.String({ minLength: 1, maxLength: 250, description: "The shipping method's name, as the store calls it (`requote` asks for it again by this name)" }),
    amount: Type.Integer({ minimum: 0, maximum: MAX_AMOUNT, description: 'Integer minor units the checkout paid for shipping, before tax' }),
  },
  { additionalProperties: false },
)

export const Subscription = Type.Object(
  {
    id: Id('sub'),
    object: Type.Literal('subscription'),
    store_hash: Type.String(),
    subscriber_id: Id('cus'),
    plan_id: Id('plan'),
    product_id: Id('prod'),
    platform_order_id: Type.String({ description: 'The platform order whose checkout created it; empty for an imported subscription' }),
    external_id: Nullable(Type.String(), { description: "The id another system gave it, when it was imported (`POST /api/v1/admin/imports`); null otherwise" }),
    status: StringEnum(SUBSCRIPTION_STATUSES),
    quantity: Type.Integer({ minimum: 1 }),
    amount: Amount,
    currency: Currency,
    interval: StringEnum(['day', 'week', 'month', 'year'] as const),
    interval_count: Type.Integer({ minimum: 1 }),
    payment_instrument_id: Type.String({ description: "The commerce platform vault's instrument id; never card data. Empty for an imported subscription that had no usable one (`billing_issue` `payment_method_required`)" }),
    shipping_address: Nullable(Type.Object(ShippingAddress.properties, { additionalProperties: false })),
    billing_address: Nullable(Type.Object(ShippingAddress.properties, { additionalProperties: false }), {
      description: 'The billing address of its renewal orders on the platform',
    }),
    platform_customer_id: Nullable(Type.String(), { description: 'The platform customer who pays: the stored instrument is theirs' }),
    platform_variant_id: Nullable(Type.String(), { description: 'The catalog variant its renewal orders carry' }),
    shipping: Nullable(CheckoutShipping, { description: "The shipping method and rate its checkout paid, kept for a store whose `renewal_shipping` is `checkout_rate`; null when the checkout named none" }),
    payment_instrument: Nullable(
      Type.Object(
        { brand: Nullable(Type.String()), last_4: Nullable(Type.String({ pattern: '^[0-9]{4}$' })) },
        { additionalProperties: false },
      ),
      { description: 'What the platform showed of the instrument when it was set (never more of the card); null when unknown' },
    ),
    start_at: { ...Timestamp, description: 'When it became or becomes active (after any trial)' },
    current_period_start: Nullable(Timestamp),
    current_period_end: Nullable(Timestamp),
    next_charge_at: Nullable(Timestamp),
    skip_next: Type.Boolean(),
    skip_reason: Type.Optional(Nullable(StringEnum(['requested', 'out_of_stock'] as const), {
      description: 'Why its latest skip was made: `requested` (`skip_next`, by the subscriber or an admin) or `out_of_stock` (the platform said an item of the renewal was out of stock; store setting `out_of_stock`); null before any. Absent in events recorded before this field existed',
    })),
    out_of_stock_since: Type.Optional(Nullable(Timestamp, {
      description: 'Set while the renewal of the unpaid period waits for an item to come back in stock (store policy `retry`): when it was first found out of stock. `next_charge_at` is the next try. Absent in events recorded before this field existed',
    })),
    paused_at: Nullable(Timestamp),
    past_due_at: Type.Optional(Nullable(Timestamp, { description: 'When it became past_due (its dunning retries used up); null unless past_due. The store cancels it `past_due_cancel_days` later. Absent in events recorded before this field existed' })),
    resume_at: Nullable(Timestamp),
    cancel_at_period_end: Type.Boolean(),
    cancelled_at: Nullable(Timestamp),
    cancellation_reason: Nullable(Type.String()),
    cancellation_reason_code: Nullable(Type.String(), { description: "The store's cancellation reason the cancellation named (`reason_code`), if any" }),
    gift: Nullable(
      Type.Object(
        { gifter_email: Type.String({ format: 'email' }), recipient_email: Type.String({ format: 'email' }), message: Nullable(Type.String()) },
        { additionalProperties: false },
      ),
    ),
    prepaid: Nullable(
      Type.Object({ cycles_total: Type.Integer({ minimum: 2 }), cycles_remaining: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
    ),
    latest_charge_id: Nullable(Id('ch'), { description: 'The most recent charge attempt' }),
    billing_issue: Nullable(BillingIssue, { description: 'Set while renewals are set aside for an admin; null when billing runs normally' }),
    discount: Nullable(
      Type.Object(
        {
          id: Id('disc'),
          code: Type.String(),
          type: StringEnum(['percentage', 'fixed_amount'] as const),
          value: Type.Integer({ minimum: 1, description: 'Percent off, or integer minor units off (in the subscription\'s currency)' }),
          cycles_remaining: Nullable(Type.Integer({ minimum: 1 }), { description: 'Charges it still covers; null: every charge (forever)' }),
        },
        { additionalProperties: false },
      ),
      { description: 'The discount applied to its renewals (its terms as they were when applied); null when none' },
    ),
    scheduled_price: Type.Optional(Nullable(
      Type.Object(
        {
          amount: Amount,
          currency: Currency,
          effective_at: { ...Timestamp, description: 'The renewal that first charges it: from the renewal whose period starts at or after this time on, `amount` is the price' },
        },
        { additionalProperties: false },
      ),
      {
        description:
          'A price change announced with notice (`POST /plans/{id}/price-change` with `applies_to` `existing_too`): the price its renewals move to, and from which renewal. ' +
          'Until then renewals charge `amount`; that renewal charges the new price and `amount` becomes it (`subscription.price_changed`). Null when none is coming. Absent in events recorded before this field existed',
      },
    )),
    created_at: Timestamp,
    updated_at: Timestamp,
    version: Type.Integer({ minimum: 1, description: 'Grows by one with every change' }),
  },
  { $id: 'Subscription', title: 'Subscription', additionalProperties: false },
)
export type SubscriptionView = Static<typeof Subscription>

export const CHANGE_REQUEST_STATUSES = ['pending', 'approved', 'rejected'] as const

export const ChangeRequest = Type.Object(
  {
    id: Id('cr'),
    object: Type.Literal('change_request'),
    subscription_id: Id('sub'),
    status: StringEnum(CHANGE_REQUEST_STATUSES),
    changes: Type.Object(
      {
        quantity: Type.Optional(Type.Integer({ minimum: 1 })),
        plan_id: Type.Optional(Id('plan')),
        interval: Type.Optional(StringEnum(['day', 'week', 'month', 'year'] as const)),
        interval_count: Type.Optional(Type.Integer({ minimum: 1 })),
      },
      { additionalProperties: false, minProperties: 1 },
    ),
    note: Nullable(Type.String()),
    decision_reason: Nullable(Type.String()),
    decided_at: Nullable(Timestamp),
    effective_at: Nullable(Timestamp, { description: 'When an approved change takes effect: the start of the next period' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'ChangeRequest', title: 'ChangeRequest', additionalProperties: false },
)
export type ChangeRequestView = Static<typeof ChangeRequest>

const Email = Type.String({ format: 'email', maxLength: 254 })
const PlanInterval = StringEnum(['day', 'week', 'month', 'year'] as const)

export const Subscriber = Type.Object(
  {
    id: Id('cus'),
    object: Type.Literal('subscriber'),
    store_hash: Type.String(),
    email: Email,
    name: Nullable(Type.String()),
    shipping_address: Nullable(Type.Object(ShippingAddress.properties, { additionalProperties: false })),
    platform_customer_id: Nullable(Type.String(), { description: 'The platform customer this subscriber is: checkouts find the subscriber by it first, and an email of another customer never changes it' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Subscriber', title: 'Subscriber', additionalProperties: false },
)
export type SubscriberView = Static<typeof Subscriber>

export const SubscriptionWithSubscriber = Type.Object(
  { ...Subscription.properties, subscriber: Ref(Subscriber) },
  { $id: 'SubscriptionWithSubscriber', title: 'SubscriptionWithSubscriber', additionalProperties: false },
)

const PaymentInstrumentId = Type.String({
  minLength: 1,
  maxLength: 200,
  description: "The commerce platform vault's instrument id (never a card number)",
  example: 'instr_9f8e7d',
})

/** A platform id (customer, variant): a positive integer, as a number or as its digits. */
function PlatformId(description: string) {
  return Type.Union([Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), Type.String({ pattern: '^[1-9][0-9]{0,9}$' })], { description })
}

export const CheckoutBody = Type.Object(
  {
    platform_order_id: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Integer({ minimum: 0 })], {
      description: 'The platform order that paid the first period; the same order twice creates nothing new',
    }),
    email: Email,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    shipping_address: Type.Optional(Nullable(Type.Object(ShippingAddress.properties, { additionalProperties: false }))),
    payment_instrument_id: PaymentInstrumentId,
    platform_customer_id: Type.Optional(PlatformId('The platform customer who owns the stored instrument; required when the store charges through the platform')),
    billing_address: Type.Optional(
      Nullable(Type.Object(ShippingAddress.properties, { additionalProperties: false }), {
        description: 'The billing address of the renewal orders; required when the store charges through the platform',
      }),
    ),
    items: Type.Array(
      Type.Object(
        {
          plan_id: Id('plan'),
          quantity: Type.Integer({ minimum: 1, maximum: 10_000 }),
          platform_variant_id: Type.Optional(PlatformId('The catalog variant the renewal orders carry, for a product with variants')),
          discount_code: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "A discount code of the store (any case) applied to this item's subscription from its first renewal" })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 50 },
    ),
    shipping: Type.Optional(Nullable(CheckoutShipping, { description: "The shipping the checkout paid: each item's subscription keeps it, and a store whose `renewal_shipping` is `checkout_rate` ships its renewals at this rate" })),
    start_at: Type.Optional({ ...Timestamp, description: 'A later start; the checkout still paid the first period' }),
    gift: Type.Optional(
      Type.Object(
        { recipient_email: Email, message: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))) },
        { additionalProperties: false, description: 'The recipient becomes the subscriber; the buyer is the gifter' },
      ),
    ),
  },
  { additionalProperties: false },
)
export type CheckoutInput = Static<typeof CheckoutBody>

export const CheckoutResult = Type.Object(
  { data: Type.Array(Ref(Subscription)) },
  { $id: 'CheckoutResult', title: 'CheckoutResult', additionalProperties: false, description: 'One subscription per item, in item order' },
)

/**
 * A body that may be left out. Fastify validates a missing body as null, so the schema admits null;
 * `Type.Optional` cannot express this (at the root it only changes the static type).
 */
export function OptionalBody<T extends TSchema>(schema: T) {
  return Nullable(schema, { description: 'May be left out: every field is optional' })
}

export const PauseBody = Type.Object(
  { resume_at: Type.Optional(Nullable({ ...Timestamp, description: 'Resume by itself then; must be in the future' })) },
  { additionalProperties: false },
)
export const CancelBody = Type.Object(
  {
    at_period_end: Type.Optional(Type.Boolean({ default: false, description: 'true: keep it until the paid period ends' })),
    reason: Type.Optional(Type.String({ maxLength: 500 })),
    reason_code: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "One of the store's `cancellation_reasons` codes (400 when it names none)" })),
  },
  { additionalProperties: false },
)
export const RescheduleBody = Type.Object(
  {
    next_charge_at: {
      ...Timestamp,
      description: "When the next renewal is charged: later than the store's current time, at most one year ahead on its calendar. The billing anchor moves there: later renewals follow one interval apart from it",
    },
  },
  { additionalProperties: false },
)
export const ReactivateBody = Type.Object(
  {
    next_charge_at: Type.Optional({
      ...Timestamp,
      description:
        "When the reactivated subscription is first charged: later than the store's current time, at most one year ahead on its calendar. " +
        'Active from now, nothing charged until then; the billing anchor is there. Without it, a new period starts now and is charged at once',
    }),
  },
  { additionalProperties: false },
)
export const SwapBody = Type.Object(
  {
    plan_id: Id('plan'),
    platform_variant_id: Type.Optional(
      Type.Union([...PlatformId('').anyOf, Type.Null()], {
        description: "The catalog variant from the next renewal (null for none): by default the new plan's variant, else the current one when the product stays the same; the same plan with another variant changes only the variant. In the portal only with the current plan, to a variant the platform sells now (`GET /api/v1/portal/subscriptions/{id}/variants`)",
      }),
    ),
  },
  { additionalProperties: false },
)
export const QuantityBody = Type.Object({ quantity: Type.Integer({ minimum: 1, maximum: 10_000 }) }, { additionalProperties: false })
export const IntervalBody = Type.Object(
  { interval: PlanInterval, interval_count: Type.Optional(Type.Integer({ minimum: 1, maximum: 365, default: 1 })) },
  { additionalProperties: false },
)
export const ShippingAddressBody = Type.Object({ shipping_address: Type.Object(ShippingAddress.properties, { additionalProperties: false }) }, { additionalProperties: false })
export const PaymentInstrumentBody = Type.Object({ payment_instrument_id: PaymentInstrumentId }, { additionalProperties: false })

export const ChangeRequestBody = Type.Object(
  {
    changes: Type.Object(
      {
        quantity: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
        plan_id: Type.Optional(Id('plan')),
        interval: Type.Optional(PlanInterval),
        interval_count: Type.Optional(Type.Integer({ minimum: 1, maximum: 365 })),
      },
      { additionalProperties: false, minProperties: 1 },
    ),
    note: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
)
export const DecisionBody = Type.Object({ reason: Type.Optional(Type.String({ maxLength: 500 })) }, { additionalProperties: false })

export const SubscriptionListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    status: Type.Optional(StringEnum(SUBSCRIPTION_STATUSES)),
    email: Type.Optional(Type.String({ minLength: 3, maxLength: 254, description: "The subscriber's email, exactly" })),
    plan_id: Type.Optional(Id('plan')),
    q: Type.Optional(
      Type.String({
        maxLength: SEARCH_MAX_LENGTH,
        description:
          "Search, case-insensitive: any part of the subscriber's email or name, a platform order id (the first order or a renewal's; `#1042` is order 1042), " +
          'a subscription id or the start of one, a subscriber id. Every character is matched as it is (`%` and `_` are not wildcards). Combines with the other filters.',
        example: 'lovelace',
      }),
    ),
    subscriber_id: Type.Optional(Id('cus')),
  },
  { additionalProperties: false },
)
export const ChangeRequestListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    status: Type.Optional(StringEnum(CHANGE_REQUEST_STATUSES)),
    subscription_id: Type.Optional(Id('sub')),
  },
  { additionalProperties: false },
)

export const subscriptionSchemas = [Subscriber, SubscriptionWithSubscriber, CheckoutResult]
