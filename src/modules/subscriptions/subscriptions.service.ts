import { setTimeout as sleep } from 'node:timers/promises'
import type { Db, Executor, PlanInterval, PlanRow, ShippingAddressValue, StoreRow, SubscriptionRow } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { AppError, invalidField, notFound } from '../../lib/errors.ts'
import { listPage, toPage, type Page } from '../../lib/pagination.ts'
import { storeNow } from '../stores/index.ts'
import { assertRenewalAmount } from './renewal-amount.ts'
import { NO_SCHEDULED_PRICE } from './price-schedule.ts'
import { createFirstPageLoader } from './first-pages.ts'
import { assertChangeAllowed, transition, type ChangeAction } from './subscription-state.ts'
import { withMark, type ActionMark, type Actor, type Mutation } from './subscription-mutation.ts'
import { createMutator, type SubscriptionWrites } from './subscription-writes.ts'
import { assertCanReactivate, assertMayReactivate, assertSubscriberMayStart, reactivation } from './reactivation.ts'
import { assertCanRenewNow, assertCanRetryNow, RENEW_NOW_WAIT_MS, requireRescheduleTime, waitForRenewal, type RenewNow } from './order-now.ts'
import { presentSubscriber, presentSubscription } from './subscription.presenter.ts'
import { reanchorAtNextCharge, scheduleAtResume, scheduleFrom } from './subscription-schedule.ts'
import type { SubscriberView, SubscriptionView } from './subscription.schemas.ts'
import {
  findSubscriber,
  findSubscribersByIds,
  findSubscription,
  instrumentsOfSubscriber,
  listSubscribersWithCounts,
  listSubscriptions,
  shippingAddressesOfSubscriber,
  type SubscriberWithCount,
  updateSubscriber as updateSubscriberRow,
} from './subscriptions.repository.ts'
import { searchTerms } from './subscription-search.ts'
import type { NativeSource } from './subscription-columns.ts'
import { findPlanRow, findProductsByIds, isBusinessPlan, platformProductIdOf } from '../catalog/index.ts'
import { presentInstrument, type PaymentInstrumentListView, type PlatformVariant, type ProductVariants, type StoredCard, type StoredInstruments } from '../platform/index.ts'

export type SubscriptionService = ReturnType<typeof createSubscriptionService>

/** What the subscription list filters by (GET /subscriptions; the portal's list sends only the page). */
export interface SubscriptionListFilter {
  limit: number
  cursor?: string | undefined
  status?: string | undefined
  email?: string | undefined
  plan_id?: string | undefined
  /** A search: part of the subscriber's email or name, an order id, a subscription or subscriber id (subscription-search.ts). */
  q?: string | undefined
  /** One subscriber's subscriptions (admins; a subscriber's own list is always theirs). */
  subscriber_id?: string | undefined
  /** Renewing at or after / before these times (RFC 3339): bulk operations' filter. */
  next_charge_from?: string | undefined
  next_charge_to?: string | undefined
}

/** What the subscribers export filters by (there is no subscriber list route: GET /subscribers/{id} reads one). */
export interface SubscriberListFilter {
  limit: number
  cursor?: string | undefined
  /** The subscriber's email, exactly (any case). */
  email?: string | undefined
  /** Part of the email or name, or the subscriber's id. */
  q?: string | undefined
}

/** A subscriber with what their subscriptions hold of them: where they ship, what pays (as stored). */
export interface SubscriberProfile {
  subscriber: SubscriberView
  shipping_addresses: { address: ShippingAddressValue; subscription_ids: string[] }[]
  payment_instruments: { id: string; brand: string | null; last4: string | null; expiry_month: number | null; expiry_year: number | null; subscription_ids: string[] }[]
}

/** A variant of the subscription's product, as the portal offers it (GET .../variants). */
export interface VariantChoice {
  platform_variant_id: string
  sku: string
  label: string
  purchasable: boolean
  current: boolean
}

const VARIANT_PATH = '/body/platform_variant_id'

/** The plan a subscription may move to: same store, still sold, same currency. */
export async function requireSwapTarget(trx: Executor, store: StoreRow, subscription: SubscriptionRow, planId: string, path: string) {
  const plan = await findPlanRow(trx, store.id, planId)
  if (!plan) throw notFound('plan', planId)
  if (!plan.active) throw invalidField(path, 'is an archived plan')
  if (plan.currency !== subscription.currency) {
    throw invalidField(path, `is priced in ${plan.currency}; this subscription is billed in ${subscription.currency}`)
  }
  return plan
}

