import type { Db, DiscountRow, Executor, StoreRow, SubscriptionRow } from '../../db/database.ts'
import { isUniqueViolation } from '../../db/errors.ts'
import type { Clock } from '../../lib/clock.ts'
import { AppError, invalidField, notFound, type ErrorCode } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { listPage, type Page, type PageRequest } from '../../lib/pagination.ts'
import { isCurrency } from '../../lib/money.ts'
import { toRfc3339, toRfc3339OrNull } from '../../lib/time.ts'
import { findPlanRows } from '../catalog/index.ts'
import { storeNow } from '../stores/index.ts'
import { lockForActor, presentSubscription, withMark, type ActionMark, type Actor, type SubscriptionView, type SubscriptionWrites } from '../subscriptions/index.ts'
import type { AppliedDiscount } from '../subscriptions/index.ts'
import * as repo from './discounts.repository.ts'
import type { CreateDiscountInput, DiscountView, UpdateDiscountInput } from './discount.schemas.ts'

/**
 * Discount codes (docs/contract.md, Discounts and add-ons): the store's codes, and applying one to a
 * subscription (at checkout, by an admin, by the subscriber). An application checks the code on the
 * store's clock, counts one redemption under a guarded update (two applications racing for the last
 * redemption: one wins, the other is `discount_exhausted`), and copies the terms onto the
 * subscription, whose renewals the pure renewal plan discounts (src/modules/billing/renewal-plan.ts).
 */

export function presentDiscount(row: DiscountRow): DiscountView {
  return {
    id: row.id,
    object: 'discount',
    code: row.code,
    type: row.type,
    value: row.value,
    currency: row.currency === null ? null : row.currency.trim(),
    duration: row.duration,
    duration_in_cycles: row.duration_in_cycles,
    applies_to_plan_ids: row.applies_to_plan_ids ?? [],
    max_redemptions: row.max_redemptions,
    times_redeemed: row.times_redeemed,
    starts_at: toRfc3339OrNull(row.starts_at),
    ends_at: toRfc3339OrNull(row.ends_at),
    active: row.active,
    created_at: toRfc3339(row.created_at),
    updated_at: toRfc3339(row.updated_at),
  }
}

/** What an application asks of a code: where it is used (for the problem's pointer) and on what. */
export interface RedemptionTarget {
  planId: string
  currency: string
  /** The body field that named the code, e.g. `/body/code` or `/body/items/0/discount_code`. */
  path: string
}

/** The discount a subscription carries after an application: terms, and the charges it covers. */
export interface Redeemed {
  discount: AppliedDiscount
  cyclesRemaining: number | null
}

function refused(code: ErrorCode, path: string, message: string): AppError {
  return new AppError(code, `${path} ${message}`, { errors: [{ path, message }] })
}

/** Why a code cannot be used now on this target, as the problem to answer; undefined when it can. */
export function whyNotUsable(row: DiscountRow, target: RedemptionTarget, now: Date): AppError | undefined {
  if (!row.active) return refused('discount_expired', target.path, 'is a discount code that is no longer active')
  if (row.starts_at !== null && now < row.starts_at) return refused('discount_expired', target.path, `is a discount code usable from ${toRfc3339(row.starts_at)}`)
  if (row.ends_at !== null && now >= row.ends_at) return refused('discount_expired', target.path, `is a discount code that ended at ${toRfc3339(row.ends_at)}`)
  const plans = row.applies_to_plan_ids ?? []
  if (plans.length > 0 && !plans.includes(target.planId)) return refused('discount_not_applicable', target.path, 'is a discount code that does not apply to this plan')
  if (row.type === 'fixed_amount' && row.currency !== null && row.currency.trim() !== target.currency.trim()) {
    return refused('discount_not_applicable', target.path, `is a discount in ${row.currency.trim()}; this subscription is billed in ${target.currency.trim()}`)
  }
  if (row.max_redemptions !== null && row.times_redeemed >= row.max_redemptions) return refused('discount_exhausted', target.path, 'is a discount code that has been used up')
  return undefined
}

/**
 * Checks a code and counts one redemption, in the caller's transaction: the count only moves while
 * below the limit (the row lock of the update serialises racing applications, and the loser sees the
 * winner's count), so a limit is never passed. Throws the problem for a code that cannot be used.
 */
