import { Type, type Static } from 'typebox'
import { StringEnum } from '../../http/schemas.ts'

/** The store settings and portal shapes of cancellation reasons and retention offers (docs/contract.md). */

export const MAX_CANCELLATION_REASONS = 20
export const RETENTION_OFFER_TYPES = ['pause', 'skip', 'discount'] as const
export type RetentionOfferType = (typeof RETENTION_OFFER_TYPES)[number]

export const CancellationReason = Type.Object(
  {
    code: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$', description: 'Stable code a cancellation names as `reason_code`: lower-case letters, digits, `_` and `-`', example: 'too_expensive' }),
    label: Type.String({ minLength: 1, maxLength: 200, description: 'What the subscriber reads', example: 'It costs too much' }),
  },
  { additionalProperties: false },
)

export const CancellationReasons = Type.Array(CancellationReason, {
  maxItems: MAX_CANCELLATION_REASONS,
  description: `Reasons a subscriber may pick when cancelling (at most ${MAX_CANCELLATION_REASONS}, codes unique), in the order shown; \`[]\`: only free text`,
})

export const PauseOffer = Type.Object(
  { type: Type.Literal('pause'), days: Type.Integer({ minimum: 1, maximum: 365, description: 'Paused for this many days, then resumed by itself' }) },
  { additionalProperties: false },
)
export const SkipOffer = Type.Object({ type: Type.Literal('skip') }, { additionalProperties: false, description: 'Skip the next renewal' })
export const DiscountOffer = Type.Object(
  { type: Type.Literal('discount'), code: Type.String({ minLength: 1, maxLength: 64, description: "One of the store's discount codes, applied to the subscription" }) },
  { additionalProperties: false },
)
export const RetentionOffer = Type.Union([PauseOffer, SkipOffer, DiscountOffer])
export type RetentionOfferInput = Static<typeof RetentionOffer>

export const RetentionOffers = Type.Array(RetentionOffer, {
  maxItems: RETENTION_OFFER_TYPES.length,
  description: 'Offers the portal shows before a cancellation is confirmed, in this order; at most one of each type',
})

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
