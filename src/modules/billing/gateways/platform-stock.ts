import { storableName } from '../../../lib/printable-text.ts'
import type { ShortItem } from './gateway.ts'

/**
 * Whether the platform has the renewal's items in stock, asked before its cart is made (docs/bigcommerce.md,
 * "A renewal, call by call"; contract: Renewal pricing, "Stock"). Two reads, both from the published
 * reference:
 *
 *   catalog    GET /v3/catalog/products?id:in=...&include_fields=name,inventory_tracking (catalog/products
 *              `getProducts`): how each product's stock is tracked: `none` (always sold), `product` or
 *              `variant`. The inventory API does not say, and an untracked item's level means nothing;
 *   inventory  GET /v3/inventory/items?product_id:in=... (inventory `get-inventory-items`), only for the
 *              tracked products: each item's `available_to_sell` per location (on hand less safety stock),
 *              and `settings.is_in_stock` ("available for purchase independent of quantity").
 *
 * An item is short when what it has to sell, over the enabled locations that sell it, is below what the
 * renewal's lines of that item want together. A product tracked by variant is read at the line's
 * variant; a line naming no variant of such a product cannot be checked and is left to the cart, and so
 * is an item the inventory does not list or lists without a readable level (the cart refuses what the
 * platform will not sell). Nothing here decides what happens then: the collector leaves short add-ons
 * off the charge, and the store's `out_of_stock` policy decides for the subscription's own line.
 */

export interface StockLine {
  productId: number
  variantId: number | undefined
  quantity: number
}

/** One call of the caller's: its body when the platform answered 2xx, else the reason it did not. */
export type StockRead = (what: string, path: string, query: Record<string, string>) => Promise<{ ok: unknown } | { refused: true }>

interface CatalogProduct {
  id?: unknown
  name?: unknown
  inventory_tracking?: unknown
}

interface InventoryItem {
  identity?: { product_id?: unknown; variant_id?: unknown; sku?: unknown }
  locations?: Array<{ available_to_sell?: unknown; location_enabled?: unknown; settings?: { is_in_stock?: unknown } | null }>
}

/** Inventory items per page: the reference's "Limit of 1000 items for payload length". */
const PAGE_LIMIT = 1000
/** Pages read at most; a renewal's few products never have this many items, a platform that loops would. */
const MAX_PAGES = 10

const dataOf = (body: unknown): unknown[] => {
  const data = (body as { data?: unknown } | null)?.data
  return Array.isArray(data) ? data : []
}

/**
 * What an item has to sell: the enabled locations' `available_to_sell` where it is sold at all; undefined
 * when no location gives a readable level (nothing to go by: not called out of stock on a guess).
 */
export function availableToSell(item: InventoryItem): number | undefined {
  let total = 0
  let read = false
  for (const location of Array.isArray(item.locations) ? item.locations : []) {
    if (location?.location_enabled === false) continue
    const available = location?.available_to_sell
    if (typeof available !== 'number' || !Number.isFinite(available)) continue
    read = true
    if (location.settings?.is_in_stock === false) continue
    if (available > 0) total += Math.floor(available)
  }
  return read ? total : undefined
}

/**
 * The items the platform cannot supply, each with words for the charge's failure message ("Coffee
 * (variant 77): 0 available, 2 wanted") and the lines that want it; empty when everything is in stock.
 * `refused` when a read was not answered.
 */
export async function stockShortfall(read: StockRead, lines: readonly StockLine[]): Promise<{ short: ShortItem[] } | { refused: true }> {
  const productIds = [...new Set(lines.map((line) => line.productId))]
  if (productIds.length === 0) return { short: [] }
  const catalog = await read("reading how the renewal's products track stock", '/v3/catalog/products', {
    'id:in': productIds.join(','),
    include_fields: 'name,inventory_tracking',
    limit: String(Math.max(productIds.length, 1)),
  })
  if ('refused' in catalog) return catalog
  const products = new Map<number, { name: string; tracking: string }>()
  for (const raw of dataOf(catalog.ok) as CatalogProduct[]) {
    if (typeof raw?.id !== 'number') continue
    products.set(raw.id, { name: typeof raw.name === 'string' ? storableName(raw.name, 120) : `Product ${raw.id}`, tracking: typeof raw.inventory_tracking === 'string' ? raw.inventory_tracking : 'none' })
  }
  // What each tracked item is wanted for, all lines of it together.
  const wanted = new Map<string, { product: number; variant: number | undefined; byVariant: boolean; quantity: number; lines: number[] }>()
  for (const [index, line] of lines.entries()) {
    const tracking = products.get(line.productId)?.tracking
    if (tracking === 'product') add(`p${line.productId}`, line.productId, line.variantId, false, line.quantity, index)
    else if (tracking === 'variant' && line.variantId !== undefined) add(`v${line.variantId}`, line.productId, line.variantId, true, line.quantity, index)
  }
  function add(key: string, product: number, variant: number | undefined, byVariant: boolean, quantity: number, index: number) {
    const entry = wanted.get(key) ?? { product, variant, byVariant, quantity: 0, lines: [] }
    entry.quantity += quantity
    entry.lines.push(index)
    wanted.set(key, entry)
  }
  if (wanted.size === 0) return { short: [] }

  const tracked = [...new Set([...wanted.values()].map((entry) => entry.product))]
  const items: InventoryItem[] = []
  for (let page = 1; page <= MAX_PAGES; page++) {
    const answer = await read("reading the stock of the renewal's items", '/v3/inventory/items', { 'product_id:in': tracked.join(','), page: String(page), limit: String(PAGE_LIMIT) })
    if ('refused' in answer) return answer
    const batch = dataOf(answer.ok) as InventoryItem[]
    items.push(...batch)
    const pages = (answer.ok as { meta?: { pagination?: { total_pages?: unknown } } } | null)?.meta?.pagination?.total_pages
    if (batch.length < PAGE_LIMIT || typeof pages !== 'number' || page >= pages) break
  }

  const short: ShortItem[] = []
  for (const entry of wanted.values()) {
    const ofProduct = items.filter((item) => item.identity?.product_id === entry.product)
    const atVariant = ofProduct.find((candidate) => candidate.identity?.variant_id === entry.variant)
    // By variant: the line's variant. By product: the product's one item; should the inventory list one
    // per variant, the line's variant's (its stock is the product's), else the first.
    const item = entry.byVariant ? atVariant : (atVariant ?? ofProduct[0])
    // A tracked item the inventory does not list is not called out of stock on a guess: the cart decides.
    if (!item) continue
    const available = availableToSell(item)
    if (available !== undefined && available < entry.quantity) {
      const name = products.get(entry.product)?.name ?? `Product ${entry.product}`
      short.push({ text: `${name}${entry.byVariant ? ` (variant ${entry.variant})` : ''}: ${available} available, ${entry.quantity} wanted`, lines: entry.lines, available })
    }
  }
  return { short }
}