/** B2B plans change by request: a subscriber proposes, the merchant decides. */
export async function assertDirectChangeAllowed(trx: Executor, subscription: SubscriptionRow, actor: Actor): Promise<void> {
  if (actor.kind !== 'subscriber') return
  if (await isBusinessPlan(trx, subscription.plan_id)) throw new AppError('invalid_state', 'this is a business plan: propose the change as a change request for the merchant to approve')
}

/** What a subscription takes from the plan it moves to; applied from the next period. */
export function planTerms(subscription: SubscriptionRow, plan: PlanRow): Mutation['set'] {
  return {
    plan_id: plan.id,
    product_id: plan.product_id,
    amount: plan.amount,
    prepaid_cycles_total: plan.prepaid_cycles,
    prepaid_cycles_remaining: plan.prepaid_cycles,
    // The variant the new plan sells, else the current one while the product stays the same.
    platform_variant_id: plan.platform_variant_id ?? (plan.product_id === subscription.product_id ? subscription.platform_variant_id : null),
    ...cadenceChange(subscription, plan.interval, plan.interval_count),
    // A price change announced on the old plan does not follow it to the new one (docs/contract.md, Price changes with notice).
    ...NO_SCHEDULED_PRICE,
  }
}

/** The variant a swap names, as kept (its digits), null to clear it; undefined when it names none. */
function swapVariant(input: { platform_variant_id?: number | string | null | undefined }): string | null | undefined {
  if (input.platform_variant_id === undefined) return undefined
  return input.platform_variant_id === null ? null : String(input.platform_variant_id)
}

export function cadenceChange(subscription: SubscriptionRow, interval: PlanInterval, intervalCount: number): Mutation['set'] {
  if (interval === subscription.interval && intervalCount === subscription.interval_count) return {}
  return { interval, interval_count: intervalCount, ...reanchorAtNextCharge(subscription) }
}

/**
 * The platform customer whose stored instruments a subscription may pay with: its subscriber's,
 * falling back to the one its checkout named (a gift's recipient has none of their own yet).
 */
async function payingCustomerOf(executor: Executor, subscription: Pick<SubscriptionRow, 'store_id' | 'subscriber_id' | 'platform_customer_id'>): Promise<string | null> {
  const subscriber = await findSubscriber(executor, subscription.store_id, subscription.subscriber_id)
  return subscriber?.platform_customer_id ?? subscription.platform_customer_id
}

