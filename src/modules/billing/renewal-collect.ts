import type { ChargeRow, StoreRow } from '../../db/database.ts'
import { platformProductIdOf } from '../catalog/index.ts'
import { findStoresByIds } from '../stores/index.ts'
import { renewalOrderDetails } from '../subscriptions/index.ts'
import type { ChargeOutcome, ChargeRequest, OrderOutcome, PaymentGateway, RenewalOrder, RenewalOrderLine, StockOutcome } from './gateways/index.ts'
import { markCartKept, markOrderRequested, markSubmitted, setOnOrderlessCharge, unmarkSubmitted, type BillingContext } from './renewal-context.ts'

/**
 * Step 2 of a renewal: the gateway, called outside any transaction. A charge is sent again only
 * when that cannot move money twice: it was never submitted, or the gateway deduplicates by key.
 * Otherwise a charge whose answer was lost is only looked up, and "no trace yet" stays unknown
 * (the first payment may still be in flight) until the grace period hands it to a person.
 */

const unknownOf = (error: unknown) => ({ status: 'unknown' as const, reason: String(error) })

/** Whether a platform renewal ships at the platform's quote rather than at an amount of its own. */
const takesQuote = (policy: string | undefined, keptShippingAmount: number | null): boolean => policy === 'requote' || (policy === 'checkout_rate' && keptShippingAmount === null)

