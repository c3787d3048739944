import type { ChargeRow } from '../../db/database.ts'
import { platformProductIdOf } from '../catalog/index.ts'
import { findStoresByIds } from '../stores/index.ts'
import { renewalOrderDetails } from '../subscriptions/index.ts'
import type { ChargeOutcome, ChargeRequest, OrderOutcome, PaymentGateway, RenewalOrder } from './gateways/index.ts'
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

  /**
   * The renewal's order on the platform, raised before any payment and kept on the charge, so a
   * retry pays the same order. When the platform priced it (its checkout: the store's tax, the
   * shipping it quoted), the charge takes those figures in the same write, before anything pays it.
   */
  async function raiseOrder(gateway: PaymentGateway, charge: ChargeRow, request: ChargeRequest, token: string): Promise<OrderOutcome> {
    const details = await renewalOrderDetails(db, charge.subscription_id)
    const [store] = (await findStoresByIds(db, [charge.store_id])).values()
    const addOns = []
    let ownLine = charge.line_items?.find((line) => line.type === 'subscription')
    for (const line of charge.line_items ?? []) {
      if (line.type !== 'onetime') continue
      addOns.push({ platformProductId: await platformProductIdOf(db, line.product_id), quantity: line.quantity, unitAmount: line.unit_amount, amount: line.amount })
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
      // Stock is the store's concern unless it sells regardless (`charge_anyway`).
      checkStock: store?.out_of_stock !== 'charge_anyway',
      amount: charge.amount,
      addOns,
      currency: charge.currency.trim(),
      email: details.email,
      platformCustomerId: details.platformCustomerId,
      billingAddress: details.billingAddress,
      shippingAddress: details.shippingAddress,
    }
    const made = await gateway.createOrder!(request, order).catch((error: unknown): OrderOutcome => unknownOf(error))
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

  return {
    /** Asks the gateway about one charge held under `token`: sends it when that is safe, else looks it up. */
    collect(charge: ChargeRow, token: string): Promise<ChargeOutcome> {
      const gateway = gateways.byName(charge.gateway)
      const request = requestOf(charge, gateway, token)
      const mayMoveMoneyAgain = charge.submitted_at !== null && !gateway.honoursIdempotencyKeys
      return mayMoveMoneyAgain ? lookUp(gateway, request) : send(gateway, charge, request, token)
    },
  }
}

export type Collector = ReturnType<typeof createCollector>
