import type { Db, PlanRow, ProductRow, StoreRow } from '../../db/database.ts'
import { currencyExponent, decimalToMinor, MAX_RENEWAL_AMOUNT } from '../../lib/money.ts'
import { catalogueForImport, findPlanRows } from '../catalog/index.ts'
import type { PlatformCustomers, PlatformInstrument, PlatformVariant, ProductVariants, StoredCard, StoredInstruments } from '../platform/index.ts'
import type { ImportCandidate } from './import-row.ts'
import type { ImportRowError } from './imports.tables.ts'

/**
 * What an import row names, matched to what the store has (CONTRACT section 16): its product and
 * variant in the catalogue (by platform id, else exact title), the plan of that product with the
 * row's cadence, the platform customer (by id, else email) and one of that customer's stored cards.
 * A batch of rows at a time: one catalogue read, one customer search per 50 emails, one stored-card
 * listing per customer. Nothing is written here.
 */

export interface MatchedRow {
  candidate: ImportCandidate
  plan: PlanRow
  platformVariantId: string | null
  amount: number
  currency: string
  platformCustomerId: string | null
  /** The stored card it renews with; null when none is usable (`why` says why). */
  card: { token: string; stored: StoredCard | null } | { token: null; why: string }
}

export type MatchOutcome = { matched: MatchedRow } | { errors: ImportRowError[] }

export interface MatchingDeps {
  db: Db
  customers?: PlatformCustomers | undefined
  instruments?: StoredInstruments | undefined
  variants?: ProductVariants | undefined
}

const fail = (row: number, column: string | undefined, code: string, detail: string): MatchOutcome => ({ errors: [{ row, ...(column ? { column } : {}), code, detail }] })

/** "Grind: Whole, Size: 1 kg" as Recharge (Shopify) writes a variant: "Whole / 1 kg". */
function optionValues(label: string): string {
  return label
    .split(', ')
    .map((part) => (part.includes(': ') ? part.slice(part.indexOf(': ') + 2) : part))
    .join(' / ')
}

function variantByTitle(variants: readonly PlatformVariant[], title: string): PlatformVariant[] {
  const wanted = title.trim().toLowerCase()
  return variants.filter((v) => v.label.toLowerCase() === wanted || optionValues(v.label).toLowerCase() === wanted || (v.sku !== '' && v.sku.toLowerCase() === wanted))
}

/**
 * A matcher for one import: it keeps what it asked the platform (a product's variants, a customer's
 * stored instruments) for the rows after, in bounded maps, since a file lists the same products and
 * often the same customer many times.
 */
