import type { PlanInterval, ShippingAddressValue } from '../../db/database.ts'
import { containsCardNumber } from '../../lib/card-data.ts'
import { storableName } from '../../lib/printable-text.ts'
import type { ImportRowError } from './imports.tables.ts'

/**
 * One row of a file as the import understands it, whatever its format: what the formats
 * (native-format.ts, recharge-format.ts) read from the cells, before the catalogue, the platform's
 * customers and their stored cards are matched (import-matching.ts). Pure data.
 */
export interface ImportCandidate {
  /** The row's number in the file, the header being row 1. */
  row: number
  externalId: string
  email: string
  name: string | null
  /** Named by the file (native, or an optional column); else found by email on a platform store. */
  platformCustomerId: string | null
  product: { planId: string | null; platformProductId: string | null; title: string | null }
  variant: { platformVariantId: string | null; title: string | null }
  quantity: number
  /** Per unit per period: minor units (native) or the file's decimal major units, read once the currency is known (recharge). */
  price: { minor: number; currency: string } | { decimal: string }
  interval: PlanInterval
  intervalCount: number
  /** Periods one charge pays for (a prepaid block); null for one. */
  prepaidCycles: number | null
  schedule: ImportedSchedule
  status: 'active' | 'paused'
  pausedAt: Date | null
  resumeAt: Date | null
  skipNext: boolean
  cancelAtPeriodEnd: boolean
  instrumentToken: string | null
  shippingAddress: ShippingAddressValue | null
  billingAddress: ShippingAddressValue | null
}

/** The subscription's billing dates, as the schedule's invariant keeps them (subscriptions/subscription-schedule.ts). */
export interface ImportedSchedule {
  billing_anchor_at: Date | null
  period_index: number
  current_period_start: Date | null
  current_period_end: Date | null
  /** Null only for a paused subscription with no renewal scheduled (native). */
  next_charge_at: Date | null
  prepaid_cycles_remaining: number | null
}

/** What a format answers for one row: the candidate, or every problem found in it. */
export type ParsedRow = { candidate: ImportCandidate } | { errors: ImportRowError[] }

/** A row's cells by column name; a column the header lacks reads as empty. */
export type Cells = Readonly<Record<string, string | undefined>>

export const MAX_EXTERNAL_ID = 200
const MAX_TEXT = 250
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
export const PLATFORM_ID = /^[1-9][0-9]{0,9}$/
export const MAX_QUANTITY = 1_000

/** Collects a row's problems while its cells are read, so one pass names them all. */
export class RowReader {
  readonly errors: ImportRowError[] = []
  readonly row: number
  private readonly cells: Cells
  constructor(row: number, cells: Cells) {
    this.row = row
    this.cells = cells
  }

  fail(column: string | undefined, code: string, detail: string): undefined {
    this.errors.push({ row: this.row, ...(column ? { column } : {}), code, detail })
    return undefined
  }

  /** The trimmed cell, or null when empty. A card number is never kept, nor echoed in the error. */
  text(column: string, max = MAX_TEXT): string | null {
    const raw = this.cells[column]?.trim() ?? ''
    if (raw === '') return null
    if (containsCardNumber(raw)) return this.fail(column, 'card_data_rejected', 'looks like a card number: card numbers are never imported (the value is not repeated here)') ?? null
    // The file was not UTF-8 here: the decoder put U+FFFD where its bytes were, and guessing the text would keep a wrong email or name.
    if (raw.includes('\uFFFD')) return this.fail(column, 'invalid_encoding', 'is not valid UTF-8: save the file as UTF-8') ?? null
    if ([...raw].length > max) return this.fail(column, 'too_long', `is longer than ${max} characters`) ?? null
    return storableName(raw, max)
  }

  required(column: string, max = MAX_TEXT): string | undefined {
    const value = this.text(column, max)
    if (value === null) {
      if (!this.errors.some((e) => e.column === column)) this.fail(column, 'required', 'is empty')
      return undefined
    }
    return value
  }

  email(column: string): string | undefined {
    const value = this.required(column)
    if (value === undefined) return undefined
    if (!EMAIL.test(value)) return this.fail(column, 'invalid_email', 'is not an email address')
    return value.toLowerCase()
  }

  /** A whole number within bounds; `fallback` when the cell is empty (undefined: required). */
  integer(column: string, min: number, max: number, fallback?: number | null): number | null | undefined {
    const value = this.text(column)
    if (value === null) return fallback === undefined ? this.fail(column, 'required', 'is empty') : fallback
    if (!/^-?\d+$/.test(value) || Number(value) < min || Number(value) > max) return this.fail(column, 'invalid_number', `must be a whole number from ${min} to ${max}`)
    return Number(value)
  }

  platformId(column: string): string | null | undefined {
    const value = this.text(column)
    if (value === null) return null
    if (!PLATFORM_ID.test(value)) return this.fail(column, 'invalid_id', 'must be a BigCommerce id (a positive whole number)')
    return value
  }

  /** An RFC 3339 time with its offset; null when empty. */
  time(column: string): Date | null | undefined {
    const value = this.text(column)
    if (value === null) return null
    const parsed = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value) ? new Date(value) : new Date(NaN)
    if (Number.isNaN(parsed.getTime())) return this.fail(column, 'invalid_date', 'must be an RFC 3339 time with its offset, like 2027-01-05T00:00:00Z')
    return parsed
  }

  boolean(column: string): boolean | undefined {
    const value = this.text(column)?.toLowerCase() ?? 'false'
    if (value === 'true' || value === '1' || value === 'yes') return true
    if (value === 'false' || value === '0' || value === 'no') return false
    return this.fail(column, 'invalid_boolean', 'must be true or false')
  }
}

/**
 * An address from its columns; null when none of them is filled. Held to the API's address rules
 * (ShippingAddress), so an imported address is one a checkout could have sent. `fallbackName` names
 * it when the file has no name column for it (the subscriber's name, else their email).
 */
export function addressOf(
  reader: RowReader,
  columns: { name?: string | null; line1: string; line2: string; city: string; state: string; postal_code: string; country: string; phone: string },
  fallbackName: string,
): ShippingAddressValue | null | undefined {
  const name = columns.name ? reader.text(columns.name, 200) : null
  const line1 = reader.text(columns.line1, 200)
  const line2 = reader.text(columns.line2, 200)
  const city = reader.text(columns.city, 100)
  const state = reader.text(columns.state, 100)
  const postal = reader.text(columns.postal_code, 20)
  const country = reader.text(columns.country)
  const phone = reader.text(columns.phone, 40)
  if (!line1 && !line2 && !city && !state && !postal && !country && !phone) return null
  if (!line1) return reader.fail(columns.line1, 'incomplete_address', 'the address has other parts but no first line')
  if (!city) return reader.fail(columns.city, 'incomplete_address', 'the address has no city')
  if (!postal) return reader.fail(columns.postal_code, 'incomplete_address', 'the address has no postal code')
  if (!country || !/^[A-Za-z]{2}$/.test(country)) return reader.fail(columns.country, 'invalid_country', 'must be the two-letter ISO country code')
  // The optional parts only when given, as a checkout keeps an address.
  return {
    name: name ?? [...fallbackName].slice(0, 200).join(''),
    line1,
    ...(line2 ? { line2 } : {}),
    city,
    ...(state ? { state } : {}),
    postal_code: postal,
    country: country.toUpperCase(),
    ...(phone ? { phone } : {}),
  }
}
