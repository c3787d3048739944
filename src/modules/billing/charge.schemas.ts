import { Type, type Static } from 'typebox'
import { Currency, Id, Nullable, PageQuery, Ref, StringEnum, Timestamp } from '../../http/schemas.ts'
import { MAX_AMOUNT, MAX_CHARGE_AMOUNT, MAX_RENEWAL_AMOUNT } from '../../lib/money.ts'
import { BillingIssue } from '../subscriptions/index.ts'

export const CHARGE_STATUSES = ['pending', 'succeeded', 'failed', 'requires_review'] as const

/** What the charge list filters by (GET /charges), a page at a time; the charges export takes the same filters. */
export const ChargeListQuery = Type.Object(
  {
    ...PageQuery,
    subscription_id: Type.Optional(Id('sub')),
    subscriber_id: Type.Optional(Id('cus', "Every charge of this subscriber's subscriptions")),
    status: Type.Optional(StringEnum(CHARGE_STATUSES)),
  },
  { additionalProperties: false },
)

export const ChargeLineItem = Type.Object(
  {
    type: StringEnum(['subscription', 'onetime'] as const),
    product_id: Id('prod'),
    onetime_id: Nullable(Id('ot'), { description: 'The add-on this line charges (type onetime)' }),
    quantity: Type.Integer({ minimum: 1 }),
    unit_amount: Type.Integer({ minimum: 0 }),
    amount: Type.Integer({ minimum: 0, description: 'unit_amount x quantity, before the discount' }),
    discount_amount: Type.Integer({ minimum: 0, description: "The discount on this line (the subscription's own line only)" }),
  },
  { additionalProperties: false },
)

export const REFUND_STATUSES = ['none', 'partial', 'full'] as const

/** One refund of a charge, as the merchant reads it (docs/contract.md, Refunds). */
export const Refund = Type.Object(
  {
    id: Id('re'),
    object: Type.Literal('refund'),
    amount: Type.Integer({ minimum: 1, maximum: MAX_CHARGE_AMOUNT, description: 'Integer minor units given back (or asked for, while pending)' }),
    currency: Currency,
    reason: Nullable(Type.String({ description: "The merchant's reason as given with the refund, or why the service refunded by itself (`automatic`); null when none was given" })),
    automatic: Type.Boolean({ description: 'True when the service refunded by itself: a renewal that succeeded after its subscription left billing' }),
    status: StringEnum(['pending', 'succeeded', 'failed'] as const, { description: 'pending: the gateway has not answered yet; failed: the gateway refused it and nothing moved' }),
    failure_message: Nullable(Type.String({ description: "The gateway's refusal, when failed" })),
    created_at: Timestamp,
    settled_at: Nullable(Timestamp, { description: 'When the gateway answered' }),
  },
  { $id: 'Refund', title: 'Refund', additionalProperties: false },
)
export type RefundView = Static<typeof Refund>