export function createImportMatcher(store: StoreRow, { db, customers, instruments, variants }: MatchingDeps) {
  const onPlatform = store.gateway === 'platform'
  const variantsOf = new Map<string, Promise<PlatformVariant[] | undefined>>()
  const instrumentsOf = new Map<string, Promise<PlatformInstrument[]>>()
  const remember = <T>(map: Map<string, T>, key: string, make: () => T): T => {
    let value = map.get(key)
    if (value === undefined) {
      // Bounded: a file of many customers forgets the oldest (each is read once per batch at most).
      if (map.size >= 5_000) map.delete(map.keys().next().value!)
      value = make()
      map.set(key, value)
    }
    return value
  }

  async function productVariants(product: ProductRow): Promise<PlatformVariant[] | undefined> {
    if (!variants || !onPlatform) return undefined
    return remember(variantsOf, product.platform_product_id, () => variants.list(store, product.platform_product_id))
  }

  async function storedInstruments(customerId: string): Promise<PlatformInstrument[]> {
    if (!instruments) return []
    return remember(instrumentsOf, customerId, () => instruments.list(store, customerId))
  }

  return async function match(batch: readonly ImportCandidate[]): Promise<MatchOutcome[]> {
    const platformIds = [...new Set(batch.map((c) => c.product.platformProductId).filter((id): id is string => id !== null))]
    const names = [...new Set(batch.filter((c) => c.product.platformProductId === null).map((c) => c.product.title).filter((t): t is string => t !== null))]
    const planIds = [...new Set(batch.map((c) => c.product.planId).filter((id): id is string => id !== null))]
    const namedPlans = planIds.length ? await findPlanRows(db, store.id, planIds) : []
    const catalogue = await catalogueForImport(db, store.id, { platformIds, names, productIds: [...new Set(namedPlans.map((p) => p.product_id))] })

    // Customers by email, for the rows that do not name theirs (a platform store only: its cards belong to customers).
    const emails = onPlatform ? [...new Set(batch.filter((c) => c.platformCustomerId === null).map((c) => c.email))] : []
    const byEmail = emails.length > 0 && customers ? await customers.idsByEmail(store, emails) : undefined
    if (emails.length > 0 && byEmail === undefined) {
      // Not connected: no row of a platform store can be matched to a customer (the import stops, as for an outage).
      throw Object.assign(new Error('the store is not connected to BigCommerce, so subscribers cannot be matched to its customers'), { importFatal: true })
    }

    const outcomes: MatchOutcome[] = []
    for (const candidate of batch) outcomes.push(await matchOne(candidate, catalogue, namedPlans, byEmail))
    return outcomes
  }

  async function matchOne(candidate: ImportCandidate, catalogue: { products: ProductRow[]; plans: PlanRow[] }, namedPlans: readonly PlanRow[], byEmail: Map<string, string[]> | undefined): Promise<MatchOutcome> {
    const { row } = candidate
    // The product: a plan named by id (native), else the platform product id, else the exact title.
    let product: ProductRow | undefined
    let plan: PlanRow | undefined
    if (candidate.product.planId !== null) {
      plan = namedPlans.find((p) => p.id === candidate.product.planId)
      if (plan) product = catalogue.products.find((p) => p.id === plan!.product_id)
    }
    if (!product) {
      if (candidate.product.platformProductId !== null) {
        product = catalogue.products.find((p) => p.platform_product_id === candidate.product.platformProductId)
        if (!product) return fail(row, 'external_product_id', 'product_not_found', `no product of the catalogue has BigCommerce product id ${candidate.product.platformProductId}: add it to the catalogue first`)
      } else if (candidate.product.title !== null) {
        const named = catalogue.products.filter((p) => p.name === candidate.product.title)
        if (named.length === 0) return fail(row, 'product_title', 'product_not_found', `no product of the catalogue is named exactly "${candidate.product.title}": add it, or give external_product_id`)
        if (named.length > 1) return fail(row, 'product_title', 'ambiguous_product', `${named.length} products are named "${candidate.product.title}": give external_product_id`)
        product = named[0]
      } else {
        return fail(row, 'plan_id', 'plan_not_found', `no plan ${candidate.product.planId} in this store, and the row names no product to match instead`)
      }
      plan = undefined
    }
    if (!product) return fail(row, 'plan_id', 'plan_not_found', `plan ${candidate.product.planId}'s product is not in the catalogue`)

    // The variant: by id, else by its title among the platform's variants of the product.
    let platformVariantId = candidate.variant.platformVariantId
    if (platformVariantId === null && candidate.variant.title !== null) {
      const listed = await productVariants(product)
      if (listed === undefined) return fail(row, 'variant_title', 'variant_not_found', "variants are matched by title only on a store connected to BigCommerce: give external_variant_id, or leave variant_title empty")
      const found = variantByTitle(listed, candidate.variant.title)
      if (found.length === 0) return fail(row, 'variant_title', 'variant_not_found', `"${candidate.variant.title}" is none of the variants BigCommerce lists for product ${product.platform_product_id}`)
      if (found.length > 1) return fail(row, 'variant_title', 'ambiguous_variant', `"${candidate.variant.title}" names ${found.length} variants of product ${product.platform_product_id}: give external_variant_id`)
      platformVariantId = found[0]!.id
    }

    // The plan: the one named, else the product's plan with this cadence (the variant's own first, then one for any variant; active first).
    if (!plan) {
      const fits = catalogue.plans.filter((p) => p.product_id === product!.id && p.interval === candidate.interval && p.interval_count === candidate.intervalCount && p.prepaid_cycles === candidate.prepaidCycles)
      const rank = (p: PlanRow) => (p.platform_variant_id === platformVariantId && platformVariantId !== null ? 0 : p.platform_variant_id === null ? 1 : 2) * 2 + (p.active ? 0 : 1)
      plan = fits.filter((p) => p.platform_variant_id === null || p.platform_variant_id === platformVariantId).sort((a, b) => rank(a) - rank(b))[0]
      if (!plan) {
        const cadence = `every ${candidate.intervalCount} ${candidate.interval}(s)${candidate.prepaidCycles ? `, ${candidate.prepaidCycles} shipments per charge` : ''}`
        return fail(row, undefined, 'plan_not_found', `product "${product.name}" has no plan ${cadence}: create one (its price may differ: the subscription keeps its own)`)
      }
    }
    platformVariantId ??= plan.platform_variant_id
    // A product sold in variants cannot be ordered without one: the renewal's order would be refused.
    if (platformVariantId === null && onPlatform) {
      const listed = await productVariants(product)
      if (listed && listed.length > 0) {
        return fail(row, candidate.variant.title === null ? 'variant_title' : undefined, 'variant_required', `product "${product.name}" is sold in ${listed.length} variants on BigCommerce (${listed.slice(0, 3).map((v) => v.label).join('; ')}${listed.length > 3 ? '; ...' : ''}): name one with variant_title or external_variant_id`)
      }
    }

    // The price, in the plan's currency.
    let amount: number
    if ('minor' in candidate.price) {
      if (candidate.price.currency !== plan.currency) return fail(row, 'currency', 'currency_mismatch', `is ${candidate.price.currency}; plan ${plan.id} is priced in ${plan.currency}`)
      amount = candidate.price.minor
    } else {
      const minor = decimalToMinor(candidate.price.decimal, currencyExponent(plan.currency))
      if (minor === undefined) return fail(row, 'recurring_price', 'invalid_price', `is not an amount of ${plan.currency} (too many decimal places)`)
      // Recharge's price is one delivery's; a prepaid charge here takes the subscription's amount for the
      // whole block (renewal-plan.ts), so the block's deliveries are in it: 6 deliveries at 12.50 charge 75.00.
      amount = minor * (candidate.prepaidCycles ?? 1)
    }
    if (amount * candidate.quantity > MAX_RENEWAL_AMOUNT) return fail(row, 'quantity', 'amount_too_large', `price x quantity is over ${MAX_RENEWAL_AMOUNT} minor units`)

    // The platform customer, and one of their stored cards.
    let platformCustomerId = candidate.platformCustomerId
    if (onPlatform && platformCustomerId === null) {
      const ids = byEmail?.get(candidate.email) ?? []
      if (ids.length === 0) return fail(row, 'email', 'customer_not_found', 'no BigCommerce customer of this store has this email: the subscriber needs a customer account for their stored cards')
      if (ids.length > 1) return fail(row, 'email', 'ambiguous_customer', `${ids.length} BigCommerce customers have this email (ids ${ids.join(', ')}): add a platform_customer_id column naming the right one`)
      platformCustomerId = ids[0]!
    }
    if (onPlatform && candidate.billingAddress === null) return fail(row, 'shipping_address1', 'address_required', "renewal orders on BigCommerce need an address: the row's shipping address is empty")

    let card: MatchedRow['card']
    const token = candidate.instrumentToken
    if (token === null) card = { token: null, why: 'the file gave no stored payment method' }
    else if (!onPlatform || !instruments) card = { token, stored: null }
    else {
      const found = (await storedInstruments(platformCustomerId!)).find((instrument) => instrument.token === token)
      if (!found) card = { token: null, why: "the file's payment method is not one of the customer's stored payment methods on BigCommerce" }
      else if (found.type !== 'stored_card') card = { token: null, why: 'the stored payment method is not a card: renewals are paid with stored cards' }
      else card = { token, stored: found }
    }
    return { matched: { candidate, plan, platformVariantId, amount, currency: plan.currency, platformCustomerId, card } }
  }
}