export function createCollector(ctx: BillingContext) {
  const { db, gateways } = ctx

  function requestOf(charge: ChargeRow, gateway: PaymentGateway, token: string): ChargeRequest {
    return {
      idempotencyKey: charge.idempotency_key,
      storeId: charge.store_id,
      subscriptionId: charge.subscription_id,
      amount: charge.amount,
      currency: charge.currency.trim(),
      paymentInstrumentId: charge.payment_instrument_id,
      description: `Subscription ${charge.subscription_id} renewal`,
      orderId: charge.platform_order_id ?? undefined,
      orderRequestedAt: charge.order_requested_at ?? undefined,
      cartId: charge.platform_cart_id ?? undefined,
      onCart: (cartId: string) => markCartKept(db, charge.id, cartId, token),
      onOrderRequest: gateway.honoursIdempotencyKeys ? undefined : () => markOrderRequested(db, charge.id, token),
      // A gateway that deduplicates by key needs no record: sending again is always safe there.
      onSubmit: gateway.honoursIdempotencyKeys ? undefined : () => markSubmitted(db, 'charges', charge.id, token),
    }
  }

  /** What the platform needs to raise the renewal's order, from the charge's lines and the subscription. */
  async function renewalOrderOf(charge: ChargeRow): Promise<{ order: RenewalOrder; store: StoreRow | undefined }> {
    const details = await renewalOrderDetails(db, charge.subscription_id)
    const [store] = (await findStoresByIds(db, [charge.store_id])).values()
    const addOns: RenewalOrderLine[] = []
    let ownLine = charge.line_items?.find((line) => line.type === 'subscription')
    for (const line of charge.line_items ?? []) {
      if (line.type !== 'onetime') continue
      addOns.push({ platformProductId: await platformProductIdOf(db, line.product_id), quantity: line.quantity, unitAmount: line.unit_amount, amount: line.amount, onetimeId: line.onetime_id })
    }
    // A charge recorded before its lines were (older rows): the subscription's line is the whole subtotal.
    ownLine ??= { type: 'subscription', product_id: details.productId, onetime_id: null, quantity: details.quantity, unit_amount: Math.round(charge.subtotal / details.quantity), amount: charge.subtotal, discount_amount: charge.discount_amount }
    const order: RenewalOrder = {
      platformProductId: await platformProductIdOf(db, details.productId),
      platformVariantId: details.platformVariantId,
      quantity: ownLine.quantity,
      unitAmount: ownLine.unit_amount,
      subtotal: charge.subtotal,
      discountAmount: charge.discount_amount,
      // `requote` takes the platform's quote, and so does `checkout_rate` for a subscription whose
      // checkout named no rate (older ones, API checkouts without `shipping`): never a silent free
      // shipping. Every other case ships for what the claim priced.
      shipping: { amount: takesQuote(store?.renewal_shipping, details.keptShippingAmount) ? null : charge.shipping_amount, method: charge.shipping_method },
      amount: charge.amount,
      addOns,
      currency: charge.currency.trim(),
      email: details.email,
      platformCustomerId: details.platformCustomerId,
      billingAddress: details.billingAddress,
      shippingAddress: details.shippingAddress,
    }
    return { order, store }
  }

  /**
   * The platform's stock of the renewal's lines, read while no order can exist for the charge. The
   * subscription's own line short fails the charge `out_of_stock` (the store's policy decides what
   * follows); add-ons short are left off this charge and wait for the next one, so one out-of-stock
   * extra never holds the subscription back. Answers the outcome to end on, or undefined to go on.
   */
  async function settleStock(gateway: PaymentGateway, charge: ChargeRow, request: ChargeRequest, order: RenewalOrder, token: string): Promise<OrderOutcome | undefined> {
    const stock = await gateway.checkStock!(request, order).catch((error: unknown): StockOutcome => unknownOf(error))
    if (stock.status !== 'checked') return stock
    if (stock.unchecked) ctx.log?.warn({ chargeId: charge.id, storeId: charge.store_id, reason: stock.unchecked }, 'the stock of a renewal could not be read; it goes on unchecked')
    const own = stock.short.filter((item) => item.lines.includes(0) && order.quantity > item.available)
    if (own.length > 0) return { status: 'failed', failureCode: 'out_of_stock', failureMessage: `Out of stock: ${own.map((item) => item.text).join('; ')}.` }
    const dropped = new Set(stock.short.flatMap((item) => item.lines.filter((line) => line > 0)).map((line) => order.addOns![line - 1]!.onetimeId))
    if (dropped.size === 0) return undefined
    const lineItems = (charge.line_items ?? []).filter((line) => !(line.type === 'onetime' && dropped.has(line.onetime_id)))
    const removed = (charge.line_items ?? []).reduce((sum, line) => sum + (line.type === 'onetime' && dropped.has(line.onetime_id) ? line.amount : 0), 0)
    // A cart an earlier holder made holds those lines: a new one is made (no order can exist from it yet).
    const kept = await setOnOrderlessCharge(db, charge.id, token, { line_items: JSON.stringify(lineItems), subtotal: charge.subtotal - removed, amount: charge.amount - removed, platform_cart_id: null })
    if (!kept) return { status: 'unknown', reason: 'the charge was taken over while its out-of-stock add-ons were left off; nothing was paid' }
    ctx.log?.warn({ chargeId: charge.id, onetimeIds: [...dropped] }, 'add-ons out of stock are left off this renewal; they wait for the next')
    charge.line_items = lineItems
    charge.subtotal -= removed
    charge.amount -= removed
    charge.platform_cart_id = null
    request.amount = charge.amount
    request.cartId = undefined
    order.addOns = (order.addOns ?? []).filter((line) => !dropped.has(line.onetimeId))
    order.subtotal = charge.subtotal
    order.amount = charge.amount
    return undefined
  }

  /**
   * The renewal's order on the platform, raised before any payment and kept on the charge, so a
   * retry pays the same order. When the platform priced it (its checkout: the store's tax, the
   * shipping it quoted), the charge takes those figures in the same write, before anything pays it.
   * Unless the store charges anyway, the stock is read first while no order can exist, and again when
   * the platform refuses to make the cart or the order (stock may have run out since).
   */
  async function raiseOrder(gateway: PaymentGateway, charge: ChargeRow, request: ChargeRequest, token: string): Promise<OrderOutcome> {
    const { order, store } = await renewalOrderOf(charge)
    const readsStock = gateway.checkStock !== undefined && store?.out_of_stock !== 'charge_anyway'
    if (readsStock && !charge.order_requested_at) {
      const stock = await settleStock(gateway, charge, request, order, token)
      if (stock) return stock
    }
    const made = await gateway.createOrder!(request, order).catch((error: unknown): OrderOutcome => unknownOf(error))
    if (made.status === 'unknown' && made.refused && readsStock) {
      // Refused (422): nothing was made. Out of stock since it was read? Its own line short ends the
      // charge; add-ons short are left off (only before any order was asked for) and it is tried again.
      if (made.refused === 'cart' && !charge.order_requested_at) return (await settleStock(gateway, charge, request, order, token)) ?? made
      const again = await gateway.checkStock!(request, order).catch((error: unknown): StockOutcome => unknownOf(error))
      const own = again.status === 'checked' ? again.short.filter((item) => item.lines.includes(0) && order.quantity > item.available) : []
      if (own.length > 0) return { status: 'failed', failureCode: 'out_of_stock', failureMessage: `Out of stock: ${own.map((item) => item.text).join('; ')}.` }
      return made
    }
    if (made.status !== 'created') return made
    const priced = made.priced
    // Kept only while the lease is ours: a worker that stalled here must not name its order on a
    // charge another worker has taken over (and may pay through another order).
    const kept = await setOnOrderlessCharge(db, charge.id, token, {
      platform_order_id: made.orderId,
      ...(priced ? { shipping_amount: priced.shippingAmount, shipping_method: priced.shippingMethod, tax_amount: priced.taxAmount, amount: priced.amount } : {}),
    })
    if (!kept) return { status: 'unknown', reason: 'the charge was taken over while its order was raised; nothing was paid' }
    if (priced) {
      charge.shipping_amount = priced.shippingAmount
      charge.shipping_method = priced.shippingMethod
      charge.tax_amount = priced.taxAmount
      charge.amount = priced.amount
      request.amount = priced.amount
    }
    return made
  }

  async function send(gateway: PaymentGateway, charge: ChargeRow, request: ChargeRequest, token: string): Promise<ChargeOutcome> {
    if (gateway.createOrder && !charge.platform_order_id) {
      const order = await raiseOrder(gateway, charge, request, token)
      if (order.status !== 'created') return order
      request.orderId = order.orderId
    }
    // Nothing to collect (a discount took the whole charge, as the platform priced it too): nothing is
    // paid, but a platform renewal's order still has to be shipped, so it is released for fulfilment.
    if (charge.amount === 0) {
      if (gateway.releaseUnpaidOrder) return gateway.releaseUnpaidOrder(request).catch(unknownOf)
      return { status: 'succeeded', gatewayChargeId: `nothing_to_collect:${charge.id}` }
    }
    const first = await gateway.charge(request).catch(unknownOf)
    if (first.status !== 'unknown') return first
    if ('notSent' in first && first.notSent) {
      if (!gateway.honoursIdempotencyKeys) await unmarkSubmitted(db, charge.id, token)
      return first
    }
    return lookUp(gateway, request)
  }

  async function lookUp(gateway: PaymentGateway, request: ChargeRequest): Promise<ChargeOutcome> {
    const found = await gateway.lookup(request).catch(unknownOf)
    if (found !== undefined) return found
    // No trace: with a deduplicating gateway, asking again under the same key is safe and settles it.
    if (gateway.honoursIdempotencyKeys) return gateway.charge(request).catch(unknownOf)
    return { status: 'unknown', reason: 'the gateway has no trace of the payment yet' }
  }

  async function notSentWhileBillingOff(gateway: PaymentGateway, request: ChargeRequest): Promise<ChargeOutcome> {
    const found = await gateway.lookup(request).catch(unknownOf)
    if (found !== undefined) return found
    return { status: 'failed', failureCode: 'billing_disabled', failureMessage: "The store's billing was switched off before this charge was sent; nothing was charged." }
  }

  return {
    /** Asks the gateway about one charge held under `token`: sends it when that is safe, else looks it up. */
    collect(charge: ChargeRow, token: string, { storeBills = true }: { storeBills?: boolean } = {}): Promise<ChargeOutcome> {
      const gateway = gateways.byName(charge.gateway)
      const request = requestOf(charge, gateway, token)
      const mayMoveMoneyAgain = charge.submitted_at !== null && !gateway.honoursIdempotencyKeys
      if (mayMoveMoneyAgain) return lookUp(gateway, request)
      // The store stopped billing after this charge was claimed (its worker died, or the gateway refused it
      // unsent, and it is looked at again): nothing new is sent. What an earlier send did is looked up; with
      // no trace, the charge ends `billing_disabled` and the renewal waits for billing to be on again.
      if (!storeBills) return notSentWhileBillingOff(gateway, request)
      return send(gateway, charge, request, token)
    },
  }
}

export type Collector = ReturnType<typeof createCollector>
