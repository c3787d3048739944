import { Type, type Static } from 'typebox'
import { Nullable, PageQuery, Ref, StringEnum, Timestamp } from '../../http/schemas.ts'
import { CancellationReasons } from '../stores/index.ts'
import { ShippingAddress, SUBSCRIPTION_STATUSES } from '../subscriptions/index.ts'

export const ProfileUpdateBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    shipping_address: Type.Optional(
      Nullable(Type.Object(ShippingAddress.properties, { additionalProperties: false }), {
        description: "The subscriber's default address; null clears it. Existing subscriptions keep their own (change them with shipping-address)",
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
)
export type ProfileUpdateInput = Static<typeof ProfileUpdateBody>

/** Like the admin list, without the filters that would name a subscriber: the session already does. */
export const PortalSubscriptionListQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(StringEnum(SUBSCRIPTION_STATUSES)) },
  { additionalProperties: false },
)

export const PageOnlyQuery = Type.Object({ ...PageQuery }, { additionalProperties: false })
export type PageOnlyInput = Static<typeof PageOnlyQuery>

/**
 * What the portal pages need to know about the subscriber's store: its name, its calendar and clock
 * (a date picker's "tomorrow" and "a year ahead" are the store's, its test clock included), how long
 * a past_due subscription waits before it is cancelled, and the reasons a cancellation may name.
 */
export const PortalStore = Type.Object(
  {
    object: Type.Literal('portal_store'),
    store_hash: Type.String(),
    name: Type.String({ description: "The store's name, as the portal shows it" }),
    timezone: Type.String({ description: 'IANA time zone; renewal dates follow its calendar', example: 'America/New_York' }),
    now: Timestamp,
    past_due_cancel_days: Type.Integer({ minimum: 1, maximum: 365, description: 'Days in past_due before a subscription is cancelled (from its `past_due_at`)' }),
    cancellation_reasons: CancellationReasons,
    reactivation: Type.Boolean({ description: 'Whether the subscriber may reactivate a cancelled subscription here (the store setting `portal_reactivation`)' }),
  },
  { additionalProperties: false, description: 'The store as the portal sees it' },
)
export type PortalStoreView = Static<typeof PortalStore>

/** A variant of the subscription's product, as the platform's catalogue lists it now. */
export const SubscriptionVariant = Type.Object(
  {
    platform_variant_id: Type.String({ pattern: '^[1-9][0-9]{0,9}$', description: 'The catalog variant: send it as `platform_variant_id` to swap with the current plan' }),
    sku: Type.String(),
    label: Type.String({ description: 'Its options, e.g. "Grind: Whole, Size: 1 kg"; the sku when it has none', example: 'Grind: Whole, Size: 1 kg' }),
    purchasable: Type.Boolean({ description: 'The store sells it now (not `purchasing_disabled`): only these can be changed to' }),
    current: Type.Boolean({ description: 'The variant the subscription renews with' }),
  },
  { $id: 'SubscriptionVariant', title: 'SubscriptionVariant', additionalProperties: false, description: "A variant of the subscription's product on the platform" },
)

export const SubscriptionVariantList = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(Ref(SubscriptionVariant)) },
  { additionalProperties: false, description: "The variants of the subscription's product, in the platform's order; empty when there is nothing to choose" },
)
export type SubscriptionVariantListView = Static<typeof SubscriptionVariantList>
