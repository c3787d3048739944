import type { Db, OnetimeRow, StoreRow, SubscriptionRow } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { AppError, invalidField, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { MAX_RENEWAL_AMOUNT } from '../../lib/money.ts'
import { listPage, type Page, type PageRequest } from '../../lib/pagination.ts'
import { toRfc3339 } from '../../lib/time.ts'
import { findProduct } from '../catalog/index.ts'
import type { EventLog } from '../events/index.ts'
import { storeNow } from '../stores/index.ts'
import { findSubscription, lockForActor, type Actor } from '../subscriptions/index.ts'
import type { CreateOnetimeInput, OnetimeView } from './onetime.schemas.ts'
import { insertOnetime, listOnetimes, lockOnetime, markRemoved, pendingAddOns } from './onetimes.repository.ts'

/**
 * One-time add-ons (docs/contract.md, Discounts and add-ons): a product with a one-time price added
 * to a subscription's next renewal. The renewal engine reads the pending ones when it records the
 * charge (`pendingAddOns`), puts them in its `line_items` and its platform order, and marks them
 * charged when that charge succeeds (`markAddOnsCharged`): a failed attempt leaves them for the retry.
 */

/**
 * When the renewal that charges a subscription's pending add-ons is due (billing's `upcomingRenewalAt`,
 * given by the composition root: billing is built after this module); null when none is coming.
 */
export type RenewalAt = (subscription: SubscriptionRow, store: StoreRow, pending: readonly OnetimeRow[]) => Date | null

/** `renewalAt`: when the renewal that will charge it is due (shown while it is pending). */
export function presentOnetime(row: OnetimeRow, renewalAt: Date | null = null): OnetimeView {
  return {
    id: row.id,
    object: 'onetime',
    subscription_id: row.subscription_id,
    product_id: row.product_id,
    quantity: row.quantity,
    unit_amount: row.unit_amount,
    currency: row.currency.trim(),
    status: row.status,
    charge_id: row.charge_id,
    renewal_at: row.status === 'pending' && renewalAt ? toRfc3339(renewalAt) : null,
    created_at: toRfc3339(row.created_at),
    updated_at: toRfc3339(row.updated_at),
  }
}

const FINAL = new Set(['cancelled', 'expired'])

export function createOnetimeService({ db, clock, events, renewalAt = () => null }: { db: Db; clock: Clock; events: EventLog; renewalAt?: RenewalAt | undefined }) {
  return {
    async create(store: StoreRow, subscriptionId: string, actor: Actor, input: CreateOnetimeInput): Promise<OnetimeView> {
      return db.transaction().execute(async (trx) => {
        const subscription = await lockForActor(trx, store, subscriptionId, actor)
        if (FINAL.has(subscription.status)) throw new AppError('invalid_state', `cannot add to the next order of a ${subscription.status} subscription`)
        const product = await findProduct(trx, input.product_id, store.id)
        if (!product) throw notFound('product', input.product_id)
        if (!product.active) throw invalidField('/body/product_id', 'is a product that is not active')
        if (product.one_time_amount === null || product.one_time_currency === null) throw invalidField('/body/product_id', 'is a product without a one-time price: it cannot be added once')
        const currency = product.one_time_currency.trim()
        if (currency !== subscription.currency.trim()) throw invalidField('/body/product_id', `has a one-time price in ${currency}; this subscription is billed in ${subscription.currency.trim()}`)
        const quantity = input.quantity
        const pending = (await pendingAddOns(trx, [subscription.id])).get(subscription.id) ?? []
        // A scheduled price change may be the price of the renewal that charges it: the larger counts.
        const next = Math.max(subscription.amount, subscription.scheduled_amount ?? 0) * subscription.quantity + pending.reduce((sum, row) => sum + row.unit_amount * row.quantity, 0) + product.one_time_amount * quantity
        if (next > MAX_RENEWAL_AMOUNT) {
          throw new AppError('amount_too_large', `/body/quantity would make the next renewal charge ${next} minor units, over ${MAX_RENEWAL_AMOUNT}`, {
            errors: [{ path: '/body/quantity', message: `would make the next renewal charge more than ${MAX_RENEWAL_AMOUNT} minor units` }],
          })
        }
        const now = storeNow(store, clock)
        const row = await insertOnetime(trx, { id: newId('ot'), store_id: store.id, subscription_id: subscription.id, product_id: product.id, quantity, unit_amount: product.one_time_amount, currency, status: 'pending', charge_id: null, created_at: now, updated_at: now })
        // The promise the add-on is made with: the renewal that will actually charge it.
        const view = presentOnetime(row, renewalAt(subscription, store, [...pending, row]))
        await events.recordOfNewEntities(trx, [{ storeId: store.id, eventType: 'onetime.created', occurredAt: now, data: view, actor }])
        return view
      })
    },

    async list(store: StoreRow, subscriptionId: string, actor: Actor, query: PageRequest & { status?: OnetimeRow['status'] | undefined }): Promise<Page<OnetimeView>> {
      const subscription = await findSubscription(db, store.id, subscriptionId)
      if (!subscription || (actor.kind === 'subscriber' && subscription.subscriber_id !== actor.subscriberId)) throw notFound('subscription', subscriptionId)
      const pending = (await pendingAddOns(db, [subscription.id])).get(subscription.id) ?? []
      const at = pending.length > 0 ? renewalAt(subscription, store, pending) : null
      return listPage(query, (bounds) => listOnetimes(db, store.id, subscription.id, { ...bounds, status: query.status }), (row) => presentOnetime(row, at))
    },

    /** Takes a pending add-on off the next order; never while a renewal charge is in progress (it may hold it). */
    async remove(store: StoreRow, subscriptionId: string, onetimeId: string, actor: Actor): Promise<OnetimeView> {
      return db.transaction().execute(async (trx) => {
        const subscription = await lockForActor(trx, store, subscriptionId, actor)
        const row = await lockOnetime(trx, subscription.id, onetimeId)
        if (!row) throw notFound('onetime', onetimeId)
        if (row.status !== 'pending') throw new AppError('invalid_state', `the add-on is ${row.status}; only a pending one can be removed`)
        if (subscription.pending_charge_id !== null) throw new AppError('invalid_state', 'a renewal charge is in progress and may hold this add-on; try again once it has settled')
        const now = storeNow(store, clock)
        const updated = await markRemoved(trx, row.id, now)
        const view = presentOnetime(updated)
        await events.record(trx, { storeId: store.id, eventType: 'onetime.removed', occurredAt: now, data: view, actor })
        return view
      })
    },
  }
}

export type OnetimeService = ReturnType<typeof createOnetimeService>
