import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { availableToSell, stockShortfall, type StockLine, type StockRead } from '../../src/modules/billing/gateways/platform-stock.ts'

/** The shortfall's words, as the failure message will say them (the lines and levels are asserted apart). */
function texts(result: Awaited<ReturnType<typeof stockShortfall>>) {
  return 'short' in result ? { short: result.short.map((item) => item.text) } : result
}

/** A catalog product as `GET /v3/catalog/products?include_fields=name,inventory_tracking` returns it. */
interface Product {
  id: number
  name: string
  inventory_tracking: 'none' | 'product' | 'variant'
}

type Location = { available_to_sell: number; location_enabled: boolean; settings: { is_in_stock: boolean } }

/** An inventory item as `GET /v3/inventory/items` returns it. */
interface Item {
  identity: { product_id: number; variant_id: number; sku: string }
  locations: Location[]
}

interface Call {
  what: string
  path: string
  query: Record<string, string>
}

/** One enabled location selling `available`. */
const at = (available: number, overrides: Partial<Location> = {}): Location => ({ available_to_sell: available, location_enabled: true, settings: { is_in_stock: true }, ...overrides })

function item(productId: number, variantId: number, locations: Location[]): Item {
  return { identity: { product_id: productId, variant_id: variantId, sku: `SKU-${productId}-${variantId}` }, locations }
}

/**
 * A platform that answers from memory: the catalog from `products` (those named in `id:in`), the inventory
 * from `pages` (page N of the query, the items of the products in `product_id:in`); every call is recorded.
 * `refuse` makes the catalog or the inventory read unanswered.
 */
function platform(products: Product[], pages: Item[][], refuse?: 'catalog' | 'inventory') {
  const calls: Call[] = []
  const read: StockRead = async (what, path, query) => {
    calls.push({ what, path, query })
    if (path === '/v3/catalog/products') {
      if (refuse === 'catalog') return { refused: true }
      const ids = new Set((query['id:in'] ?? '').split(',').map(Number))
      return { ok: { data: products.filter((product) => ids.has(product.id)) } }
    }
    if (path === '/v3/inventory/items') {
      if (refuse === 'inventory') return { refused: true }
      const ids = new Set((query['product_id:in'] ?? '').split(',').map(Number))
      const page = Number(query.page ?? '1')
      const data = (pages[page - 1] ?? []).filter((entry) => ids.has(entry.identity.product_id))
      return { ok: { data, meta: { pagination: { total_pages: pages.length } } } }
    }
    throw new Error(`unexpected read of ${path}`)
  }
  return { read, calls, paths: () => calls.map((call) => call.path) }
}

const MUG: Product = { id: 1, name: 'Mug', inventory_tracking: 'product' }
const COFFEE: Product = { id: 2, name: 'Coffee', inventory_tracking: 'variant' }
const EBOOK: Product = { id: 3, name: 'E-book', inventory_tracking: 'none' }

const line = (productId: number, quantity: number, variantId?: number): StockLine => ({ productId, variantId, quantity })

const CATALOG = '/v3/catalog/products'
const INVENTORY = '/v3/inventory/items'

