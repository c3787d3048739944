import { Type, type Static } from 'typebox'
import { Nullable, PageQuery, StringEnum } from '../../http/schemas.ts'
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