export function createSubscriptionService({ db, clock, writes, instruments, variants, renewNow, renewNowWaitMs }: {
  db: Db
  clock: Clock
  writes: SubscriptionWrites
  /** With it, a platform store's instrument changes are checked against the customer's stored instruments (see checkout.service.ts). */
  instruments?: StoredInstruments | undefined
  /** With it, a subscriber on a platform store may change among the variants the catalogue sells of their product. */
  variants?: ProductVariants | undefined
  /** Runs the renewal engine for one subscription whose renewal is due (order now); without it the worker charges it. */
  renewNow?: RenewNow | undefined
  /** How long order now waits for the charge's outcome before answering 202 (docs/contract.md, Order now and reschedule). */
  renewNowWaitMs?: number | undefined
}) {
  const mutate = createMutator(db, clock, writes)
  const firstPages = createFirstPageLoader(db)

  /**
   * On a platform store, the stored card a new instrument id names, checked against the paying
   * customer's stored instruments before any transaction opens; undefined on other stores.
   */
  async function platformCard(store: StoreRow, id: string, actor: Actor, token: string): Promise<{ card: StoredCard; customerId: string } | undefined> {
    if (!instruments || store.gateway !== 'platform') return undefined
    const subscription = await findSubscription(db, store.id, id)
    if (!subscription || (actor.kind === 'subscriber' && subscription.subscriber_id !== actor.subscriberId)) throw notFound('subscription', id)
    // Refused for its state without asking the platform (checked again under the lock).
    assertChangeAllowed(subscription.status, 'update_payment_instrument')
    const customerId = await payingCustomerOf(db, subscription)
    if (customerId === null) {
      throw new AppError('invalid_payment_instrument', 'the subscription has no platform customer, so no stored payment instrument can be checked as theirs', {
        errors: [{ path: '/body/payment_instrument_id', message: 'cannot be checked: the subscription has no platform customer' }],
      })
    }
    return { card: await instruments.requireInstrument(store, customerId, token), customerId }
  }

  /**
   * The platform catalogue's variants of the subscription's product, read before any transaction
   * opens: [] on a store that does not sell through the platform; undefined when it is not connected.
   */
  async function productVariants(store: StoreRow, subscription: SubscriptionRow): Promise<PlatformVariant[] | undefined> {
    if (!variants || store.gateway !== 'platform') return []
    return variants.list(store, await platformProductIdOf(db, subscription.product_id))
  }

  /** The subscription when the actor may see it, else 404 (another subscriber's is not found). */
  async function visibleSubscription(store: StoreRow, id: string, actor: Actor): Promise<SubscriptionRow> {
    const subscription = await findSubscription(db, store.id, id)
    if (!subscription || (actor.kind === 'subscriber' && subscription.subscriber_id !== actor.subscriberId)) throw notFound('subscription', id)
    return subscription
  }

  /**
   * A subscriber's variant change, checked before any transaction opens: only on the current plan (the
   * price stays the subscription's), and only to a variant the platform lists for the product right
   * now as purchasable. Answers the product it was checked for (checked again under the lock).
   */
  async function checkSubscriberVariant(store: StoreRow, id: string, actor: Actor, input: { plan_id: string; platform_variant_id?: number | string | null | undefined }): Promise<{ productId: string }> {
    const subscription = await visibleSubscription(store, id, actor)
    // Refused for its state or its business plan without asking the platform (checked again under the lock).
    assertChangeAllowed(subscription.status, 'swap')
    await assertDirectChangeAllowed(db, subscription, actor)
    if (input.plan_id !== subscription.plan_id) throw invalidField(VARIANT_PATH, 'can only be changed on the current plan: change the plan first, then the variant')
    const wanted = swapVariant(input)
    if (wanted === null || wanted === undefined) throw invalidField(VARIANT_PATH, "must name one of the product's variants")
    // The same variant again: refused under the lock (409), nothing to ask the platform.
    if (wanted === subscription.platform_variant_id) return { productId: subscription.product_id }
    if (!variants || store.gateway !== 'platform') throw invalidField(VARIANT_PATH, 'is not offered: this store has no variants to choose from')
    const listed = await productVariants(store, subscription)
    if (listed === undefined) throw new AppError('platform_unavailable', "the store is not connected to BigCommerce, so the product's variants cannot be checked; nothing was changed, retry later")
    const variant = listed.find((candidate) => candidate.id === wanted)
    if (!variant) throw invalidField(VARIANT_PATH, "is not one of this product's variants")
    if (!variant.purchasable) throw invalidField(VARIANT_PATH, 'is not for sale: the store has stopped selling this variant')
    return { productId: subscription.product_id }
  }

  /** What the list's query selects, as the repository takes it: the list, its later pages and its export select alike. */
  function filterOf(query: SubscriptionListFilter, actor: Actor) {
    return {
      status: query.status,
      email: query.email,
      planId: query.plan_id,
      // A subscriber sees their own, whatever the query names; an admin may ask for one subscriber's.
      subscriberId: actor.kind === 'subscriber' ? actor.subscriberId : query.subscriber_id,
      search: query.q?.trim() ? searchTerms(query.q) : undefined,
      nextChargeFrom: query.next_charge_from ? new Date(query.next_charge_from) : undefined,
      nextChargeTo: query.next_charge_to ? new Date(query.next_charge_to) : undefined,
    }
  }

  async function list(store: StoreRow, query: SubscriptionListFilter, actor: Actor): Promise<Page<SubscriptionView>> {
    const filter = filterOf(query, actor)
    // The first page, unfiltered: the read every portal visit and console list makes; concurrent ones are read together.
    if (!query.cursor && !query.status && !query.email && !query.plan_id && !filter.search && !filter.nextChargeFrom && !filter.nextChargeTo) {
      const rows = await firstPages.load({ storeId: store.id, subscriberId: filter.subscriberId ?? null, limit: query.limit })
      return toPage(rows, query.limit, (row) => presentSubscription(row, store.store_hash))
    }
    return listPage(query, (bounds) => listSubscriptions(db, store.id, { ...bounds, ...filter }), (row) => presentSubscription(row, store.store_hash))
  }

  function change(store: StoreRow, id: string, actor: Actor, action: ChangeAction, decide: Parameters<typeof mutate>[3]) {
    return mutate(store, id, actor, async (context) => {
      assertChangeAllowed(context.subscription.status, action)
      return decide(context)
    })
  }

  /**
   * Runs the renewal engine for a subscription just made due now (order now, reactivation) and waits
   * for its charge to settle, or for `renewNowWaitMs` (`settled: false`: the worker finishes it).
   */
  async function renewAndWait(store: StoreRow, id: string, view: SubscriptionView): Promise<{ view: SubscriptionView; settled: boolean }> {
    if (!renewNow) return { view, settled: false }
    const before = view.latest_charge_id
    const settled = await waitForRenewal(() => renewNow(store.id, id), async () => {
      const row = await findSubscription(db, store.id, id)
      return row !== undefined && row.pending_charge_id === null && row.latest_charge_id !== before
    }, renewNowWaitMs)
    return { view: presentSubscription((await findSubscription(db, store.id, id))!, store.store_hash), settled }
  }

  return {
    async get(store: StoreRow, id: string, actor: Actor): Promise<SubscriptionView> {
      const row = await findSubscription(db, store.id, id)
      if (!row || (actor.kind === 'subscriber' && row.subscriber_id !== actor.subscriberId)) throw notFound('subscription', id)
      return presentSubscription(row, store.store_hash)
    },

    /** A subscriber of the store: the signed-in subscriber's own profile, say. */
    async getSubscriber(store: StoreRow, subscriberId: string): Promise<SubscriberView> {
      const row = await findSubscriber(db, store.id, subscriberId)
      if (!row) throw notFound('subscriber', subscriberId)
      return presentSubscriber(row, store.store_hash)
    },

    /** The subscriber's own name or default address; no event (subscriptions keep their own addresses). */
    async updateSubscriber(store: StoreRow, subscriberId: string, input: { name?: string | undefined; shipping_address?: ShippingAddressValue | null | undefined }): Promise<SubscriberView> {
      const changes: Parameters<typeof updateSubscriberRow>[3] = { updated_at: storeNow(store, clock) }
      if (input.name !== undefined) changes.name = input.name
      if (input.shipping_address !== undefined) changes.shipping_address = input.shipping_address ? JSON.stringify(input.shipping_address) : null
      const row = await updateSubscriberRow(db, store.id, subscriberId, changes)
      if (!row) throw notFound('subscriber', subscriberId)
      return presentSubscriber(row, store.store_hash)
    },

    /** The platform customer whose stored instruments pay this subscriber's subscriptions, if any. */
    async platformCustomerOf(store: StoreRow, subscriberId: string): Promise<string | null> {
      const subscriber = await findSubscriber(db, store.id, subscriberId)
      if (!subscriber) throw notFound('subscriber', subscriberId)
      return subscriber.platform_customer_id
    },

    async getWithSubscriber(store: StoreRow, id: string) {
      const row = await findSubscription(db, store.id, id)
      if (!row) throw notFound('subscription', id)
      const subscriber = await findSubscriber(db, store.id, row.subscriber_id)
      if (!subscriber) throw notFound('subscriber', row.subscriber_id)
      return { ...presentSubscription(row, store.store_hash), subscriber: presentSubscriber(subscriber, store.store_hash) }
    },

    list,

    /**
     * A page of the list as stored, each subscription with its subscriber's and its product's rows: what
     * the `native` export writes (subscription-columns.ts). The same filters and order as `list`; the
     * page may be larger than the API's (the export reads 500 at a time).
     */
    async listRows(store: StoreRow, query: SubscriptionListFilter, actor: Actor): Promise<Page<NativeSource>> {
      const page = await listPage(query, (bounds) => listSubscriptions(db, store.id, { ...bounds, ...filterOf(query, actor) }), (row) => row)
      const [subscribers, products] = await Promise.all([
        findSubscribersByIds(db, store.id, page.data.map((row) => row.subscriber_id)),
        findProductsByIds(db, store.id, page.data.map((row) => row.product_id)),
      ])
      return {
        data: page.data.map((subscription) => ({ subscription, subscriber: subscribers.get(subscription.subscriber_id)!, product: products.get(subscription.product_id) })),
        next_cursor: page.next_cursor,
      }
    },

    /**
     * A page of the store's subscribers, newest first, each with how many subscriptions they have (any
     * state): the subscribers export. `email` is exact (any case); `q` is part of the email or name, or
     * the subscriber's id, as the subscription list's search reads it (subscription-search.ts).
     */
    listSubscribers(store: StoreRow, query: SubscriberListFilter): Promise<Page<SubscriberWithCount>> {
      const search = query.q?.trim() ? searchTerms(query.q) : undefined
      return listPage(query, (bounds) => listSubscribersWithCounts(db, store.id, { ...bounds, email: query.email, search }), (row) => row)
    },

    /** The admin list: each subscription with its subscriber (one more read a page), so a search's results say whose they are. */
    async listWithSubscribers(store: StoreRow, query: SubscriptionListFilter, actor: Actor): Promise<Page<SubscriptionView & { subscriber: SubscriberView }>> {
      const page = await list(store, query, actor)
      const subscribers = await findSubscribersByIds(db, store.id, page.data.map((subscription) => subscription.subscriber_id))
      return {
        // A subscriber is never deleted while a subscription refers to it (the foreign key restricts it).
        data: page.data.map((subscription) => ({ ...subscription, subscriber: presentSubscriber(subscribers.get(subscription.subscriber_id)!, store.store_hash) })),
        next_cursor: page.next_cursor,
      }
    },

    /** One subscriber of the store (404 when there is none), with the addresses and instruments their subscriptions use. */
    async getSubscriberProfile(store: StoreRow, subscriberId: string): Promise<SubscriberProfile> {
      const subscriber = await findSubscriber(db, store.id, subscriberId)
      if (!subscriber) throw notFound('subscriber', subscriberId)
      const [addresses, instruments] = await Promise.all([shippingAddressesOfSubscriber(db, store.id, subscriberId), instrumentsOfSubscriber(db, store.id, subscriberId)])
      return {
        subscriber: presentSubscriber(subscriber, store.store_hash),
        shipping_addresses: addresses.map((row) => ({ address: row.shipping_address!, subscription_ids: row.subscription_ids })),
        payment_instruments: instruments.map((row) => ({
          id: row.payment_instrument_id,
          brand: row.payment_instrument_brand,
          last4: row.payment_instrument_last4,
          expiry_month: row.payment_instrument_expiry_month,
          expiry_year: row.payment_instrument_expiry_year,
          subscription_ids: row.subscription_ids,
        })),
      }
    },

    pause(store: StoreRow, id: string, actor: Actor, input: { resume_at?: string | null | undefined }, mark?: ActionMark) {
      return mutate(store, id, actor, ({ subscription, now }) => {
        const resumeAt = input.resume_at ? new Date(input.resume_at) : null
        if (resumeAt && resumeAt <= now) throw invalidField('/body/resume_at', 'must be in the future')
        return withMark({ set: { status: transition(subscription.status, 'pause'), paused_at: now, resume_at: resumeAt }, events: ['subscription.paused'] }, mark)
      })
    },

    resume(store: StoreRow, id: string, actor: Actor) {
      return mutate(store, id, actor, ({ subscription, now }) => ({
        set: { status: transition(subscription.status, 'resume'), paused_at: null, resume_at: null, ...scheduleAtResume(subscription, now) },
        events: ['subscription.resumed'],
      }))
    },

    cancel(store: StoreRow, id: string, actor: Actor, input: { at_period_end?: boolean | undefined; reason?: string | undefined; reason_code?: string | undefined }) {
      // Only a code the store lists; checked before anything is locked or written.
      if (input.reason_code !== undefined && !store.cancellation_reasons.some((reason) => reason.code === input.reason_code)) {
        throw invalidField('/body/reason_code', "is not one of the store's cancellation_reasons codes")
      }
      const reasonCode = input.reason_code ?? null
      return mutate(store, id, actor, ({ subscription, now }) => {
        const reason = input.reason ?? null
        // Nothing paid is left to run out on a pending subscription, so it ends at once.
        if (input.at_period_end && subscription.status !== 'pending') {
          transition(subscription.status, 'cancel')
          return { set: { cancel_at_period_end: true, cancellation_reason: reason, cancellation_reason_code: reasonCode }, events: ['subscription.updated'] }
        }
        return {
          set: {
            status: transition(subscription.status, 'cancel'),
            cancelled_at: now,
            cancellation_reason: reason,
            cancellation_reason_code: reasonCode,
            cancel_at_period_end: false,
            next_charge_at: null,
            resume_at: null,
          },
          events: ['subscription.cancelled'],
        }
      })
    },

    skip(store: StoreRow, id: string, actor: Actor, mark?: ActionMark) {
      return change(store, id, actor, 'skip', ({ subscription }) => {
        if (subscription.skip_next) throw new AppError('invalid_state', 'the next renewal is already skipped')
        if (!subscription.next_charge_at) throw new AppError('invalid_state', 'there is no scheduled renewal to skip')
        return withMark({ set: { skip_next: true, skip_reason: 'requested' }, events: ['subscription.skipped'] }, mark)
      })
    },

    /**
     * Order now: the next renewal becomes due at once, through the renewal engine's own claim, charge
     * and settlement, and the new period starts now (the billing anchor moves here). Answers once the
     * charge settled, or when `renewNowWaitMs` has passed (`settled: false`: the worker finishes it).
     */
    async chargeNow(store: StoreRow, id: string, actor: Actor): Promise<{ view: SubscriptionView; settled: boolean }> {
      const view = await mutate(store, id, actor, ({ subscription, now }) => {
        assertCanRenewNow(store, subscription, now)
        // A skip was of the renewal this one replaces: the order now is what the subscriber asked for.
        // No event of its own: the renewal's subscription.charged follows at once, as for any renewal.
        return { set: { ...scheduleFrom(subscription, now), skip_next: false }, events: [] }
      })
      return renewAndWait(store, id, view)
    },

    /**
     * Retry now (docs/contract.md, Payment recovery): the next dunning retry of the unpaid period is
     * brought forward to now, with the subscription's current instrument, and run through the renewal
     * engine's own claim, charge and settlement (as order now). Answers the attempt's charge id once
     * it settled, or when `renewNowWaitMs` has passed (`settled: false`: the worker finishes it).
     * Two requests at once make one attempt: the engine claims the subscription once, and the second
     * is refused (a charge in flight) or waits for the same charge.
     */
    async retryCharge(store: StoreRow, id: string, actor: Actor): Promise<{ chargeId: string; settled: boolean }> {
      const view = await mutate(store, id, actor, ({ subscription, now }) => {
        assertCanRetryNow(store, subscription)
        // Who asked is recorded here (the attempt's own events are the renewal engine's, as any retry's).
        return { set: { next_charge_at: now }, events: ['subscription.retry_requested'] }
      })
      const before = view.latest_charge_id
      const claimed = async () => (await findSubscription(db, store.id, id))?.latest_charge_id !== before
      const settled = renewNow
        ? await waitForRenewal(async () => {
            // The engine skips a row another transaction holds at that instant: asked again until it is claimed.
            const deadline = Date.now() + (renewNowWaitMs ?? RENEW_NOW_WAIT_MS)
            while (!(await renewNow(store.id, id).then(claimed)) && Date.now() < deadline) await sleep(50)
          }, async () => {
            const row = await findSubscription(db, store.id, id)
            return row !== undefined && row.pending_charge_id === null && row.latest_charge_id !== before
          }, renewNowWaitMs)
        : false
      const after = (await findSubscription(db, store.id, id))!
      // Never claimed within the wait (no engine in this process, or the database kept refusing): due now, the worker charges it.
      if (after.latest_charge_id === before || after.latest_charge_id === null) {
        throw new AppError('service_unavailable', "the retry is due now but could not be started here; the worker charges it shortly: read the subscription's latest_charge_id")
      }
      return { chargeId: after.latest_charge_id, settled: settled && after.pending_charge_id !== after.latest_charge_id }
    },

    /**
     * The stored payment instruments the subscription may change to (the admin's list): on a platform
     * store the paying customer's stored cards, read live (503 when BigCommerce cannot be asked); on a
     * test-gateway store none (any instrument id is accepted there).
     */
    async paymentInstrumentsOf(store: StoreRow, id: string): Promise<PaymentInstrumentListView> {
      const subscription = await findSubscription(db, store.id, id)
      if (!subscription) throw notFound('subscription', id)
      if (store.gateway !== 'platform' || !instruments) return { gateway: 'test', data: [] }
      const customerId = await payingCustomerOf(db, subscription)
      if (customerId === null) return { gateway: 'platform', data: [] }
      const listed = await instruments.list(store, customerId)
      return { gateway: 'platform', data: listed.filter((instrument): instrument is StoredCard => instrument.type === 'stored_card').map(presentInstrument) }
    },

    /**
     * Reactivation (reactivation.ts): a cancelled subscription starts again on its plan, terms and
     * instrument. From now, the first renewal is charged at once through the renewal engine, as order
     * now's is, and the answer waits for it like order now's (`settled: false` past the wait: the
     * worker finishes it); from a later `next_charge_at`, nothing is charged until then.
     */
    async reactivate(store: StoreRow, id: string, actor: Actor, input: { next_charge_at?: string | undefined }): Promise<{ view: SubscriptionView; settled: boolean }> {
      const later = input.next_charge_at !== undefined
      const view = await mutate(store, id, actor, async ({ trx, subscription, now }) => {
        // After the lock: another subscriber's subscription is 404 whatever the setting.
        assertMayReactivate(store, actor)
        const at = input.next_charge_at !== undefined ? requireRescheduleTime(store, input.next_charge_at, now) : now
        assertCanReactivate(store, subscription, await findPlanRow(trx, store.id, subscription.plan_id), !later)
        assertSubscriberMayStart(subscription, actor, now, at)
        return reactivation(subscription, now, at)
      })
      if (later) return { view, settled: true }
      return renewAndWait(store, id, view)
    },

    /** Moves the next renewal; the billing anchor moves with it (see scheduleFrom). */
    /**
     * `ifNextChargeAt` (a bulk operation's): only if the renewal is still the one it picked, checked under
     * the lock; a renewal made meanwhile (or a move already done) is 409, never moved again onto a period
     * just paid.
     */
    reschedule(store: StoreRow, id: string, actor: Actor, input: { next_charge_at: string }, ifNextChargeAt?: Date | null) {
      return mutate(store, id, actor, ({ subscription, now }) => {
        if (ifNextChargeAt !== undefined && (subscription.next_charge_at?.getTime() ?? null) !== (ifNextChargeAt?.getTime() ?? null)) {
          throw new AppError('invalid_state', `its next renewal is no longer ${ifNextChargeAt?.toISOString() ?? 'unscheduled'} (now ${subscription.next_charge_at?.toISOString() ?? 'none'}): it renewed or moved since the operation chose it, so it is left as it is`)
        }
        const at = requireRescheduleTime(store, input.next_charge_at, now)
        assertCanRenewNow(store, subscription, now, 'reschedule')
        return { set: scheduleFrom(subscription, at), events: ['subscription.rescheduled'] }
      })
    },

    unskip(store: StoreRow, id: string, actor: Actor) {
      return change(store, id, actor, 'unskip', ({ subscription }) => {
        if (!subscription.skip_next) throw new AppError('invalid_state', 'the next renewal is not skipped')
        return { set: { skip_next: false }, events: ['subscription.unskipped'] }
      })
    },

    /**
     * The variants a subscriber may change to: those the platform's catalogue lists for the
     * subscription's product right now (live, before any transaction). [] on a store that does not
     * sell through the platform or is not connected, for a product without a platform product id, and
     * for a product that has only its base variant: nothing to choose.
     */
    async variantChoices(store: StoreRow, id: string, actor: Actor): Promise<VariantChoice[]> {
      const subscription = await visibleSubscription(store, id, actor)
      const listed = (await productVariants(store, subscription)) ?? []
      return listed.map((variant) => ({
        platform_variant_id: variant.id,
        sku: variant.sku,
        label: variant.label,
        purchasable: variant.purchasable,
        current: variant.id === subscription.platform_variant_id,
      }))
    },

    async swap(store: StoreRow, id: string, actor: Actor, input: { plan_id: string; platform_variant_id?: number | string | null | undefined }) {
      // A subscriber changes only the variant, on the current plan, to one the platform sells now: the
      // renewal is still ordered at the subscription's own price (cart list_price), whatever the variant.
      // HTTP to the platform happens here, never inside the transaction below.
      const checked = actor.kind === 'subscriber' && input.platform_variant_id !== undefined ? await checkSubscriberVariant(store, id, actor, input) : undefined
      return change(store, id, actor, 'swap', async ({ trx, subscription }) => {
        await assertDirectChangeAllowed(trx, subscription, actor)
        if (checked && (subscription.plan_id !== input.plan_id || subscription.product_id !== checked.productId)) {
          throw new AppError('conflict', 'the subscription changed while its variant was checked; retry')
        }
        const variant = swapVariant(input)
        if (input.plan_id === subscription.plan_id) {
          // Another size or grind of the same plan: only the variant changes, from the next renewal.
          if (variant === undefined || variant === subscription.platform_variant_id) throw new AppError('invalid_state', 'the subscription is already on this plan and variant')
          return { set: { platform_variant_id: variant }, events: ['subscription.swapped'] }
        }
        const plan = await requireSwapTarget(trx, store, subscription, input.plan_id, '/body/plan_id')
        if (plan.id === subscription.plan_id) throw new AppError('invalid_state', 'the subscription is already on this plan')
        // Business terms are the merchant's to grant; a subscriber cannot move onto them unasked.
        if (actor.kind === 'subscriber' && plan.b2b) throw invalidField('/body/plan_id', 'is a business plan: ask the merchant to move you onto it')
        assertRenewalAmount(plan.amount, subscription.quantity, '/body/plan_id')
        return {
          // A variant named overrides the plan's (planTerms).
          set: { ...planTerms(subscription, plan), ...(variant === undefined ? {} : { platform_variant_id: variant }) },
          events: ['subscription.swapped'],
        }
      })
    },

    changeQuantity(store: StoreRow, id: string, actor: Actor, input: { quantity: number }) {
      return change(store, id, actor, 'change_quantity', async ({ trx, subscription }) => {
        await assertDirectChangeAllowed(trx, subscription, actor)
        // The price it moves to counts too: a scheduled price change charges it at this quantity.
        assertRenewalAmount(Math.max(subscription.amount, subscription.scheduled_amount ?? 0), input.quantity, '/body/quantity')
        return { set: { quantity: input.quantity }, events: ['subscription.updated'] }
      })
    },

    changeInterval(store: StoreRow, id: string, actor: Actor, input: { interval: PlanInterval; interval_count?: number | undefined }) {
      return change(store, id, actor, 'change_interval', async ({ trx, subscription }) => {
        await assertDirectChangeAllowed(trx, subscription, actor)
        const set = cadenceChange(subscription, input.interval, input.interval_count ?? 1)
        if (Object.keys(set).length === 0) throw new AppError('invalid_state', 'the subscription already renews on this interval')
        return { set, events: ['subscription.updated'] }
      })
    },

    updateShippingAddress(store: StoreRow, id: string, actor: Actor, input: { shipping_address: ShippingAddressValue }) {
      return change(store, id, actor, 'update_shipping_address', () => ({
        set: { shipping_address: JSON.stringify(input.shipping_address) },
        events: ['shipping.address_updated'],
      }))
    },

    async updatePaymentInstrument(store: StoreRow, id: string, actor: Actor, input: { payment_instrument_id: string }) {
      // HTTP to the platform happens here, never inside the transaction below.
      const checked = await platformCard(store, id, actor, input.payment_instrument_id)
      return change(store, id, actor, 'update_payment_instrument', async ({ trx, subscription, now }) => {
        if (checked && (await payingCustomerOf(trx, subscription)) !== checked.customerId) {
          throw new AppError('conflict', 'the subscription changed hands while its instrument was checked; retry')
        }
        // A subscription in dunning retries the unpaid period at once with the new instrument.
        const inDunning = subscription.dunning_attempts > 0 && subscription.pending_charge_id === null && ['active', 'past_due'].includes(subscription.status)
        return {
          set: {
            payment_instrument_id: input.payment_instrument_id,
            // What the platform shows of the new instrument; an instrument of the test gateway shows nothing.
            payment_instrument_brand: checked?.card.brand ?? null,
            payment_instrument_last4: checked?.card.last_4 ?? null,
            payment_instrument_expiry_month: checked?.card.expiry_month ?? null,
            payment_instrument_expiry_year: checked?.card.expiry_year ?? null,
            ...(checked ? { platform_customer_id: checked.customerId } : {}),
            ...(inDunning ? { next_charge_at: now } : {}),
          },
          events: ['subscription.payment_instrument_updated'],
        }
      })
    },

    storeNow: (store: StoreRow) => storeNow(store, clock),
  }
}
