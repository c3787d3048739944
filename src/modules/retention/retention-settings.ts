import { invalidField } from '../../lib/errors.ts'
import type { CancellationReasonValue, RetentionOfferValue } from '../stores/stores.tables.ts'

/**
 * The store settings `cancellation_reasons` and `retention_offers`: what the schema cannot say
 * (unique codes, one offer of each type), and how they are written (jsonb, as text).
 */

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
