import { Type, type Static } from 'typebox'
import { StringEnum } from '../../http/schemas.ts'
import { invalidField } from '../../lib/errors.ts'
import type { CancellationReasonValue, RetentionOfferValue } from './stores.tables.ts'

/**
 * The store settings `cancellation_reasons` and `retention_offers`: what the schema cannot say
 * (unique codes, one offer of each type), and how they are written (jsonb, as text).
 */

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

interface RetentionSettingsInput {
  cancellation_reasons?: CancellationReasonValue[] | undefined
  retention_offers?: RetentionOfferValue[] | undefined
}

export function checkRetentionSettings(input: RetentionSettingsInput, at: string): void {
  const reasons = input.cancellation_reasons ?? []
  const codes = new Set<string>()
  reasons.forEach((reason, index) => {
    if (codes.has(reason.code)) throw invalidField(`${at}/cancellation_reasons/${index}/code`, `repeats the code ${reason.code}`)
    codes.add(reason.code)
  })
  const types = new Set<string>()
  ;(input.retention_offers ?? []).forEach((offer, index) => {
    if (types.has(offer.type)) throw invalidField(`${at}/retention_offers/${index}/type`, `repeats a ${offer.type} offer: at most one of each type`)
    types.add(offer.type)
  })
}

/** The columns to write for the settings named (replacing the whole list); nothing for those left out. */
export function retentionSettingsUpdate(input: RetentionSettingsInput): { cancellation_reasons?: string; retention_offers?: string } {
  return {
    ...(input.cancellation_reasons ? { cancellation_reasons: JSON.stringify(input.cancellation_reasons) } : {}),
    ...(input.retention_offers ? { retention_offers: JSON.stringify(input.retention_offers) } : {}),
  }
}
