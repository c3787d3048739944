import type { Executor, StoreRow } from '../../db/database.ts'
import { addDays } from '../../lib/calendar.ts'
import { AppError, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { toRfc3339 } from '../../lib/time.ts'
import type { RetentionOfferValue } from '../stores/index.ts'
import type { ActionMark, Actor, SubscriptionService, SubscriptionView } from '../subscriptions/index.ts'
import type { RetentionOfferType } from '../stores/index.ts'
import { insertRetentionSave } from './retention.repository.ts'

/**
 * Retention offers (docs/contract.md, Cancellation reasons and retention): what the portal shows
 * before a cancellation is confirmed, and taking one. Taking an offer performs the normal action
 * (pause, skip, discount) and, in the same transaction, records a row in `retention_saves` (what
 * the analytics count as saves) and the event `subscription.retention_accepted` after the action's own.
 */

/**
 * Applies a discount code to a subscription as `POST .../subscriptions/{id}/discount` does (module
 * discounts), running `mark` in its transaction.
 */
export type ApplyDiscount = (store: StoreRow, subscriptionId: string, actor: Actor, code: string, mark: ActionMark) => Promise<SubscriptionView>

type SubscriptionState = Pick<SubscriptionView, 'status' | 'next_charge_at' | 'skip_next' | 'cancel_at_period_end'> & { discount?: { code: string } | null }

/** Why an offer does not apply to the subscription as it is now; null when it does. */
export function whyNotApplicable(offer: RetentionOfferValue, subscription: SubscriptionState, discountsAvailable: boolean): string | null {
  if (subscription.status === 'cancelled' || subscription.status === 'expired') return `the subscription is ${subscription.status}`
  if (subscription.cancel_at_period_end) return 'the subscription is already set to cancel at the end of the period'
  switch (offer.type) {
    case 'pause':
      return subscription.status === 'active' ? null : `only an active subscription can be paused; this one is ${subscription.status.replace('_', ' ')}`
    case 'skip':
      if (subscription.status !== 'active') return `only an active subscription's renewal can be skipped; this one is ${subscription.status.replace('_', ' ')}`
      if (subscription.next_charge_at === null) return 'there is no next renewal to skip'
      if (subscription.skip_next) return 'the next renewal is already skipped'
      return null
    case 'discount':
      if (!discountsAvailable) return 'discount codes cannot be applied on this service yet'
      if (subscription.discount?.code.toLowerCase() === offer.code.toLowerCase()) return 'the subscription already has this discount'
      return subscription.status === 'active' || subscription.status === 'paused' ? null : `a discount cannot be applied to a ${subscription.status.replace('_', ' ')} subscription`
  }
}

/** Records one save in the caller's transaction (the action's). */
export function recordRetentionSave(trx: Executor, save: { storeId: string; subscriptionId: string; offer: RetentionOfferValue; actor: Actor; at: Date }): Promise<void> {
  return insertRetentionSave(trx, {
    id: newId('rsv'),
    store_id: save.storeId,
    subscription_id: save.subscriptionId,
    offer_type: save.offer.type,
    offer: JSON.stringify(save.offer),
    actor: save.actor.kind === 'subscriber' ? 'subscriber' : 'admin',
    occurred_at: save.at,
    created_at: new Date(),
  })
}

export function createRetentionService({ subscriptions, applyDiscount }: { subscriptions: SubscriptionService; applyDiscount?: ApplyDiscount | undefined }) {
  const discountsAvailable = applyDiscount !== undefined

  return {
    /** The store's offers that apply to this subscription now, in the store's order. */
    async listOffers(store: StoreRow, id: string, actor: Actor): Promise<{ data: RetentionOfferValue[] }> {
      const subscription = await subscriptions.get(store, id, actor)
      return { data: store.retention_offers.filter((offer) => whyNotApplicable(offer, subscription, discountsAvailable) === null) }
    },

    /** Takes the store's offer of this type: performs it, marked as a retention save. */
    async accept(store: StoreRow, id: string, actor: Actor, type: RetentionOfferType): Promise<SubscriptionView> {
      const subscription = await subscriptions.get(store, id, actor)
      const offer = store.retention_offers.find((candidate) => candidate.type === type)
      if (!offer) throw notFound('retention offer', type)
      const why = whyNotApplicable(offer, subscription, discountsAvailable)
      if (why) throw new AppError('invalid_state', `this offer does not apply: ${why}`)
      const mark: ActionMark = {
        events: ['subscription.retention_accepted'],
        after: (trx, view, at) => recordRetentionSave(trx, { storeId: store.id, subscriptionId: view.id, offer, actor, at }),
      }
      switch (offer.type) {
        case 'pause': {
          const resumeAt = addDays(subscriptions.storeNow(store), offer.days, store.timezone)
          return subscriptions.pause(store, id, actor, { resume_at: toRfc3339(resumeAt) }, mark)
        }
        case 'skip':
          return subscriptions.skip(store, id, actor, mark)
        case 'discount':
          // The discounts module applies the code (its 4xx refusals stand: unknown, expired, exhausted,
          // not applicable) and runs the mark in its transaction.
          return applyDiscount!(store, id, actor, offer.code, mark)
      }
    },
  }
}

export type RetentionService = ReturnType<typeof createRetentionService>
