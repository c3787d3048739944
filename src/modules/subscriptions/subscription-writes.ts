import type { Db, Executor, StoreRow, SubscriptionRow } from '../../db/database.ts'
import type { Actor } from '../../http/actors.ts'
import type { Clock } from '../../lib/clock.ts'
import { storeNow } from '../stores/index.ts'
import type { EventLog, NewEvent } from '../events/index.ts'
import { PAYMENT_METHOD_REQUIRED, RENEWAL_FAILED } from './billing-issues.ts'
import { updateSubscriptionsInBatch, type SubscriptionChange } from './subscription-batch.repository.ts'
import { lockForActor, type Mutation, type MutationContext } from './subscription-mutation.ts'
import { rescheduledPrice } from './price-schedule.ts'
import { presentSubscription } from './subscription.presenter.ts'
import type { SubscriptionView } from './subscription.schemas.ts'
import { updateSubscription } from './subscriptions.repository.ts'

export type SubscriptionWrites = ReturnType<typeof createSubscriptionWrites>

/**
 * Every change to a subscription row, with the events it calls for, in the caller's transaction:
 * one row at a time (`apply`, for actions) or in batches (`applyChanges`, for the renewal engine).
 */
export function createSubscriptionWrites(events: EventLog) {
  return {
    /** Applies a change and records its events, as the actor's, in one transaction, holding the row lock throughout. */
    async apply(trx: Executor, store: StoreRow, subscription: SubscriptionRow, mutation: Mutation, now: Date, actor: Actor): Promise<SubscriptionView> {
      // A renewal set aside for its data is tried again after any change: the change may have fixed it.
      // An imported subscription waiting for a card renews once one is set.
      const clears =
        !('billing_issue' in mutation.set) &&
        (subscription.billing_issue?.code === RENEWAL_FAILED || (subscription.billing_issue?.code === PAYMENT_METHOD_REQUIRED && mutation.set.payment_instrument_id !== undefined))
      const cleared = clears ? { ...mutation.set, billing_issue: null } : mutation.set
      // A scheduled price follows the schedule: it moves to the first renewal of the new one at or after its date.
      const set = { ...cleared, ...rescheduledPrice(subscription, cleared, store.timezone) }
      const updated = await updateSubscription(trx, subscription.id, set, now)
      const view = presentSubscription(updated, store.store_hash)
      for (const eventType of mutation.events) {
        await events.record(trx, { storeId: store.id, eventType, occurredAt: mutation.at ?? now, data: view, actor })
      }
      if (mutation.after) await mutation.after(trx, view, mutation.at ?? now)
      return view
    },

    /**
     * Applies each change and records their events, as the actor's, in one more statement, after
     * `precedingEvents` (events about other entities that happened first, such as the charge events
     * of a settlement). The caller holds the rows' locks. Answers the rows afterwards, by id.
     */
    async applyChanges(trx: Executor, changes: readonly SubscriptionChange[], actor: Actor, precedingEvents: readonly NewEvent[] = []): Promise<Map<string, SubscriptionRow>> {
      const after = changes.length === 0 ? new Map<string, SubscriptionRow>() : await updateSubscriptionsInBatch(trx, changes)
      const recorded: NewEvent[] = [...precedingEvents]
      for (const change of changes) {
        if (!change.events?.length) continue
        const view = presentSubscription(after.get(change.id)!, change.storeHash)
        for (const eventType of change.events) recorded.push({ storeId: change.storeId, eventType, occurredAt: change.at, data: view, actor })
      }
      await events.recordMany(trx, recorded)
      return after
    },
  }
}

/** Changes one subscription in a transaction of its own: lock, decide, apply and record the events. */
export function createMutator(db: Db, clock: Clock, writes: SubscriptionWrites) {
  return async function mutate(
    store: StoreRow,
    id: string,
    actor: Actor,
    decide: (context: MutationContext) => Mutation | Promise<Mutation>,
  ): Promise<SubscriptionView> {
    return db.transaction().execute(async (trx) => {
      const subscription = await lockForActor(trx, store, id, actor)
      const now = storeNow(store, clock)
      const mutation = await decide({ trx, subscription, store, now })
      return writes.apply(trx, store, subscription, mutation, now, actor)
    })
  }
}
