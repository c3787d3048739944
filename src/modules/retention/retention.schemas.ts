import { Type } from 'typebox'
import { StringEnum } from '../../http/schemas.ts'
import { RETENTION_OFFER_TYPES } from '../stores/index.ts'

/** The portal's shape of the retention offers that apply to one subscription (docs/contract.md). */

export const RetentionOfferType = StringEnum(RETENTION_OFFER_TYPES)

/** What the portal lists for one subscription: the offers that apply to it now. */
export const ApplicableRetentionOffers = Type.Object(
  {
    data: Type.Array(
      Type.Object(
        {
          type: RetentionOfferType,
          days: Type.Optional(Type.Integer({ minimum: 1, maximum: 365, description: 'pause: for how many days' })),
          code: Type.Optional(Type.String({ description: 'discount: the code applied' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
)