describe('stockShortfall: which renewal lines the platform cannot supply', () => {
  test('untracked products are always sold: only the catalog is read, nothing is short', async () => {
    const { read, calls, paths } = platform([EBOOK], [[item(3, 30, [at(0)])]])
    assert.deepEqual(await stockShortfall(read, [line(3, 5)]), { short: [] })
    assert.equal(calls.length, 1)
    assert.deepEqual(paths(), [CATALOG], 'the inventory is never read')
  })

  test('no lines: nothing is read and nothing is short', async () => {
    const { read, calls } = platform([MUG], [])
    assert.deepEqual(await stockShortfall(read, []), { short: [] })
    assert.equal(calls.length, 0)
  })

  test('a product tracked by product with nothing to sell is short', async () => {
    const { read, paths } = platform([MUG], [[item(1, 10, [at(0)])]])
    assert.deepEqual(texts(await stockShortfall(read, [line(1, 1)])), { short: ['Mug: 0 available, 1 wanted'] })
    assert.deepEqual(paths(), [CATALOG, INVENTORY])
  })

  test('a product tracked by product with enough to sell is not short', async () => {
    const { read } = platform([MUG], [[item(1, 10, [at(1)])]])
    assert.deepEqual(await stockShortfall(read, [line(1, 1)]), { short: [] })
  })

  test("tracked by variant: the line's variant is short even when another variant of the product has plenty", async () => {
    const { read } = platform([COFFEE], [[item(2, 77, [at(0)]), item(2, 78, [at(50)])]])
    assert.deepEqual(texts(await stockShortfall(read, [line(2, 2, 77)])), { short: ['Coffee (variant 77): 0 available, 2 wanted'] })
  })

  test("tracked by variant: the line's variant in stock is not short while another variant has none", async () => {
    const { read } = platform([COFFEE], [[item(2, 77, [at(0)]), item(2, 78, [at(50)])]])
    assert.deepEqual(await stockShortfall(read, [line(2, 2, 78)]), { short: [] })
  })

  test('the lines of one product-tracked item are wanted together: 3 available, 2 + 2 wanted is short', async () => {
    const { read } = platform([MUG], [[item(1, 10, [at(3)])]])
    assert.deepEqual(texts(await stockShortfall(read, [line(1, 2), line(1, 2)])), { short: ['Mug: 3 available, 4 wanted'] })
  })

  test('the lines of one variant are wanted together', async () => {
    const { read } = platform([COFFEE], [[item(2, 77, [at(3)])]])
    assert.deepEqual(texts(await stockShortfall(read, [line(2, 2, 77), line(2, 2, 77)])), { short: ['Coffee (variant 77): 3 available, 4 wanted'] })
  })

  test('available_to_sell is summed over the enabled locations that sell the item; a disabled or not-in-stock location does not count', async () => {
    const locations = [at(5), at(10, { location_enabled: false }), at(10, { settings: { is_in_stock: false } }), at(2)]
    const { read } = platform([MUG], [[item(1, 10, locations)]])
    assert.deepEqual(texts(await stockShortfall(read, [line(1, 8)])), { short: ['Mug: 7 available, 8 wanted'] })
    const enough = platform([MUG], [[item(1, 10, locations)]])
    assert.deepEqual(await stockShortfall(enough.read, [line(1, 7)]), { short: [] })
  })

  test('a line of a variant-tracked product naming no variant is not checked', async () => {
    const { read, paths } = platform([COFFEE], [[item(2, 77, [at(0)])]])
    assert.deepEqual(await stockShortfall(read, [line(2, 1)]), { short: [] })
    assert.deepEqual(paths(), [CATALOG], 'nothing tracked is wanted: the inventory is not read')
  })

  test('a tracked item the inventory does not list is not called short', async () => {
    const missingProduct = platform([MUG], [[]])
    assert.deepEqual(await stockShortfall(missingProduct.read, [line(1, 1)]), { short: [] })
    assert.deepEqual(missingProduct.paths(), [CATALOG, INVENTORY])
    const missingVariant = platform([COFFEE], [[item(2, 78, [at(0)])]])
    assert.deepEqual(await stockShortfall(missingVariant.read, [line(2, 1, 77)]), { short: [] })
  })

  test('a refused catalog read is refused', async () => {
    const { read, paths } = platform([MUG], [[item(1, 10, [at(0)])]], 'catalog')
    assert.deepEqual(await stockShortfall(read, [line(1, 1)]), { refused: true })
    assert.deepEqual(paths(), [CATALOG])
  })

  test('a refused inventory read is refused', async () => {
    const { read, paths } = platform([MUG], [[item(1, 10, [at(0)])]], 'inventory')
    assert.deepEqual(await stockShortfall(read, [line(1, 1)]), { refused: true })
    assert.deepEqual(paths(), [CATALOG, INVENTORY])
  })

  test('a full first inventory page (1000 items) of 2 pages: page 2 is read and an item only there is found', async () => {
    const pageOne = Array.from({ length: 1000 }, (_, index) => item(2, 1000 + index, [at(50)]))
    const pageTwo = [item(2, 5000, [at(1)])]
    const { read, calls } = platform([COFFEE], [pageOne, pageTwo])
    assert.deepEqual(texts(await stockShortfall(read, [line(2, 2, 5000)])), { short: ['Coffee (variant 5000): 1 available, 2 wanted'] })
    const inventory = calls.filter((call) => call.path === INVENTORY)
    assert.deepEqual(inventory.map((call) => call.query.page), ['1', '2'])
    assert.deepEqual(inventory.map((call) => call.query.limit), ['1000', '1000'])
  })

  test('a first inventory page with fewer than 1000 items is the last one read', async () => {
    const { read, calls } = platform([COFFEE], [[item(2, 77, [at(5)])], [item(2, 78, [at(0)])]])
    assert.deepEqual(await stockShortfall(read, [line(2, 1, 78)]), { short: [] }, 'page 2 is not read, so its item is not known')
    assert.deepEqual(calls.filter((call) => call.path === INVENTORY).map((call) => call.query.page), ['1'])
  })

  test('the catalog query names each product once and asks for its name and tracking; the inventory only the tracked ones', async () => {
    const { read, calls } = platform([MUG, COFFEE, EBOOK], [[item(1, 10, [at(9)]), item(2, 77, [at(9)])]])
    assert.deepEqual(await stockShortfall(read, [line(1, 1), line(2, 1, 77), line(1, 2), line(3, 1), line(2, 1, 77)]), { short: [] })
    const [catalog, inventory] = calls
    assert.equal(calls.length, 2)
    assert.equal(catalog!.path, CATALOG)
    assert.equal(catalog!.query['id:in'], '1,2,3')
    assert.equal(catalog!.query.include_fields, 'name,inventory_tracking')
    assert.equal(inventory!.path, INVENTORY)
    assert.equal(inventory!.query['product_id:in'], '1,2')
  })

  test('several short lines are all reported, each with its own text', async () => {
    const { read } = platform([MUG, COFFEE], [[item(1, 10, [at(0)]), item(2, 77, [at(1)])]])
    assert.deepEqual(texts(await stockShortfall(read, [line(1, 1), line(2, 3, 77)])), { short: ['Mug: 0 available, 1 wanted', 'Coffee (variant 77): 1 available, 3 wanted'] })
  })
})

