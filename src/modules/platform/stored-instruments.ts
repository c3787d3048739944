import type { StoreRow } from '../../db/database.ts'
import { AppError } from '../../lib/errors.ts'
import type { PlatformAccess } from './connections.ts'
import type { PlatformClient } from './platform-client.ts'
import { platformUnavailable, waitedRead } from './waited-read.ts'

/**
 * A platform customer's stored instruments (`GET /v3/customers/{customerId}/stored-instruments`,
 * docs/platform-api.md §6.3: a bare array keyed by `type`), and the ownership check every
 * instrument set at checkout or changed later passes (docs/contract.md, "The commerce platform").
 *
 * Only what the contract lets a subscriber see is kept: for a card its token, brand, last 4, expiry
 * and default flag; never the issuer identification number (BIN), the card's billing address, a
 * PayPal account's email or a bank account's masked number.
 *
 * The answer is read live on every call (no cache): a card the customer deleted on the platform is
 * refused at once. The call happens before any database transaction is opened.
 */

/** A stored instrument as this service keeps it (and shows it, for cards). */
export type PlatformInstrument =
  | { type: 'stored_card'; token: string; is_default: boolean; brand: string | null; last_4: string | null; expiry_month: number | null; expiry_year: number | null }
  /** The account's email is never kept. */
  | { type: 'stored_paypal_account'; token: string; is_default: boolean }
  /** `masked_account_number` is never kept: only its last 4 digits, like a card's. */
  | { type: 'stored_bank_account'; token: string; is_default: boolean; issuer: string | null; last_4: string | null }

export type StoredCard = Extract<PlatformInstrument, { type: 'stored_card' }>

/** What `GET /api/v1/portal/payment-instruments` shows of a card: the contract's six fields, never more. */
export interface PaymentInstrumentView {
  token: string
  brand: string | null
  last_4: string | null
  expiry_month: number | null
  expiry_year: number | null
  is_default: boolean
}

export interface StoredInstruments {
  /** Every stored instrument of the customer; [] for a customer the platform does not know. */
  list(store: StoreRow, customerId: string): Promise<PlatformInstrument[]>
  /**
   * The customer's stored card with this token, or 400 `invalid_payment_instrument` (not theirs, an
   * unknown customer, or not a card: renewals pay with stored cards only). 503
   * `platform_unavailable` when the platform cannot say.
   */
  requireInstrument(store: StoreRow, customerId: string, token: string, path?: string): Promise<StoredCard>
}

export interface StoredInstrumentsDeps {
  client: PlatformClient
  accessOf(storeId: string): Promise<PlatformAccess | undefined>
  /**
   * The longest wait for the platform's 429s on one listing: a person waits on this call, so it is
   * shorter than the renewal's budget. Default 5 s; past it the request is 503 with `Retry-After`.
   */
  rateLimitBudgetMs?: number
}

const DEFAULT_RATE_LIMIT_BUDGET_MS = 5_000
// BigCommerce customer ids are positive 32-bit integers (CUST `customerId`: integer).
const CUSTOMER_ID = /^[1-9][0-9]{0,9}$/


const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() ? value.trim() : null)
const month = (value: unknown): number | null => (Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 12 ? (value as number) : null)
const year = (value: unknown): number | null => (Number.isInteger(value) && (value as number) >= 1000 && (value as number) <= 9999 ? (value as number) : null)
const lastFour = (value: unknown): string | null => {
  const digits = typeof value === 'string' ? value.replace(/[^0-9]/g, '') : ''
  return digits.length >= 4 ? digits.slice(-4) : null
}

/** One element of the platform's array, reduced to what may be kept; undefined for what is not an instrument. */
export function parseInstrument(raw: unknown): PlatformInstrument | undefined {
  if (!raw || typeof raw !== 'object') return undefined
  const item = raw as Record<string, unknown>
  const token = text(item.token)
  if (!token) return undefined
  const isDefault = item.is_default === true
  switch (item.type) {
    case 'stored_card':
      return {
        type: 'stored_card',
        token,
        is_default: isDefault,
        brand: text(item.brand),
        // A last 4 is four digits or nothing; anything longer is never shown.
        last_4: typeof item.last_4 === 'string' && /^[0-9]{4}$/.test(item.last_4) ? item.last_4 : null,
        expiry_month: month(item.expiry_month),
        expiry_year: year(item.expiry_year),
      }
    case 'stored_paypal_account':
      return { type: 'stored_paypal_account', token, is_default: isDefault }
    case 'stored_bank_account':
      return { type: 'stored_bank_account', token, is_default: isDefault, issuer: text(item.issuer), last_4: lastFour(item.masked_account_number) }
    default:
      return undefined
  }
}

export function presentInstrument(card: StoredCard): PaymentInstrumentView {
  return { token: card.token, brand: card.brand, last_4: card.last_4, expiry_month: card.expiry_month, expiry_year: card.expiry_year, is_default: card.is_default }
}

export function createStoredInstruments({ client, accessOf, rateLimitBudgetMs = DEFAULT_RATE_LIMIT_BUDGET_MS }: StoredInstrumentsDeps): StoredInstruments {
  async function list(store: StoreRow, customerId: string): Promise<PlatformInstrument[]> {
    // Not an id the platform could have issued: no customer, so no instrument (and nothing to ask).
    if (!CUSTOMER_ID.test(customerId)) return []
    const access = await accessOf(store.id)
    if (!access) throw platformUnavailable('the store is not connected to BigCommerce, so its stored payment methods cannot be read')
    const read = await waitedRead(client, access, { method: 'GET', path: `/v3/customers/${customerId}/stored-instruments`, rateLimitBudgetMs }, { what: 'the stored payment methods', scope: 'stored payment instruments' })
    // An unknown customer: the reference does not say whether it is 404 or []; both mean "no instruments".
    if (!read || read.statusCode === 204) return []
    const { body } = read
    if (!Array.isArray(body)) throw platformUnavailable('BigCommerce answered the stored payment methods with something that is not a list')
    return body.map(parseInstrument).filter((instrument): instrument is PlatformInstrument => instrument !== undefined)
  }

  return {
    list,
    async requireInstrument(store, customerId, token, path = '/body/payment_instrument_id') {
      const found = (await list(store, customerId)).find((instrument) => instrument.token === token)
      if (!found) {
        throw new AppError('invalid_payment_instrument', `${path} is not one of the platform customer's stored payment instruments`, {
          errors: [{ path, message: "is not one of the platform customer's stored payment instruments" }],
        })
      }
      if (found.type !== 'stored_card') {
        const what = found.type === 'stored_paypal_account' ? 'a PayPal account' : 'a bank account'
        throw new AppError('invalid_payment_instrument', `${path} is ${what}: renewals are paid with stored cards only`, {
          errors: [{ path, message: `is ${what}; renewals are paid with stored cards only` }],
        })
      }
      return found
    },
  }
}
