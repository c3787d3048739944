import type { ChangeSet, Db, StoreRow, SubscriptionRow } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { AppError, invalidField, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { MAX_RENEWAL_AMOUNT } from '../../lib/money.ts'
import { listPage, type Page } from '../../lib/pagination.ts'
import type { EventLog, EventType } from '../events/index.ts'
import { storeNow } from '../stores/index.ts'
import { assertRenewalAmount } from './renewal-amount.ts'
import { assertChangeAllowed } from './subscription-state.ts'
import { lockForActor, type Actor, type Mutation } from './subscription-mutation.ts'
import type { SubscriptionWrites } from './subscription-writes.ts'
import { presentChangeRequest } from './subscription.presenter.ts'
import type { ChangeRequestView } from './subscription.schemas.ts'
import { cadenceChange, planTerms, requireSwapTarget } from './subscriptions.service.ts'
import { findChangeRequest, insertChangeRequest, listChangeRequests, lockChangeRequest, lockSubscription, recordDecision } from './subscriptions.repository.ts'
import { isBusinessPlan } from '../catalog/index.ts'

export type ChangeRequestService = ReturnType<typeof createChangeRequestService>

/**
 * Refuses a change whose result would make one renewal too large (`newAmount`: the price of the plan it
 * moves to, if it moves). The field blamed, under `prefix`, is the plan when its price alone is too much
 * at today's quantity or no quantity changes; otherwise the quantity.
 */
function assertChangedRenewalAmount(subscription: SubscriptionRow, changes: ChangeSet, newAmount: number | null, prefix: string): void {
  if (newAmount === null && changes.quantity === undefined) return
  const planTooMuch = newAmount !== null && (changes.quantity === undefined || newAmount * subscription.quantity > MAX_RENEWAL_AMOUNT)
  assertRenewalAmount(newAmount ?? Math.max(subscription.amount, subscription.scheduled_amount ?? 0), changes.quantity ?? subscription.quantity, `${prefix}/${planTooMuch ? 'plan_id' : 'quantity'}`)
}

/** Subscribers on business (b2b) plans propose quantity, plan or interval changes; the merchant decides. */
export function createChangeRequestService({ db, clock, events, writes }: { db: Db; clock: Clock; events: EventLog; writes: SubscriptionWrites }) {
  async function decide(store: StoreRow, id: string, actor: Actor, reason: string | undefined, approve: boolean): Promise<ChangeRequestView> {
    return db.transaction().execute(async (trx) => {
      const request = await lockChangeRequest(trx, store.id, id)
      if (!request) throw notFound('change request', id)
      if (request.status !== 'pending') throw new AppError('invalid_state', `change request ${id} is already ${request.status}`)
      const subscription = await lockSubscription(trx, store.id, request.subscription_id)
      if (!subscription) throw notFound('subscription', request.subscription_id)
      const now = storeNow(store, clock)
      let effectiveAt: Date | null = null
      if (approve) {
        assertChangeAllowed(subscription.status, 'request_change')
        const changes = request.changes
        const set: Mutation['set'] = {}
        const changeEvents: EventType[] = []
        let newAmount: number | null = null
        if (changes.plan_id && changes.plan_id !== subscription.plan_id) {
          const plan = await requireSwapTarget(trx, store, subscription, changes.plan_id, '/changes/plan_id').catch((error: unknown) => {
            // The plan was fine when proposed; archived or gone since, the request can only be rejected.
            if (error instanceof AppError) throw new AppError('invalid_state', 'the requested plan can no longer be subscribed to; reject this request')
            throw error
          })
          Object.assign(set, planTerms(subscription, plan))
          changeEvents.push('subscription.swapped')
          newAmount = plan.amount
        }
        // The subscription may have changed since the request was made (the merchant moved its quantity or plan).
        assertChangedRenewalAmount(subscription, changes, newAmount, '/changes')
        if (changes.interval) Object.assign(set, cadenceChange(subscription, changes.interval, changes.interval_count ?? 1))
        if (changes.quantity) set.quantity = changes.quantity
        if (changeEvents.length === 0) changeEvents.push('subscription.updated')
        // Applied now, the change shapes the next charge: the period already paid keeps its terms.
        effectiveAt = subscription.next_charge_at ?? now
        await writes.apply(trx, store, subscription, { set, events: changeEvents }, now, actor)
      }
      const decided = await recordDecision(trx, id, { status: approve ? 'approved' : 'rejected', decision_reason: reason ?? null, decided_at: now, effective_at: effectiveAt, updated_at: now })
      const view = presentChangeRequest(decided)
      await events.record(trx, { storeId: store.id, eventType: approve ? 'change_request.approved' : 'change_request.rejected', occurredAt: now, data: view, actor })
      return view
    })
  }

  return {
    async request(store: StoreRow, subscriptionId: string, actor: Actor, input: { changes: ChangeSet; note?: string | undefined }): Promise<ChangeRequestView> {
      return db.transaction().execute(async (trx) => {
        const subscription = await lockForActor(trx, store, subscriptionId, actor)
        assertChangeAllowed(subscription.status, 'request_change')
        if (!(await isBusinessPlan(trx, subscription.plan_id))) throw new AppError('invalid_state', 'change requests are for business plans; change this subscription directly')
        // Approval applies interval_count only together with an interval: alone it would be accepted and then do nothing.
        if (input.changes.interval_count !== undefined && input.changes.interval === undefined) {
          throw invalidField('/body/changes/interval', 'is required with interval_count')
        }
        const target = input.changes.plan_id ? await requireSwapTarget(trx, store, subscription, input.changes.plan_id, '/body/changes/plan_id') : undefined
        assertChangedRenewalAmount(subscription, input.changes, target && target.id !== subscription.plan_id ? target.amount : null, '/body/changes')
        const now = storeNow(store, clock)
        const row = await insertChangeRequest(trx, {
          id: newId('cr'),
          store_id: store.id,
          subscription_id: subscription.id,
          status: 'pending',
          changes: JSON.stringify(input.changes),
          note: input.note ?? null,
          created_at: now,
          updated_at: now,
        })
        const view = presentChangeRequest(row)
        await events.record(trx, { storeId: store.id, eventType: 'change_request.created', occurredAt: now, data: view, actor })
        return view
      })
    },

    approve: (store: StoreRow, id: string, actor: Actor, reason?: string) => decide(store, id, actor, reason, true),
    reject: (store: StoreRow, id: string, actor: Actor, reason?: string) => decide(store, id, actor, reason, false),

    /** A subscriber sees only requests on their own subscriptions; anyone else's is not found. */
    async get(store: StoreRow, id: string, actor: Actor): Promise<ChangeRequestView> {
      const row = await findChangeRequest(db, store.id, id, actor.kind === 'subscriber' ? actor.subscriberId : undefined)
      if (!row) throw notFound('change request', id)
      return presentChangeRequest(row)
    },

    async list(
      store: StoreRow,
      query: { limit: number; cursor?: string | undefined; status?: string | undefined; subscription_id?: string | undefined },
      actor: Actor,
    ): Promise<Page<ChangeRequestView>> {
      return listPage(query, (bounds) => listChangeRequests(db, store.id, {
        ...bounds,
        status: query.status,
        subscriptionId: query.subscription_id,
        subscriberId: actor.kind === 'subscriber' ? actor.subscriberId : undefined,
      }), presentChangeRequest)
    },
  }
}
