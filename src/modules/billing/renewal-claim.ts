import { sql } from 'kysely'
import type { ChargeRow, Executor, SubscriptionRow } from '../../db/database.ts'
import { RENEWALS } from '../../http/actors.ts'
import { newId } from '../../lib/ids.ts'
import { toRfc3339 } from '../../lib/time.ts'
import { findStoreById } from '../stores/index.ts'
import { grantPlatformCalls, renewalAllowance, returnPlatformCalls } from '../platform/index.ts'
import { anyRenewalDue, lockDueFairly, lockDueForRenewal, RENEWAL_FAILED, setBillingIssue, type SubscriptionChange } from '../subscriptions/index.ts'
import { chargeIdempotencyKey } from './gateways/index.ts'
import { describeFailure, isRowError, realNow, storeTime, type Attempt, type BillingContext } from './renewal-context.ts'
import { loadRenewalInputs } from './renewal-inputs.ts'
import { planRenewal } from './renewal-plan.ts'

/**
 * Step 1 of a renewal: one transaction claims due subscriptions (SKIP LOCKED), records each one's
 * `pending` charge under its idempotency key and lease, with `subscription.charged`, and marks the
 * subscription as waiting for that charge, so no other attempt can start until it settles.
 * Skips and gift expirations finish here, as they charge nothing.
 */

export interface ClaimCounts {
  claimed: number
  renewals: number
  retries: number
  expirations: number
  setAside: number
  /** The last store the fair claim took from: where the next one starts. */
  lastStoreId?: string | undefined
}

export const emptyClaimCounts = (): ClaimCounts => ({ claimed: 0, renewals: 0, retries: 0, expirations: 0, setAside: 0 })

/** The claim across stores (CONTRACT section 19): round-robin from `after`, each store within its platform budget. */
export interface FairClaim {
  after?: string | undefined
  /** Stores this claimer has enough of in hand already. */
  exceptStores?: readonly string[] | undefined
  /** Renewals one store may give one claim, whatever its budget. */
  perStoreCap: number
  /** Less for stores this claimer has some of in hand already: what they may still give. */
  roomOf?: ReadonlyMap<string, number> | undefined
}

/** Records the attempts of subscriptions locked by the caller's transaction. */
async function recordAttempts(trx: Executor, ctx: BillingContext, due: SubscriptionRow[], lease: { token: string; leaseMs: number }, counts: ClaimCounts): Promise<Attempt[]> {
  // Add-ons waiting for these renewals (a skip or an expiry leaves them for later; a charge carries them).
  const { stores, addOns } = await loadRenewalInputs(trx, due)
  const attempts: Attempt[] = []
  const lifecycle: SubscriptionChange[] = []
  for (const subscription of due) {
    const store = stores.get(subscription.store_id)!
    const dueAt = subscription.next_charge_at!
    const renewal = planRenewal(subscription, store, addOns.get(subscription.id) ?? [])
    if (renewal.kind !== 'charge') {
      lifecycle.push({ id: subscription.id, set: renewal.set, at: storeTime(ctx.clock, store, dueAt), storeId: store.id, storeHash: store.store_hash, events: renewal.events })
      if (renewal.kind === 'skip') counts.renewals++
      else counts.expirations++
      continue
    }
    // A dunning retry retries a payment; a try again after an item was out of stock is the renewal still.
    if (subscription.dunning_attempts > 0) counts.retries++
    else counts.renewals++
    const charge: ChargeRow = {
      id: newId('ch'),
      store_id: store.id,
      subscription_id: subscription.id,
      amount: renewal.amount,
      subtotal: renewal.subtotal,
      discount_amount: renewal.discountAmount,
      shipping_amount: renewal.shippingAmount,
      shipping_method: renewal.shippingMethod,
      tax_amount: renewal.taxAmount,
      discount_id: renewal.discountId,
      line_items: renewal.lineItems,
      currency: renewal.currency,
      status: 'pending',
      attempt: renewal.attempt,
      payment_instrument_id: subscription.payment_instrument_id,
      idempotency_key: chargeIdempotencyKey(subscription.id, renewal.period.start, renewal.attempt),
      failure_code: null,
      failure_message: null,
      next_retry_at: null,
      period_start: renewal.period.start,
      period_end: renewal.period.end,
      created_at: dueAt,
      settled_at: null,
      gateway: ctx.gateways.forStore(store).name,
      gateway_charge_id: null,
      platform_order_id: null,
      platform_cart_id: null,
      order_requested_at: null,
      // The lease is this worker's from now; it is renewed while the charge waits and while its gateway call runs.
      lease_until: new Date(ctx.leaseClock.now().getTime() + lease.leaseMs),
      lease_token: lease.token,
      submitted_at: null,
      unknown_since: null,
      review: null,
      amount_refunded: 0,
    }
    attempts.push({ charge, periodIndex: renewal.periodIndex })
  }
  await ctx.writes.applyChanges(trx, lifecycle, RENEWALS)
  if (attempts.length === 0) return attempts
  await trx.insertInto('charges').values(attempts.map(({ charge }) => ({ ...charge, line_items: JSON.stringify(charge.line_items) }))).execute()
  await ctx.writes.applyChanges(
    trx,
    attempts.map(({ charge }) => {
      const store = stores.get(charge.store_id)!
      return {
        id: charge.subscription_id,
        set: { pending_charge_id: charge.id, latest_charge_id: charge.id },
        at: storeTime(ctx.clock, store, charge.created_at),
        storeId: store.id,
        storeHash: store.store_hash,
        events: ['subscription.charged'],
      }
    }),
    RENEWALS,
  )
  return attempts
}