export async function redeemDiscount(trx: Executor, store: StoreRow, code: string, target: RedemptionTarget, now: Date): Promise<Redeemed> {
  const row = await repo.findDiscountByCode(trx, store.id, code)
  if (!row) throw refused('discount_not_found', target.path, 'is not a discount code of this store')
  const why = whyNotUsable(row, target, now)
  if (why) throw why
  const counted = await repo.countRedemption(trx, row.id)
  if (!counted) throw refused('discount_exhausted', target.path, 'is a discount code that has been used up')
  return {
    discount: { id: row.id, code: row.code, type: row.type, value: row.value, currency: row.currency === null ? null : row.currency.trim(), duration: row.duration },
    cyclesRemaining: row.duration === 'once' ? 1 : row.duration === 'repeating' ? row.duration_in_cycles : null,
  }
}

/** The subscription columns of a redeemed discount. */
export function discountColumns(redeemed: Redeemed) {
  return { discount_id: redeemed.discount.id, discount: JSON.stringify(redeemed.discount), discount_cycles_remaining: redeemed.cyclesRemaining }
}

const FINAL = new Set(['cancelled', 'expired'])

export function createDiscountService({ db, clock, writes }: { db: Db; clock: Clock; writes: SubscriptionWrites }) {
  async function requirePlans(store: StoreRow, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return
    const found = new Set((await findPlanRows(db, store.id, ids)).map((plan) => plan.id))
    const errors = ids.flatMap((id, index) => (found.has(id) ? [] : [{ path: `/body/applies_to_plan_ids/${index}`, message: 'is not a plan of this store' }]))
    if (errors.length) throw new AppError('validation_failed', errors.map((e) => `${e.path} ${e.message}`).join('; '), { errors })
  }

  function checkWindow(startsAt: Date | null, endsAt: Date | null): void {
    if (startsAt !== null && endsAt !== null && endsAt <= startsAt) throw invalidField('/body/ends_at', 'must be later than starts_at')
  }

  async function find(store: StoreRow, id: string): Promise<DiscountRow> {
    const row = await repo.findDiscount(db, store.id, id)
    if (!row) throw notFound('discount', id)
    return row
  }

  const codeTaken = (code: string) => new AppError('conflict', `the discount code ${code} is taken in this store (codes are compared whatever their case)`)

  /** Applies a code to one subscription in its own transaction, holding the subscription's lock. */
  async function applyToSubscription(store: StoreRow, id: string, actor: Actor, code: string, mark?: ActionMark): Promise<SubscriptionView> {
    return db.transaction().execute(async (trx) => {
      const subscription = await lockForActor(trx, store, id, actor)
      if (FINAL.has(subscription.status)) throw new AppError('invalid_state', `cannot apply a discount to a ${subscription.status} subscription`)
      const now = storeNow(store, clock)
      const existing = subscription.discount_id !== null ? await repo.findDiscountByCode(trx, store.id, code) : undefined
      // The code it already carries: nothing changes and nothing is counted again.
      if (existing && existing.id === subscription.discount_id) return presentSubscription(subscription, store.store_hash)
      const redeemed = await redeemDiscount(trx, store, code, { planId: subscription.plan_id, currency: subscription.currency, path: '/body/code' }, now)
      return writes.apply(trx, store, subscription, withMark({ set: discountColumns(redeemed), events: ['subscription.discount_applied'] }, mark), now, actor)
    })
  }

  return {
    async create(store: StoreRow, input: CreateDiscountInput): Promise<DiscountView> {
      const errors: { path: string; message: string }[] = []
      if (input.type === 'percentage') {
        if (input.value > 100) errors.push({ path: '/body/value', message: 'must be at most 100 for a percentage' })
        if (input.currency !== undefined) errors.push({ path: '/body/currency', message: 'is only for a fixed_amount discount' })
      } else if (input.currency === undefined) {
        errors.push({ path: '/body/currency', message: 'is required for a fixed_amount discount' })
      } else if (!isCurrency(input.currency)) {
        errors.push({ path: '/body/currency', message: 'is not an ISO 4217 currency' })
      }
      if (input.duration === 'repeating' && input.duration_in_cycles === undefined) errors.push({ path: '/body/duration_in_cycles', message: 'is required for a repeating discount' })
      if (input.duration !== 'repeating' && input.duration_in_cycles !== undefined) errors.push({ path: '/body/duration_in_cycles', message: 'is only for a repeating discount' })
      if (errors.length) throw new AppError('validation_failed', errors.map((e) => `${e.path} ${e.message}`).join('; '), { errors })
      const startsAt = input.starts_at ? new Date(input.starts_at) : null
      const endsAt = input.ends_at ? new Date(input.ends_at) : null
      checkWindow(startsAt, endsAt)
      const plans = input.applies_to_plan_ids ?? []
      await requirePlans(store, plans)
      const now = storeNow(store, clock)
      try {
        const row = await repo.insertDiscount(db, {
            id: newId('disc'),
            store_id: store.id,
            code: input.code,
            type: input.type,
            value: input.value,
            currency: input.type === 'fixed_amount' ? input.currency! : null,
            duration: input.duration,
            duration_in_cycles: input.duration === 'repeating' ? input.duration_in_cycles! : null,
            applies_to_plan_ids: JSON.stringify(plans),
            max_redemptions: input.max_redemptions ?? null,
            starts_at: startsAt,
            ends_at: endsAt,
            active: input.active ?? true,
            created_at: now,
            updated_at: now,
          })
        return presentDiscount(row)
      } catch (error) {
        if (isUniqueViolation(error)) throw codeTaken(input.code)
        throw error
      }
    },

    list(store: StoreRow, query: PageRequest & { active?: boolean | undefined; code?: string | undefined }): Promise<Page<DiscountView>> {
      return listPage(query, (bounds) => repo.listDiscounts(db, store.id, { ...bounds, active: query.active, code: query.code }), presentDiscount)
    },

    async get(store: StoreRow, id: string): Promise<DiscountView> {
      return presentDiscount(await find(store, id))
    },

    async update(store: StoreRow, id: string, input: UpdateDiscountInput): Promise<DiscountView> {
      const current = await find(store, id)
      const startsAt = input.starts_at === undefined ? current.starts_at : input.starts_at === null ? null : new Date(input.starts_at)
      const endsAt = input.ends_at === undefined ? current.ends_at : input.ends_at === null ? null : new Date(input.ends_at)
      checkWindow(startsAt, endsAt)
      if (input.applies_to_plan_ids) await requirePlans(store, input.applies_to_plan_ids)
      if (input.max_redemptions !== undefined && input.max_redemptions !== null && input.max_redemptions < current.times_redeemed) {
        throw invalidField('/body/max_redemptions', `must be at least the redemptions already made (${current.times_redeemed})`)
      }
      try {
        const row = await repo.updateDiscount(db, store.id, id, {
            ...(input.code !== undefined ? { code: input.code } : {}),
            ...(input.applies_to_plan_ids !== undefined ? { applies_to_plan_ids: JSON.stringify(input.applies_to_plan_ids) } : {}),
            ...(input.max_redemptions !== undefined ? { max_redemptions: input.max_redemptions } : {}),
            ...(input.starts_at !== undefined ? { starts_at: startsAt } : {}),
            ...(input.ends_at !== undefined ? { ends_at: endsAt } : {}),
            ...(input.active !== undefined ? { active: input.active } : {}),
            updated_at: storeNow(store, clock),
          })
        if (!row) throw notFound('discount', id)
        return presentDiscount(row)
      } catch (error) {
        // A redemption raced this lower limit past the count: the check refuses it, as the rule above would.
        if (error instanceof Error && /discounts_redemptions_check/.test(error.message)) throw invalidField('/body/max_redemptions', 'must be at least the redemptions already made')
        if (isUniqueViolation(error)) throw codeTaken(input.code ?? current.code)
        throw error
      }
    },

    /** Deletes the code: it can no longer be applied; subscriptions that carry it keep it (they hold its terms). */
    async remove(store: StoreRow, id: string): Promise<void> {
      if (!(await repo.deleteDiscount(db, store.id, id))) throw notFound('discount', id)
    },

    applyToSubscription,

    /** Takes the discount off a subscription; one without a discount answers unchanged. */
    async removeFromSubscription(store: StoreRow, id: string, actor: Actor): Promise<SubscriptionView> {
      return db.transaction().execute(async (trx) => {
        const subscription: SubscriptionRow = await lockForActor(trx, store, id, actor)
        if (subscription.discount_id === null) return presentSubscription(subscription, store.store_hash)
        if (FINAL.has(subscription.status)) throw new AppError('invalid_state', `cannot change the discount of a ${subscription.status} subscription`)
        const now = storeNow(store, clock)
        return writes.apply(trx, store, subscription, { set: { discount_id: null, discount: null, discount_cycles_remaining: null }, events: ['subscription.discount_removed'] }, now, actor)
      })
    },
  }
}

export type DiscountService = ReturnType<typeof createDiscountService>
