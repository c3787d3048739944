import { createHash } from 'node:crypto'
import type { Actor } from '../../http/actors.ts'
import type { Db, Executor, PlanRow, StoreRow } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { canonicalJson } from '../../lib/canonical-json.ts'
import { AppError, invalidField, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import type { EventLog, EventType, NewEvent } from '../events/index.ts'
import { storeNow } from '../stores/index.ts'
import { assertRenewalAmount } from './renewal-amount.ts'
import { presentSubscription } from './subscription.presenter.ts'
import { activationTime, scheduleAtActivation } from './subscription-schedule.ts'
import type { CheckoutInput, SubscriptionView } from './subscription.schemas.ts'
import { claimCheckout, findCheckout, findOrCreateSubscriber, findSubscriptionsByIds, insertSubscriptions } from './subscriptions.repository.ts'
import { findPlanRows } from '../catalog/index.ts'
import type { StoredCard, StoredInstruments } from '../platform/index.ts'

export interface CheckoutOutcome {
  data: SubscriptionView[]
  /** True when this order was ingested before and nothing new was created. */
  replayed: boolean
}

export type CheckoutService = ReturnType<typeof createCheckoutService>

/**
 * Redeems an item's `discount_code` in the checkout's transaction (module discounts, given by the
 * composition root): answers the subscription's discount columns, or throws the code's problem.
 */
export type RedeemCheckoutDiscount = (
  trx: Executor,
  store: StoreRow,
  code: string,
  target: { planId: string; currency: string; path: string },
  now: Date,
) => Promise<{ discount_id: string; discount: string; discount_cycles_remaining: number | null }>

// A start this close to now is "now": clocks of the platform and of this service differ a little.
const START_NOW_TOLERANCE_MS = 60_000

/**
 * The fingerprint of what a checkout asked for, insensitive to key order, to the order id's JSON type
 * and to the case of emails, so a platform retrying the same order is recognised as the same request.
 */
function checkoutHash(input: CheckoutInput): string {
  const normalised = {
    ...input,
    platform_order_id: String(input.platform_order_id),
    ...(input.platform_customer_id === undefined ? {} : { platform_customer_id: String(input.platform_customer_id) }),
    items: input.items.map((item) => (item.platform_variant_id === undefined ? item : { ...item, platform_variant_id: String(item.platform_variant_id) })),
    email: input.email.toLowerCase(),
    ...(input.gift ? { gift: { ...input.gift, recipient_email: input.gift.recipient_email.toLowerCase() } } : {}),
  }
  return createHash('sha256').update(canonicalJson(normalised)).digest('hex')
}

async function requirePlans(trx: Executor, store: StoreRow, input: CheckoutInput): Promise<PlanRow[]> {
  const ids = [...new Set(input.items.map((item) => item.plan_id))]
  const plans = await findPlanRows(trx, store.id, ids)
  return input.items.map((item, index) => {
    const plan = plans.find((candidate) => candidate.id === item.plan_id)
    if (!plan) throw notFound('plan', item.plan_id)
    if (!plan.active) throw invalidField(`/body/items/${index}/plan_id`, 'is an archived plan and cannot be subscribed to')
    return plan
  })
}

/**
 * A store charging through the platform needs the paying customer and the billing address of its
 * renewal orders, and an instrument that is one of that customer's stored cards (docs/contract.md,
 * "The commerce platform"). Both missing fields are named at once.
 */
export function assertPlatformCheckoutFields(input: CheckoutInput): void {
  const errors = [
    ...(input.platform_customer_id === undefined ? [{ path: '/body/platform_customer_id', message: 'is required when the store charges through the platform' }] : []),
    ...(input.billing_address === undefined || input.billing_address === null ? [{ path: '/body/billing_address', message: 'is required when the store charges through the platform' }] : []),
  ]
  if (errors.length) throw new AppError('validation_failed', errors.map((e) => `${e.path} ${e.message}`).join('; '), { errors })
}

/**
 * A completed checkout becomes one subscription per item. The platform order id makes it idempotent:
 * the row claiming the order is inserted first, so a concurrent duplicate waits on it and then
 * answers what the first one created.
 */
export function createCheckoutService({ db, clock, events, instruments, redeemDiscount }: {
  db: Db
  clock: Clock
  events: EventLog
  /**
   * The platform's stored instruments: with it, a store whose gateway is `platform` has its
   * checkouts' instruments checked against the customer's. The composition root always gives it;
   * code that builds the service without it (some tests) skips the platform's rules.
   */
  instruments?: StoredInstruments | undefined
  /** Applies items' `discount_code`; without it (some tests) a checkout naming a code is refused. */
  redeemDiscount?: RedeemCheckoutDiscount | undefined
}) {
  /** The stored card a platform store's checkout pays with, asked of the platform before any transaction. */
  async function platformCard(store: StoreRow, input: CheckoutInput, orderId: string): Promise<StoredCard | undefined> {
    if (!instruments || store.gateway !== 'platform') return undefined
    assertPlatformCheckoutFields(input)
    // An order already ingested is answered from the database (replayed or refused as a conflict) without asking the platform.
    const ingested = await findCheckout(db, store.id, orderId)
    if (ingested) return undefined
    return instruments.requireInstrument(store, String(input.platform_customer_id), input.payment_instrument_id)
  }

  return {
    /** Who sends it is who the events name: the merchant's key or console, or BigCommerce's order webhook. */
    async checkout(store: StoreRow, input: CheckoutInput, actor: Actor): Promise<CheckoutOutcome> {
      const now = storeNow(store, clock)
      const startAt = input.start_at ? new Date(input.start_at) : now
      if (startAt.getTime() < now.getTime() - START_NOW_TOLERANCE_MS) throw invalidField('/body/start_at', 'must not be in the past')
      const orderId = String(input.platform_order_id)
      const hash = checkoutHash(input)
      // HTTP to the platform happens here, never inside the transaction below.
      const card = await platformCard(store, input, orderId)

      // Ids are chosen before the order is claimed, so the claim row already names what it created.
      const subscriptionIds = input.items.map(() => newId('sub'))

      return db.transaction().execute(async (trx) => {
        const claimed = await claimCheckout(trx, { store_id: store.id, platform_order_id: orderId, request_hash: hash, subscription_ids: subscriptionIds })
        if (!claimed) return replay(trx, store, orderId, hash)

        const plans = await requirePlans(trx, store, input)
        // Refused here, the claim above rolls back with it: nothing of the order is written.
        input.items.forEach((item, index) => assertRenewalAmount(plans[index]!.amount, item.quantity, `/body/items/${index}/quantity`))
        const email = input.email.toLowerCase()
        const recipient = input.gift ? input.gift.recipient_email.toLowerCase() : email
        const found = await findOrCreateSubscriber(trx, {
          id: newId('cus'),
          store_id: store.id,
          email: recipient,
          // A gift's buyer is not its recipient: the recipient's name is not known yet.
          name: input.gift ? null : (input.name ?? null),
          shipping_address: input.shipping_address ? JSON.stringify(input.shipping_address) : null,
          // A gift's buyer pays, but is not the subscriber: the recipient's customer is not known yet.
          platform_customer_id: input.gift || input.platform_customer_id === undefined ? null : String(input.platform_customer_id),
          created_at: now,
          updated_at: now,
        })
        // Refused here, the claim above rolls back with it: nothing of the order is written.
        if ('conflict' in found) {
          throw new AppError('conflict', `${recipient} is the email of a subscriber of another platform customer (${found.conflict.platform_customer_id}): a checkout never re-points a subscriber to someone else's card; use the customer's own email, or ask the merchant`)
        }
        const subscriber = found
        const gift = input.gift ? { gifter_email: email, recipient_email: recipient, message: input.gift.message ?? null } : null
        // Each item's code counts one redemption; a code that cannot be used refuses the whole order.
        const discounts: (Awaited<ReturnType<RedeemCheckoutDiscount>> | undefined)[] = []
        for (const [index, item] of input.items.entries()) {
          if (item.discount_code === undefined) {
            discounts.push(undefined)
            continue
          }
          const path = `/body/items/${index}/discount_code`
          if (!redeemDiscount) throw invalidField(path, 'cannot be applied: discounts are not available')
          discounts.push(await redeemDiscount(trx, store, item.discount_code, { planId: plans[index]!.id, currency: plans[index]!.currency, path }, now))
        }

        const rows = input.items.map((item, index) => {
          const plan = plans[index]!
          const activeAt = activationTime(startAt, plan.trial_days, store.timezone)
          const startsNow = activeAt.getTime() <= now.getTime() + START_NOW_TOLERANCE_MS && plan.trial_days === 0
          const cadence = { interval: plan.interval, interval_count: plan.interval_count, prepaid_cycles: plan.prepaid_cycles }
          const schedule = startsNow ? scheduleAtActivation(now, cadence, false, store.timezone) : undefined
          return {
            id: subscriptionIds[index]!,
            store_id: store.id,
            subscriber_id: subscriber.id,
            plan_id: plan.id,
            product_id: plan.product_id,
            platform_order_id: orderId,
            status: startsNow ? ('active' as const) : ('pending' as const),
            quantity: item.quantity,
            amount: plan.amount,
            currency: plan.currency,
            interval: plan.interval,
            interval_count: plan.interval_count,
            payment_instrument_id: input.payment_instrument_id,
            payment_instrument_brand: card?.brand ?? null,
            payment_instrument_last4: card?.last_4 ?? null,
            payment_instrument_expiry_month: card?.expiry_month ?? null,
            payment_instrument_expiry_year: card?.expiry_year ?? null,
            shipping_address: input.shipping_address ? JSON.stringify(input.shipping_address) : null,
            billing_address: input.billing_address ? JSON.stringify(input.billing_address) : null,
            platform_customer_id: input.platform_customer_id === undefined ? null : String(input.platform_customer_id),
            // The variant the shopper bought, else the one the plan sells.
            platform_variant_id: item.platform_variant_id === undefined ? (plan.platform_variant_id ?? null) : String(item.platform_variant_id),
            // Each subscription of the order ships on its own at renewal, at the rate the checkout paid.
            shipping_method: input.shipping?.method ?? null,
            shipping_amount: input.shipping?.amount ?? null,
            start_at: startsNow ? now : activeAt,
            trial_days: plan.trial_days,
            ...(schedule ?? {}),
            gift: gift ? JSON.stringify(gift) : null,
            ...(discounts[index] ?? {}),
            prepaid_cycles_total: plan.prepaid_cycles,
            prepaid_cycles_remaining: schedule ? schedule.prepaid_cycles_remaining : plan.prepaid_cycles,
            created_at: now,
            updated_at: now,
          }
        })
        const inserted = await insertSubscriptions(trx, rows)
        const byId = new Map(inserted.map((row) => [row.id, row]))
        const created = subscriptionIds.map((id) => presentSubscription(byId.get(id)!, store.store_hash))

        const toRecord: NewEvent[] = []
        for (const view of created) {
          const eventTypes: EventType[] = ['subscription.created']
          if (gift) eventTypes.push('subscription.gifted')
          if (view.status === 'active') eventTypes.push('subscription.activated')
          if (view.status === 'active' && view.prepaid !== null) eventTypes.push('prepaid.order_created')
          if (view.discount !== null) eventTypes.push('subscription.discount_applied')
          for (const eventType of eventTypes) toRecord.push({ storeId: store.id, eventType, occurredAt: now, data: view, actor })
        }
        await events.recordOfNewEntities(trx, toRecord)
        return { data: created, replayed: false }
      })
    },
  }
}

async function replay(trx: Executor, store: StoreRow, orderId: string, hash: string): Promise<CheckoutOutcome> {
  const existing = (await findCheckout(trx, store.id, orderId))!
  if (existing.request_hash !== hash) {
    throw new AppError('conflict', `order ${orderId} was already ingested with different contents`)
  }
  const rows = await findSubscriptionsByIds(trx, store.id, existing.subscription_ids)
  const byId = new Map(rows.map((row) => [row.id, row]))
  return {
    data: existing.subscription_ids.map((id) => presentSubscription(byId.get(id)!, store.store_hash)),
    replayed: true,
  }
}