/**
 * Of the renewals just locked, those their stores' platform budgets allow, oldest first; the budgets
 * are spent in the same transaction (CONTRACT section 19). The others stay due, untouched: they are
 * claimed once their store's window refills.
 */
async function withinBudget(trx: Executor, ctx: BillingContext, due: SubscriptionRow[]): Promise<{ due: SubscriptionRow[]; reserved: Reserved }> {
  const none: Reserved = { perRenewal: 0, stores: new Set() }
  if (!ctx.budgeted || due.length === 0) return { due, reserved: none }
  const wanted = new Map<string, number>()
  for (const row of due) wanted.set(row.store_id, (wanted.get(row.store_id) ?? 0) + 1)
  const perRenewal = Math.max(1, Math.round(ctx.callsPerRenewal()))
  const { granted, budgeted } = await grantPlatformCalls(trx, wanted, perRenewal)
  const kept = new Set([...due].sort((a, b) => a.next_charge_at!.getTime() - b.next_charge_at!.getTime()).filter((row) => {
    const left = granted.get(row.store_id) ?? 0
    granted.set(row.store_id, left - 1)
    return left > 0
  }))
  return { due: due.filter((row) => kept.has(row)), reserved: { perRenewal, stores: budgeted } }
}

/** What a claim reserved: `perRenewal` calls for each renewal of the `stores` on a platform budget. */
interface Reserved {
  perRenewal: number
  stores: Set<string>
}

/**
 * The attempts take their reservation with them; renewals that charge nothing (a skip, an expiry)
 * give theirs back at once, in the claim's transaction.
 */
async function keepReservations(trx: Executor, ctx: BillingContext, due: SubscriptionRow[], attempts: Attempt[], reserved: Reserved): Promise<void> {
  if (reserved.stores.size === 0) return
  const charged = new Set(attempts.map(({ charge }) => charge.subscription_id))
  const unused = new Map<string, number>()
  for (const row of due) {
    if (!reserved.stores.has(row.store_id)) continue
    if (charged.has(row.id)) continue
    unused.set(row.store_id, (unused.get(row.store_id) ?? 0) + reserved.perRenewal)
  }
  for (const attempt of attempts) if (reserved.stores.has(attempt.charge.store_id)) attempt.reservedCalls = reserved.perRenewal
  for (const [storeId, calls] of [...unused].sort(([a], [b]) => a.localeCompare(b))) await returnPlatformCalls(trx, storeId, calls, 0)
}