/** One attempt to collect one period: it names the vault instrument by id only, never card data. */
export const Charge = Type.Object(
  {
    id: Id('ch'),
    object: Type.Literal('charge'),
    subscription_id: Id('sub'),
    amount: Type.Integer({ minimum: 0, maximum: MAX_CHARGE_AMOUNT, description: 'Integer minor units collected: `subtotal` - `discount_amount` + `shipping_amount` + `tax_amount`, never below 0' }),
    subtotal: Type.Integer({ minimum: 0, maximum: MAX_RENEWAL_AMOUNT, description: "Integer minor units before the discount: the subscription's price x quantity plus its add-ons (`line_items`)" }),
    discount_amount: Type.Integer({ minimum: 0, maximum: MAX_RENEWAL_AMOUNT, description: "Integer minor units the subscription's discount took off (its own line only; a percentage rounded half up, a fixed amount capped at the line)" }),
    shipping_amount: Type.Integer({ minimum: 0, maximum: MAX_AMOUNT, description: "Integer minor units of shipping, by the store's `renewal_shipping` policy; not taxed, not discounted" }),
    shipping_method: Nullable(Type.String({ description: 'The shipping method the renewal ships by, when known' })),
    tax_amount: Type.Integer({ minimum: 0, maximum: MAX_CHARGE_AMOUNT, description: "Integer minor units of tax: the platform checkout's on a platform store, `test_tax_rate_bps` of the discounted subtotal on the test gateway" }),
    line_items: Type.Array(ChargeLineItem, { description: "What the charge pays: the subscription's line first, then each one-time add-on" }),
    currency: Currency,
    status: StringEnum(CHARGE_STATUSES, {
      description: 'pending: the gateway was asked and has not answered yet; requires_review: its outcome stayed unknown past the grace period, or could not be recorded, and an admin resolves it',
    }),
    amount_refunded: Type.Integer({ minimum: 0, maximum: MAX_CHARGE_AMOUNT, description: 'Integer minor units refunded so far (refunds whose answer is still awaited are not counted)' }),
    refund_status: Type.Optional(
      StringEnum(REFUND_STATUSES, {
        description:
          '`none`: nothing refunded; `partial`: some of `amount` refunded; `full`: all of it (`amount_refunded` = `amount`). Refunds still awaiting the gateway do not count. ' +
          'Every charge the API answers has it; only charge events recorded before it existed (stored as they were sent) lack it',
      }),
    ),
    refunds: Type.Optional(
      Type.Array(Ref(Refund), {
        description: "Every refund of the charge, oldest first, with its reason: in the admin API's charges and in charge events. The portal's charges leave it out (a reason is the merchant's note)",
      }),
    ),
    review: Nullable(BillingIssue, { description: 'Why the charge requires review; null otherwise' }),
    attempt: Type.Integer({ minimum: 1, description: '1 for the renewal, 2.. for retries of the same period: dunning retries, and tries again after an item was out of stock' }),
    payment_instrument_id: Type.String(),
    platform_order_id: Nullable(Type.String({ description: 'The renewal order on the commerce platform this charge pays (live stores)' })),
    failure_code: Nullable(Type.String({ example: 'card_declined' })),
    failure_message: Nullable(Type.String()),
    next_retry_at: Nullable(Timestamp),
    period_start: Timestamp,
    period_end: Timestamp,
    created_at: Timestamp,
    settled_at: Nullable(Timestamp),
  },
  { $id: 'Charge', title: 'Charge', additionalProperties: false },
)
export type ChargeView = Static<typeof Charge>

const RenewalAmount = (description: string) => Type.Integer({ minimum: 0, maximum: MAX_RENEWAL_AMOUNT, description })

/** The next renewal charge as it stands, with the charge's own names (docs/contract.md, Upcoming renewal). */
export const UpcomingRenewal = Type.Object(
  {
    object: Type.Literal('upcoming_renewal'),
    subscription_id: Id('sub'),
    next_charge_at: { ...Timestamp, description: 'When it is charged: after a skipped renewal the one after it, in dunning the next retry, for a pending subscription its first charge' },
    period_start: { ...Timestamp, description: 'The period (or prepaid block) it pays, as the charge will show it' },
    period_end: Timestamp,
    currency: Currency,
    line_items: Type.Array(ChargeLineItem, { description: "As the charge will carry them: the subscription's line first, then each pending one-time add-on" }),
    subtotal: RenewalAmount("Integer minor units before the discount: the subscription's price x quantity plus its pending add-ons"),
    discount_amount: RenewalAmount("Integer minor units the subscription's discount takes off, as the renewal applies it (its own line only; a percentage rounded half up, a fixed amount capped at the line)"),
    shipping_amount: Type.Integer({ minimum: 0, maximum: MAX_AMOUNT, description: "Integer minor units of shipping by the store's `renewal_shipping` policy (an estimate on a platform store: the checkout quotes it at renewal)" }),
    shipping_method: Nullable(Type.String({ description: 'The shipping method the renewal ships by, when known' })),
    tax_amount: RenewalAmount("Integer minor units of tax: `test_tax_rate_bps` of the discounted subtotal on the test gateway; on a platform store an estimate (the checkout's tax is known only at renewal): the rate the latest paid renewal was taxed at, on these goods"),
    amount: Type.Integer({ minimum: 0, maximum: MAX_CHARGE_AMOUNT, description: 'Integer minor units to be collected: `subtotal` - `discount_amount` + `shipping_amount` + `tax_amount`' }),
  },
  { $id: 'UpcomingRenewal', title: 'UpcomingRenewal', additionalProperties: false },
)
export type UpcomingRenewalView = Static<typeof UpcomingRenewal>
