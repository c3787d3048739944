import { Type, type Static } from 'typebox'
import { Amount, Currency, Id, Nullable, PageOf, PageQuery, Ref, StringEnum, Timestamp } from '../../http/schemas.ts'

export const PLAN_INTERVALS = ['day', 'week', 'month', 'year'] as const

const StoreHash = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$', description: "The commerce platform's store hash", example: 'demo-store' })

const PlatformProductIdText = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9._:-]+$',
  description: "The commerce platform's product identifier",
  example: '112',
})

/** Platforms number their products; we accept the number or its text and always answer text. */
const PlatformProductIdInput = Type.Union([PlatformProductIdText, Type.Integer({ minimum: 0 })], {
  description: "The commerce platform's product identifier, as a string or an integer",
})

const Price = Type.Object(
  { amount: Amount, currency: Currency },
  { additionalProperties: false },
)

export const Product = Type.Object(
  {
    id: Id('prod'),
    object: Type.Literal('product'),
    store_hash: StoreHash,
    platform_product_id: PlatformProductIdText,
    name: Type.String(),
    description: Nullable(Type.String()),
    one_time_price: Nullable(Price, { description: 'The price of buying once, if the product is also sold that way: widgets show the saving' }),
    active: Type.Boolean({ description: 'Inactive products and their plans are hidden from public lists' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Product', title: 'Product', additionalProperties: false },
)
export type ProductView = Static<typeof Product>

export const Plan = Type.Object(
  {
    id: Id('plan'),
    object: Type.Literal('plan'),
    store_hash: StoreHash,
    product_id: Id('prod'),
    platform_product_id: PlatformProductIdText,
    name: Type.String(),
    amount: Amount,
    currency: Currency,
    interval: StringEnum(PLAN_INTERVALS),
    interval_count: Type.Integer({ minimum: 1, maximum: 365, description: 'Bill every interval_count intervals' }),
    trial_days: Type.Integer({ minimum: 0, maximum: 730 }),
    prepaid_cycles: Nullable(Type.Integer({ minimum: 2, maximum: 120 }), { description: 'Cycles paid at once per charge; null when each cycle is charged' }),
    platform_variant_id: Nullable(Type.String(), { description: "The catalog variant the plan sells (a size, a grind); a checkout item that names none takes it, a swap onto the plan moves the subscription to it" }),
    b2b: Type.Boolean({ description: 'Subscribers propose changes as change requests for the merchant to approve' }),
    active: Type.Boolean({ description: 'Archived plans stay readable but cannot be subscribed to' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Plan', title: 'Plan', additionalProperties: false },
)
export type PlanView = Static<typeof Plan>

export const CreateProductBody = Type.Object(
  {
    platform_product_id: PlatformProductIdInput,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
    one_time_price: Type.Optional(Nullable(Price)),
    active: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
)
export type CreateProductInput = Static<typeof CreateProductBody>

export const UpdateProductBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
    one_time_price: Type.Optional(Nullable(Price)),
    active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
)
export type UpdateProductInput = Static<typeof UpdateProductBody>

/** A platform variant id: a positive integer, as a number or as its digits (kept as its digits), or null for none. */
const VariantIdOrNull = (description: string) =>
  Type.Union([Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), Type.String({ pattern: '^[1-9][0-9]{0,9}$' }), Type.Null()], { description })

export const CreatePlanBody = Type.Object(
  {
    product_id: Id('prod'),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    amount: Amount,
    currency: Currency,
    interval: StringEnum(PLAN_INTERVALS),
    interval_count: Type.Optional(Type.Integer({ minimum: 1, maximum: 365, default: 1 })),
    trial_days: Type.Optional(Type.Integer({ minimum: 0, maximum: 730, default: 0 })),
    prepaid_cycles: Type.Optional(Nullable(Type.Integer({ minimum: 2, maximum: 120 }))),
    platform_variant_id: Type.Optional(VariantIdOrNull('The catalog variant the plan sells (a positive integer, or its digits); null for none')),
    b2b: Type.Optional(Type.Boolean({ default: false })),
    active: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
)
export type CreatePlanInput = Static<typeof CreatePlanBody>

/** Price, currency and cadence are fixed once created: subscribers agreed to them. Make a new plan and archive this one instead. */
export const UpdatePlanBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    trial_days: Type.Optional(Type.Integer({ minimum: 0, maximum: 730 })),
    platform_variant_id: Type.Optional(VariantIdOrNull('The catalog variant the plan sells from now on, null for none; subscriptions made before keep their own')),
    b2b: Type.Optional(Type.Boolean()),
    active: Type.Optional(Type.Boolean({ description: 'false archives the plan' })),
  },
  { additionalProperties: false, minProperties: 1 },
)
export type UpdatePlanInput = Static<typeof UpdatePlanBody>

export const AdminProductListQuery = Type.Object(
  { ...PageQuery, active: Type.Optional(Type.Boolean()), platform_product_id: Type.Optional(PlatformProductIdText) },
  { additionalProperties: false },
)

export const AdminPlanListQuery = Type.Object(
  { ...PageQuery, product_id: Type.Optional(Id('prod')), active: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
)

export const PublicProductListQuery = Type.Object({ ...PageQuery, store_hash: StoreHash }, { additionalProperties: false })

export const PublicPlanListQuery = Type.Object(
  { ...PageQuery, store_hash: StoreHash, product_id: Type.Optional(Id('prod')) },
  { additionalProperties: false },
)

export const StorefrontPlansQuery = Type.Object(
  { ...PageQuery, store_hash: StoreHash, platform_product_id: PlatformProductIdText },
  { additionalProperties: false },
)

export const LegacyStorefrontParams = Type.Object({ platform_product_id: PlatformProductIdText }, { additionalProperties: false })
export const LegacyStorefrontQuery = Type.Object({ ...PageQuery, store_hash: StoreHash }, { additionalProperties: false })

export const ProductPage = PageOf(Ref(Product), 'A page of products, newest first')
export const PlanPage = PageOf(Ref(Plan), 'A page of plans, newest first')

export const StorefrontPlans = Type.Object(
  {
    data: Type.Array(Ref(Plan), { description: 'Active plans of the product, shortest billing cadence first, then lowest price' }),
    next_cursor: Nullable(Type.String(), { description: 'Pass as `cursor` for the next page; null on the last page' }),
    product: Type.Optional(Ref(Product)),
  },
  {
    $id: 'StorefrontPlans',
    title: 'StorefrontPlans',
    description: 'A page of the plans a widget may offer. `product` (names, one-time price) is present, on every page, when the store knows the product.',
    additionalProperties: false,
  },
)
export type StorefrontPlansView = Static<typeof StorefrontPlans>

export const catalogSchemas = [Product, Plan, StorefrontPlans]
