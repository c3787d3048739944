import { Type, type Static } from 'typebox'
import { Currency, Id, Nullable, PageOf, PageQuery, Ref, StringEnum, Timestamp } from '../../http/schemas.ts'
import { MAX_AMOUNT } from '../../lib/money.ts'

export const DISCOUNT_TYPES = ['percentage', 'fixed_amount'] as const
export const DISCOUNT_DURATIONS = ['once', 'repeating', 'forever'] as const

const Code = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$',
  description: 'Letters, digits, `-` and `_`; unique per store whatever the case (`SAVE20` and `save20` are one code), matched case-insensitively',
  example: 'SAVE20',
})
const Value = Type.Integer({ minimum: 1, maximum: MAX_AMOUNT, description: '`percentage`: percent off, 1-100; `fixed_amount`: integer minor units of `currency` off each charge' })
const Cycles = Type.Integer({ minimum: 1, maximum: 120, description: '`repeating` only: how many charges it covers' })
const PlanIds = Type.Array(Id('plan'), { maxItems: 100, uniqueItems: true, description: 'The plans it may be used on; empty: every plan' })
const Redemptions = Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'How many subscriptions may use it, in all' })

export const Discount = Type.Object(
  {
    id: Id('disc'),
    object: Type.Literal('discount'),
    code: Type.String(),
    type: StringEnum(DISCOUNT_TYPES),
    value: Value,
    currency: Nullable(Currency, { description: '`fixed_amount` only' }),
    duration: StringEnum(DISCOUNT_DURATIONS, { description: 'once: the next charge only; repeating: `duration_in_cycles` charges; forever: every charge while it is applied' }),
    duration_in_cycles: Nullable(Cycles),
    applies_to_plan_ids: PlanIds,
    max_redemptions: Nullable(Redemptions),
    times_redeemed: Type.Integer({ minimum: 0, description: 'Applications to a subscription so far (checkout, admin or portal), one per application' }),
    starts_at: Nullable(Timestamp, { description: "Not usable before, on the store's clock" }),
    ends_at: Nullable(Timestamp, { description: "Not usable from then on, on the store's clock" }),
    active: Type.Boolean({ description: 'false: not usable; subscriptions that carry it keep it' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Discount', title: 'Discount', additionalProperties: false },
)
export type DiscountView = Static<typeof Discount>

export const CreateDiscountBody = Type.Object(
  {
    code: Code,
    type: StringEnum(DISCOUNT_TYPES),
    value: Value,
    currency: Type.Optional(Currency),
    duration: StringEnum(DISCOUNT_DURATIONS),
    duration_in_cycles: Type.Optional(Cycles),
    applies_to_plan_ids: Type.Optional(PlanIds),
    max_redemptions: Type.Optional(Nullable(Redemptions)),
    starts_at: Type.Optional(Nullable(Timestamp)),
    ends_at: Type.Optional(Nullable(Timestamp)),
    active: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
)
export type CreateDiscountInput = Static<typeof CreateDiscountBody>

/** What may change once made; the terms (type, value, currency, duration) never do. */
export const UpdateDiscountBody = Type.Object(
  {
    code: Type.Optional(Code),
    applies_to_plan_ids: Type.Optional(PlanIds),
    max_redemptions: Type.Optional(Nullable(Redemptions)),
    starts_at: Type.Optional(Nullable(Timestamp)),
    ends_at: Type.Optional(Nullable(Timestamp)),
    active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
)
export type UpdateDiscountInput = Static<typeof UpdateDiscountBody>

export const DiscountListQuery = Type.Object(
  {
    ...PageQuery,
    active: Type.Optional(Type.Boolean()),
    code: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The code, any case' })),
  },
  { additionalProperties: false },
)

export const DiscountPage = PageOf(Ref(Discount), 'A page of discounts, newest first')

export const ApplyDiscountBody = Type.Object({ code: Type.String({ minLength: 1, maxLength: 64, description: 'A discount code of the store, any case' }) }, { additionalProperties: false })
