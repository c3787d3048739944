import type { Db, Executor, StoreRow } from '../../db/database.ts'
import { isRowDataError } from '../../db/errors.ts'
import type { Actor } from '../../http/actors.ts'
import { enqueue } from '../../jobs/job-kinds.ts'
import type { Clock } from '../../lib/clock.ts'
import { AppError, invalidField, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { MAX_RENEWAL_AMOUNT } from '../../lib/money.ts'
import { toRfc3339, toRfc3339OrNull } from '../../lib/time.ts'
import { lockPlanRow, setPlanAmount } from '../catalog/index.ts'
import { eventActor } from '../events/index.ts'
import { findStoreById, storeNow } from '../stores/index.ts'
import {
  assertRenewalAmount,
  lockForActor,
  lockPlanSubscriptionsPage,
  lockSubscriptionsByIds,
  presentSubscription,
  planSubscriptionFigures,
  planSubscriptionIdsPage,
  type SubscriptionChange,
  type SubscriptionView,
  type SubscriptionWrites,
} from '../subscriptions/index.ts'
import type { PriceChangeInput, PriceChangeView } from './price-change.schemas.ts'
import { priceChangeFor } from './price-change-plan.ts'
import { SchedulePriceChange } from './price-changes.jobs.ts'
import { findPriceChange, findPriceChangeById, findSchedulingOfPlan, insertPriceChange, lockPriceChange, updatePriceChange, type PriceChangeRow } from './price-changes.repository.ts'

/** Subscriptions per transaction: their events and notice emails are written with them. */
export const PRICE_CHANGE_PAGE_SIZE = 1_000
/** Pages one run of the job does before handing the worker back (it comes again at once). */
const PAGES_PER_RUN = 10

export function presentPriceChange(row: PriceChangeRow): PriceChangeView {
  return {
    id: row.id,
    object: 'price_change',
    plan_id: row.plan_id,
    amount: row.amount,
    previous_amount: row.previous_amount,
    currency: row.currency.trim(),
    applies_to: row.applies_to,
    notice_days: row.notice_days,
    status: row.status,
    subscriptions: { total: row.total, scheduled: row.scheduled, unchanged: row.unchanged, failed: row.failed },
    actor: eventActor(row.actor as unknown as Actor),
    created_at: toRfc3339(row.created_at),
    completed_at: toRfc3339OrNull(row.completed_at),
  }
}

/** The notice asked for, or the store's; less than the store's is 400 naming the field. */
function requireNotice(store: Pick<StoreRow, 'price_change_notice_days'>, asked: number | undefined): number {
  const least = store.price_change_notice_days
  const noticeDays = asked ?? least
  if (noticeDays < least) throw invalidField('/body/notice_days', `must be at least the store's price_change_notice_days (${least})`)
  return noticeDays
}

export interface PriceChangeServiceDeps {
  db: Db
  clock: Clock
  writes: SubscriptionWrites
  /** Told once a plan's price changed, so cached storefront answers do not outlive it. */
  onPlanChanged: () => void
  log?: { error(object: object, message: string): void } | undefined
  pageSize?: number
}

export type PriceChangeService = ReturnType<typeof createPriceChangeService>

/**
 * Price changes with notice (docs/contract.md, Price changes with notice). The request changes the
 * plan's price (what new subscriptions pay) and, for `existing_too`, queues a job that gives each
 * subscription on the plan the new price from its first renewal after the notice, a page of
 * subscriptions per transaction with their events (`subscription.price_change_scheduled`, whose
 * reaction queues the notice email). The renewal engine charges it (billing's `unitAmountAt`).
 */
export function createPriceChangeService({ db, clock, writes, onPlanChanged, log, pageSize = PRICE_CHANGE_PAGE_SIZE }: PriceChangeServiceDeps) {
  type Counts = { scheduled: number; unchanged: number; failed: number }

  /** Decides and writes one batch of locked rows; answers what happened to them. */
  async function scheduleRows(trx: Executor, change: PriceChangeRow, store: StoreRow, rows: Awaited<ReturnType<typeof lockPlanSubscriptionsPage>>): Promise<Counts> {
    const now = storeNow(store, clock)
    const counts: Counts = { scheduled: 0, unchanged: 0, failed: 0 }
    const changes: SubscriptionChange[] = []
    for (const row of rows) {
      const decided = priceChangeFor(row, { amount: change.amount, noticeDays: change.notice_days }, now, store.timezone)
      if (decided.kind === 'unchanged') counts.unchanged++
      else if (decided.kind === 'failed') {
        counts.failed++
        log?.error({ priceChangeId: change.id, subscriptionId: row.id, reason: decided.reason }, 'price change: a subscription could not take the new price; the others go on')
      } else {
        counts.scheduled++
        changes.push({ id: row.id, set: decided.set, at: now, storeId: store.id, storeHash: store.store_hash, events: decided.events })
      }
    }
    await writes.applyChanges(trx, changes, change.actor as unknown as Actor)
    return counts
  }

  function progress(change: PriceChangeRow, counts: Counts, lastId: string | null, done: boolean, at: Date) {
    return {
      scheduled: change.scheduled + counts.scheduled,
      unchanged: change.unchanged + counts.unchanged,
      failed: change.failed + counts.failed,
      after_subscription_id: lastId ?? change.after_subscription_id,
      updated_at: at,
      ...(done ? { status: 'completed' as const, completed_at: at } : {}),
    }
  }

  /** The next page in one transaction: its rows, their events and emails, and the change's progress. */
  async function pageAtOnce(id: string): Promise<'done' | 'more'> {
    return db.transaction().execute(async (trx) => {
      const change = await lockPriceChange(trx, id)
      if (!change || change.status !== 'scheduling') return 'done'
      const store = await findStoreById(trx, change.store_id)
      if (!store) return 'done'
      const rows = await lockPlanSubscriptionsPage(trx, store.id, change.plan_id, { afterId: change.after_subscription_id, limit: pageSize })
      const counts = await scheduleRows(trx, change, store, rows)
      const done = rows.length < pageSize
      await updatePriceChange(trx, id, progress(change, counts, rows.at(-1)?.id ?? null, done, storeNow(store, clock)))
      return done ? 'done' : 'more'
    })
  }

  /**
   * A page the database refused as a whole (one row's data broke the statement): each subscription in
   * a transaction of its own, so one bad row never stops the others; a row still refused is counted
   * failed and logged. Then the change moves past the page.
   */
  async function pageRowByRow(id: string): Promise<'done' | 'more'> {
    const start = await findPriceChangeById(db, id)
    if (!start || start.status !== 'scheduling') return 'done'
    const store = await findStoreById(db, start.store_id)
    if (!store) return 'done'
    const ids = await planSubscriptionIdsPage(db, store.id, start.plan_id, { afterId: start.after_subscription_id, limit: pageSize })
    const counts: Counts = { scheduled: 0, unchanged: 0, failed: 0 }
    for (const subscriptionId of ids) {
      try {
        const one = await db.transaction().execute(async (trx) => {
          const rows = (await lockSubscriptionsByIds(trx, [subscriptionId])).filter((row) => row.plan_id === start.plan_id && row.status !== 'cancelled' && row.status !== 'expired')
          return scheduleRows(trx, start, store, rows)
        })
        counts.scheduled += one.scheduled
        counts.unchanged += one.unchanged
        counts.failed += one.failed
      } catch (error) {
        if (!isRowDataError(error)) throw error
        counts.failed++
        log?.error({ priceChangeId: id, subscriptionId, reason: error instanceof Error ? error.message.slice(0, 400) : String(error) }, 'price change: a subscription could not take the new price; the others go on')
      }
    }
    return db.transaction().execute(async (trx) => {
      const change = await lockPriceChange(trx, id)
      // Another run moved it on meanwhile: its counts stand.
      if (!change || change.status !== 'scheduling' || change.after_subscription_id !== start.after_subscription_id) return change?.status === 'scheduling' ? 'more' : 'done'
      const done = ids.length < pageSize
      await updatePriceChange(trx, id, progress(change, counts, ids.at(-1) ?? null, done, storeNow(store, clock)))
      return done ? 'done' : 'more'
    })
  }

  async function runPage(id: string): Promise<'done' | 'more'> {
    try {
      return await pageAtOnce(id)
    } catch (error) {
      if (!isRowDataError(error)) throw error
      return pageRowByRow(id)
    }
  }

  return {
    /**
     * Changes the plan's price now and, with `existing_too`, queues the scheduling of its subscriptions.
     * Answers the change: `completed` at once for `new_subscriptions` (or a plan with no subscription to
     * move), `scheduling` while the job goes through them.
     */
    async create(store: StoreRow, planId: string, actor: Actor, input: PriceChangeInput): Promise<PriceChangeView> {
      const noticeDays = requireNotice(store, input.notice_days)
      const row = await db.transaction().execute(async (trx) => {
        // The plan's lock orders changes of one plan: a second waits, then finds the first still scheduling.
        const plan = await lockPlanRow(trx, store.id, planId)
        if (!plan) throw notFound('plan', planId)
        if (!plan.active) throw new AppError('invalid_state', `plan ${planId} is archived: restore it (PATCH {"active": true}) before changing its price`)
        const existingToo = input.applies_to === 'existing_too'
        let total = 0
        if (existingToo) {
          const running = await findSchedulingOfPlan(trx, plan.id)
          if (running) throw new AppError('conflict', `price change ${running.id} of this plan is still being scheduled on its subscriptions; ask again once it has completed`)
          const figures = await planSubscriptionFigures(trx, store.id, plan.id)
          // The renewal amount guard of every write: the new price at the largest quantity on the plan.
          const largest = input.amount * Math.max(1, figures.maxQuantity)
          if (largest > MAX_RENEWAL_AMOUNT) {
            const message = `makes one renewal ${largest} minor units (${input.amount} x ${figures.maxQuantity}, the largest quantity on the plan); the limit is ${MAX_RENEWAL_AMOUNT}`
            throw new AppError('amount_too_large', `/body/amount ${message}`, { errors: [{ path: '/body/amount', message }] })
          }
          total = figures.count
        }
        const now = storeNow(store, clock)
        await setPlanAmount(trx, store.id, plan.id, input.amount, now)
        const scheduling = existingToo && total > 0
        const inserted = await insertPriceChange(trx, {
          id: newId('pc'),
          store_id: store.id,
          plan_id: plan.id,
          amount: input.amount,
          previous_amount: plan.amount,
          currency: plan.currency,
          applies_to: input.applies_to,
          notice_days: noticeDays,
          status: scheduling ? 'scheduling' : 'completed',
          total,
          scheduled: 0,
          unchanged: 0,
          failed: 0,
          after_subscription_id: null,
          actor: JSON.stringify(actor),
          created_at: now,
          updated_at: now,
          completed_at: scheduling ? null : now,
        })
        if (scheduling) await enqueue(trx, SchedulePriceChange, { price_change_id: inserted.id }, { dedupeKey: `price_change:${inserted.id}`, storeId: store.id })
        return inserted
      })
      onPlanChanged()
      return presentPriceChange(row)
    },

    /**
     * One subscription's price changed with notice, whatever its plan's (the bulk operation
     * `change_price` runs it per row): the same rules as a plan's change for that one subscription,
     * its event and notice email in one transaction. Answers the subscription; one already at (or
     * moving to) the price is answered as it is.
     */
    async changeSubscriptionPrice(store: StoreRow, id: string, actor: Actor, input: { amount: number; notice_days?: number | undefined }): Promise<SubscriptionView> {
      const noticeDays = requireNotice(store, input.notice_days)
      return db.transaction().execute(async (trx) => {
        const subscription = await lockForActor(trx, store, id, actor)
        if (subscription.status === 'cancelled' || subscription.status === 'expired') throw new AppError('invalid_state', `the subscription is ${subscription.status}: nothing more is charged`)
        assertRenewalAmount(input.amount, subscription.quantity, '/body/amount')
        const now = storeNow(store, clock)
        const decided = priceChangeFor(subscription, { amount: input.amount, noticeDays }, now, store.timezone)
        if (decided.kind === 'unchanged') return presentSubscription(subscription, store.store_hash)
        if (decided.kind === 'failed') throw new AppError('invalid_state', `the price cannot be scheduled: ${decided.reason}`)
        return writes.apply(trx, store, subscription, { set: decided.set, events: decided.events }, now, actor)
      })
    },

    async get(store: StoreRow, id: string): Promise<PriceChangeView> {
      const row = await findPriceChange(db, store.id, id)
      if (!row) throw notFound('price change', id)
      return presentPriceChange(row)
    },

    /** Up to `pages` pages of the change (the job's run); answers whether pages remain. */
    async runPages(id: string, pages = PAGES_PER_RUN): Promise<'done' | 'more'> {
      for (let page = 0; page < pages; page++) {
        if ((await runPage(id)) === 'done') return 'done'
      }
      return 'more'
    },
  }
}
