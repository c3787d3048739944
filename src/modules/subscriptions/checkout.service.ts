import { createHash } from 'node:crypto'
import type { Db, Executor, PlanRow, StoreRow } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { AppError, invalidField, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { recordEvent, type EventType } from '../events/index.ts'
import { storeNow } from '../stores/index.ts'
import { presentSubscription } from './subscription.presenter.ts'
import { activationTime, scheduleAtActivation } from './subscription-schedule.ts'
import type { CheckoutInput, SubscriptionView } from './subscription.schemas.ts'
import { findSubscriptionsByIds, insertSubscription, upsertSubscriber } from './subscriptions.repository.ts'

export interface CheckoutOutcome {
  data: SubscriptionView[]
  /** True when this order was ingested before and nothing new was created. */
  replayed: boolean
}

export type CheckoutService = ReturnType<typeof createCheckoutService>

// A start this close to now is "now": clocks of the platform and of this service differ a little.
const START_NOW_TOLERANCE_MS = 60_000

function checkoutHash(input: CheckoutInput): string {
  return createHash('sha256').update(JSON.stringify({ ...input, email: input.email.toLowerCase() })).digest('hex')
}

async function requirePlans(trx: Executor, store: StoreRow, input: CheckoutInput): Promise<PlanRow[]> {
  const ids = [...new Set(input.items.map((item) => item.plan_id))]
  const plans = await trx.selectFrom('plans').selectAll().where('store_id', '=', store.id).where('id', 'in', ids).execute()
  return input.items.map((item, index) => {
    const plan = plans.find((candidate) => candidate.id === item.plan_id)
    if (!plan) throw notFound('plan', item.plan_id)
    if (!plan.active) throw invalidField(`/body/items/${index}/plan_id`, 'is an archived plan and cannot be subscribed to')
    return plan
  })
}

/**
 * A completed checkout becomes one subscription per item. The platform order id makes it idempotent:
 * the row claiming the order is inserted first, so a concurrent duplicate waits on it and then
 * answers what the first one created.
 */
export function createCheckoutService({ db, clock }: { db: Db; clock: Clock }) {
  return {
    async checkout(store: StoreRow, input: CheckoutInput): Promise<CheckoutOutcome> {
      const now = storeNow(store, clock)
      const startAt = input.start_at ? new Date(input.start_at) : now
      if (startAt.getTime() < now.getTime() - START_NOW_TOLERANCE_MS) throw invalidField('/body/start_at', 'must not be in the past')
      const orderId = String(input.platform_order_id)
      const hash = checkoutHash(input)

      return db.transaction().execute(async (trx) => {
        const claimed = await trx
          .insertInto('checkouts')
          .values({ store_id: store.id, platform_order_id: orderId, request_hash: hash, subscription_ids: [] })
          .onConflict((oc) => oc.columns(['store_id', 'platform_order_id']).doNothing())
          .returning('platform_order_id')
          .executeTakeFirst()
        if (!claimed) return replay(trx, store, orderId, hash)

        const plans = await requirePlans(trx, store, input)
        const email = input.email.toLowerCase()
        const recipient = input.gift ? input.gift.recipient_email.toLowerCase() : email
        const subscriber = await upsertSubscriber(trx, {
          id: newId('cus'),
          store_id: store.id,
          email: recipient,
          // A gift's buyer is not its recipient: the recipient's name is not known yet.
          name: input.gift ? null : (input.name ?? null),
          shipping_address: input.shipping_address ? JSON.stringify(input.shipping_address) : null,
          created_at: now,
          updated_at: now,
        })
        const gift = input.gift ? { gifter_email: email, recipient_email: recipient, message: input.gift.message ?? null } : null

        const created: SubscriptionView[] = []
        for (const [index, item] of input.items.entries()) {
          const plan = plans[index]!
          const activeAt = activationTime(startAt, plan.trial_days, store.timezone)
          const startsNow = activeAt.getTime() <= now.getTime() + START_NOW_TOLERANCE_MS && plan.trial_days === 0
          const cadence = { interval: plan.interval, interval_count: plan.interval_count, prepaid_cycles: plan.prepaid_cycles }
          const schedule = startsNow ? scheduleAtActivation(now, cadence, false, store.timezone) : undefined
          const row = await insertSubscription(trx, {
            id: newId('sub'),
            store_id: store.id,
            subscriber_id: subscriber.id,
            plan_id: plan.id,
            product_id: plan.product_id,
            platform_order_id: orderId,
            status: startsNow ? 'active' : 'pending',
            quantity: item.quantity,
            amount: plan.amount,
            currency: plan.currency,
            interval: plan.interval,
            interval_count: plan.interval_count,
            payment_instrument_id: input.payment_instrument_id,
            shipping_address: input.shipping_address ? JSON.stringify(input.shipping_address) : null,
            start_at: startsNow ? now : activeAt,
            trial_days: plan.trial_days,
            ...(schedule ?? {}),
            gift: gift ? JSON.stringify(gift) : null,
            prepaid_cycles_total: plan.prepaid_cycles,
            prepaid_cycles_remaining: schedule ? schedule.prepaid_cycles_remaining : plan.prepaid_cycles,
            created_at: now,
            updated_at: now,
          })
          const view = presentSubscription(row, store.store_hash)
          const events: EventType[] = ['subscription.created']
          if (gift) events.push('subscription.gifted')
          if (startsNow) events.push('subscription.activated')
          if (startsNow && plan.prepaid_cycles !== null) events.push('prepaid.order_created')
          for (const eventType of events) await recordEvent(trx, { storeId: store.id, eventType, occurredAt: now, data: view })
          created.push(view)
        }
        await trx
          .updateTable('checkouts')
          .set({ subscription_ids: created.map((subscription) => subscription.id) })
          .where('store_id', '=', store.id)
          .where('platform_order_id', '=', orderId)
          .execute()
        return { data: created, replayed: false }
      })
    },
  }
}

async function replay(trx: Executor, store: StoreRow, orderId: string, hash: string): Promise<CheckoutOutcome> {
  const existing = await trx
    .selectFrom('checkouts')
    .selectAll()
    .where('store_id', '=', store.id)
    .where('platform_order_id', '=', orderId)
    .executeTakeFirstOrThrow()
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