describe('stockShortfall: the lines behind each short item', () => {
  test('each short item names the lines that want it and what it has: the collector tells the own line from add-ons', async () => {
    const { read } = platform([MUG, COFFEE], [[item(1, 10, [at(1)]), item(2, 77, [at(0)])]])
    const result = await stockShortfall(read, [line(2, 1, 77), line(1, 1), line(1, 1)])
    assert.deepEqual(result, { short: [{ text: 'Coffee (variant 77): 0 available, 1 wanted', lines: [0], available: 0 }, { text: 'Mug: 1 available, 2 wanted', lines: [1, 2], available: 1 }] })
  })

  test('a product tracked by product whose inventory lists one item per variant is read at the line\'s variant', async () => {
    const { read } = platform([MUG], [[item(1, 10, [at(0)]), item(1, 11, [at(9)])]])
    assert.deepEqual(await stockShortfall(read, [line(1, 2, 11)]), { short: [] })
    assert.deepEqual(texts(await stockShortfall(read, [line(1, 2, 10)])), { short: ['Mug: 0 available, 2 wanted'] })
  })

  test('an item whose levels cannot be read is not called short: the cart decides', async () => {
    const { read } = platform([MUG], [[{ identity: { product_id: 1, variant_id: 10, sku: 'MUG' }, locations: [{ available_to_sell: '0' }] } as never]])
    assert.deepEqual(await stockShortfall(read, [line(1, 1)]), { short: [] })
  })
})

describe('availableToSell: what an item has to sell', () => {
  test('the enabled, in-stock locations are summed', () => {
    assert.equal(availableToSell(item(1, 10, [at(5), at(2)])), 7)
  })

  test('a disabled location or one not in stock does not count', () => {
    assert.equal(availableToSell(item(1, 10, [at(5), at(10, { location_enabled: false }), at(10, { settings: { is_in_stock: false } })])), 5)
  })

  test('no locations: no level to go by', () => {
    assert.equal(availableToSell({}), undefined, 'no level to go by: not called out of stock')
    assert.equal(availableToSell({ locations: [] }), undefined)
  })

  test('negative, fractional or non-numeric levels: negatives count as nothing, fractions are floored', () => {
    assert.equal(availableToSell({ locations: [{ available_to_sell: -4 }, { available_to_sell: 2.7 }, { available_to_sell: '9' }, { available_to_sell: 1 }] }), 3)
  })
})