/** Locks the claim's due subscriptions: the fair walk over stores, or the plain oldest-first of one store or one subscription. */
async function lockDue(trx: Executor, ctx: BillingContext, limit: number, options: { storeId?: string | undefined; id?: string | undefined; fair?: FairClaim | undefined }): Promise<SubscriptionRow[]> {
  const now = ctx.clock.now()
  const fair = options.fair
  if (!fair) return lockDueForRenewal(trx, now, limit, { storeId: options.storeId, ...(options.id ? { id: options.id } : {}) })
  // Idle, a claim is one probe of the due index, not a walk over every store.
  if (!(await anyRenewalDue(trx, now))) return []
  const budget = ctx.budgeted ? renewalAllowance('st.id', 'st.gateway', ctx.callsPerRenewal(), fair.perStoreCap) : sql<number>`${fair.perStoreCap}::int`
  const rooms = [...(fair.roomOf ?? new Map<string, number>())]
  const perStore = rooms.length === 0
    ? budget
    : sql<number>`LEAST(${budget}, COALESCE((SELECT r.room FROM unnest(${rooms.map(([id]) => id)}::text[], ${rooms.map(([, room]) => room)}::int[]) AS r(id, room) WHERE r.id = st.id), ${fair.perStoreCap}::int))`
  const first = await lockDueFairly(trx, now, limit, { perStore, after: fair.after, exceptStores: fair.exceptStores })
  if (first.length >= limit || fair.after === undefined) return first
  // Past the last store: round again from the first, up to where this round began.
  const wrapped = await lockDueFairly(trx, now, limit - first.length, { perStore, upTo: fair.after, exceptStores: fair.exceptStores })
  return [...first, ...wrapped]
}

/**
 * Claims up to `limit` due renewals. When one row's data breaks the batch, each is claimed again on
 * its own, and the rows that still fail are set aside with their reason: the rest are billed.
 */
export async function claimDue(ctx: BillingContext, options: { limit: number; storeId?: string | undefined; id?: string | undefined; token: string; fair?: FairClaim | undefined }, counts: ClaimCounts): Promise<Attempt[]> {
  const lease = { token: options.token, leaseMs: ctx.leaseMs }
  let due: SubscriptionRow[] = []
  try {
    const batch = emptyClaimCounts()
    const attempts = await ctx.db.transaction().execute(async (trx) => {
      const allowed = await withinBudget(trx, ctx, await lockDue(trx, ctx, options.limit, options))
      due = allowed.due
      batch.claimed = due.length
      if (due.length === 0) return []
      const recorded = await recordAttempts(trx, ctx, due, lease, batch)
      await keepReservations(trx, ctx, due, recorded, allowed.reserved)
      return recorded
    })
    addCounts(counts, batch)
    counts.lastStoreId = due.at(-1)?.store_id ?? counts.lastStoreId
    return attempts
  } catch (error) {
    if (!isRowError(error) || due.length === 0) throw error
  }
  const attempts: Attempt[] = []
  for (const row of due) {
    const one = emptyClaimCounts()
    try {
      attempts.push(...(await ctx.db.transaction().execute(async (trx) => {
        const allowed = await withinBudget(trx, ctx, await lockDueForRenewal(trx, ctx.clock.now(), 1, { id: row.id }))
        one.claimed = allowed.due.length
        if (allowed.due.length === 0) return []
        const recorded = await recordAttempts(trx, ctx, allowed.due, lease, one)
        await keepReservations(trx, ctx, allowed.due, recorded, allowed.reserved)
        return recorded
      })))
      addCounts(counts, one)
    } catch (error) {
      if (!isRowError(error)) throw error
      await setAsideRenewal(ctx, row, error)
      counts.claimed++
      counts.setAside++
    }
  }
  counts.lastStoreId = due.at(-1)?.store_id ?? counts.lastStoreId
  return attempts
}

function addCounts(into: ClaimCounts, from: ClaimCounts): void {
  into.claimed += from.claimed
  into.renewals += from.renewals
  into.retries += from.retries
  into.expirations += from.expirations
  into.setAside += from.setAside
}

/** The subscription is not claimed again until a change to it clears the issue; said once, here. */
async function setAsideRenewal(ctx: BillingContext, subscription: SubscriptionRow, error: unknown): Promise<void> {
  const message = `the renewal could not be recorded: ${describeFailure(error)}`
  // Shown to the merchant: on the store's clock (a test store's test clock).
  const store = await findStoreById(ctx.db, subscription.store_id)
  await setBillingIssue(ctx.db, [subscription.id], { code: RENEWAL_FAILED, message, since: toRfc3339(store?.test_clock_now ?? realNow()) })
  ctx.log?.error({ subscriptionId: subscription.id, storeId: subscription.store_id, reason: message }, 'renewal set aside: it failed on its own data')
}

