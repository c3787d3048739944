import type { StoreRow } from '../../db/database.ts'
import type { PlatformAccess } from './connections.ts'
import type { PlatformClient } from './platform-client.ts'
import { platformUnavailable, waitedRead } from './waited-read.ts'

/**
 * A catalogue product's variants (`GET /v3/catalog/products/{productId}/variants`, docs/platform-api.md
 * §13.6), read live: what a subscriber may change their subscription's variant to. Only what the
 * portal shows is kept: the id, the sku, the options as words and whether the variant is sold.
 *
 * Read on every call (no cache), before any database transaction is opened, like the stored
 * instruments: a variant the merchant stopped selling is refused at once.
 */

/** A variant as this service shows it. */
export interface PlatformVariant {
  /** The variant's id, as its digits (what `platform_variant_id` keeps). */
  id: string
  sku: string
  /** Its options, `"Grind: Whole, Size: 1 kg"`; the sku when it has none. */
  label: string
  /** Not `purchasing_disabled` on the platform. */
  purchasable: boolean
}

export interface ProductVariants {
  /**
   * The product's variants, in the platform's order; [] for a product the platform does not know, an
   * id that is no platform product id, or a product that has only its base variant (nothing to
   * choose). undefined when the store is not connected to the platform. 503 `platform_unavailable`
   * when the platform cannot say.
   */
  list(store: StoreRow, platformProductId: string): Promise<PlatformVariant[] | undefined>
}

export interface ProductVariantsDeps {
  client: PlatformClient
  accessOf(storeId: string): Promise<PlatformAccess | undefined>
  /** The longest wait for the platform's 429s on one page: a person waits on it. Default 5 s. */
  rateLimitBudgetMs?: number
}

const DEFAULT_RATE_LIMIT_BUDGET_MS = 5_000
/** The platform's largest page, and how many of them one listing reads at most. */
const PAGE_SIZE = 250
const MAX_PAGES = 4
// BigCommerce product and variant ids are positive 32-bit integers.
const PLATFORM_ID = /^[1-9][0-9]{0,9}$/


const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() ? value.trim() : null)

/** One element of the platform's `data`, reduced to what is shown; undefined for what is not a variant. */
export function parseVariant(raw: unknown): (PlatformVariant & { options: number }) | undefined {
  if (!raw || typeof raw !== 'object') return undefined
  const item = raw as Record<string, unknown>
  if (!Number.isInteger(item.id) || (item.id as number) < 1) return undefined
  const id = String(item.id)
  const sku = text(item.sku) ?? ''
  const options = (Array.isArray(item.option_values) ? item.option_values : [])
    .map((value) => {
      const option = value as Record<string, unknown> | null
      const label = text(option?.label)
      if (!label) return null
      const name = text(option?.option_display_name)
      return name ? `${name}: ${label}` : label
    })
    .filter((words): words is string => words !== null)
  return { id, sku, label: options.length > 0 ? options.join(', ') : sku || `Variant ${id}`, purchasable: item.purchasing_disabled !== true, options: options.length }
}

export function createProductVariants({ client, accessOf, rateLimitBudgetMs = DEFAULT_RATE_LIMIT_BUDGET_MS }: ProductVariantsDeps): ProductVariants {
  return {
    async list(store, platformProductId) {
      const access = await accessOf(store.id)
      if (!access) return undefined
      // Not an id the platform could have issued: no catalogue product, so nothing to choose.
      if (!PLATFORM_ID.test(platformProductId)) return []
      const found: (PlatformVariant & { options: number })[] = []
      for (let page = 1; page <= MAX_PAGES; page++) {
        const read = await waitedRead(client, access, { method: 'GET', path: `/v3/catalog/products/${platformProductId}/variants`, query: { page, limit: PAGE_SIZE }, rateLimitBudgetMs }, { what: "the product's variants", scope: 'products read' })
        // A product the catalogue no longer has: nothing to choose.
        if (!read) return []
        const { body } = read
        const data = (body as { data?: unknown } | null)?.data
        if (!Array.isArray(data)) throw platformUnavailable("BigCommerce answered the product's variants with something that is not a list")
        for (const raw of data) {
          const variant = parseVariant(raw)
          if (variant) found.push(variant)
        }
        const pagination = (body as { meta?: { pagination?: { total_pages?: unknown; current_page?: unknown } } }).meta?.pagination
        const totalPages = typeof pagination?.total_pages === 'number' ? pagination.total_pages : undefined
        if (data.length < PAGE_SIZE || (totalPages !== undefined && page >= totalPages)) break
      }
      // A product without options has one variant, its base one: there is nothing to choose.
      if (found.length === 1 && found[0]!.options === 0) return []
      return found.map(({ options: _options, ...variant }) => variant)
    },
  }
}
