import { storableName } from '../../../lib/printable-text.ts'

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
 * A line is short when what its item has to sell, over the enabled locations that sell it, is below what
 * the renewal's lines of that item want together. A product tracked by variant is read at the line's
 * variant; a line naming no variant of such a product cannot be checked and is left to the cart.
 * Nothing here decides what happens then: the store's `out_of_stock` policy does (renewal-plan.ts).
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

/** What an item has to sell: the enabled locations' `available_to_sell` where it is sold at all. */
export function availableToSell(item: InventoryItem): number {
  let total = 0
  for (const location of item.locations ?? []) {
    if (location.location_enabled === false || location.settings?.is_in_stock === false) continue
    const available = location.available_to_sell
    if (typeof available === 'number' && Number.isFinite(available) && available > 0) total += Math.floor(available)
  }
  return total
}

/**
 * The lines the platform cannot supply, as text for the charge's failure message ("Coffee (variant 77):
 * 0 available, 2 wanted"); empty when everything is in stock. `refused` when a read was not answered.
 */
export async function stockShortfall(read: StockRead, lines: readonly StockLine[]): Promise<{ short: string[] } | { refused: true }> {
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
  const wanted = new Map<string, { product: number; variant: number | undefined; quantity: number }>()
  for (const line of lines) {
    const tracking = products.get(line.productId)?.tracking
    if (tracking === 'product') add(`p${line.productId}`, line.productId, undefined, line.quantity)
    else if (tracking === 'variant' && line.variantId !== undefined) add(`v${line.variantId}`, line.productId, line.variantId, line.quantity)
  }
  function add(key: string, product: number, variant: number | undefined, quantity: number) {
    const entry = wanted.get(key) ?? { product, variant, quantity: 0 }
    entry.quantity += quantity
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

  const short: string[] = []
  for (const entry of wanted.values()) {
    const ofProduct = items.filter((item) => item.identity?.product_id === entry.product)
    // By product: the product's one item (its base variant's); by variant: the line's variant.
    const item = entry.variant === undefined ? ofProduct[0] : ofProduct.find((candidate) => candidate.identity?.variant_id === entry.variant)
    // A tracked item the inventory does not list is not called out of stock on a guess: the cart decides.
    if (!item) continue
    const available = availableToSell(item)
    if (available < entry.quantity) {
      const name = products.get(entry.product)?.name ?? `Product ${entry.product}`
      short.push(`${name}${entry.variant === undefined ? '' : ` (variant ${entry.variant})`}: ${available} available, ${entry.quantity} wanted`)
    }
  }
  return { short }
}
