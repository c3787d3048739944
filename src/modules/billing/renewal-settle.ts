import { storableText } from '../../lib/printable-text.ts'
import { sql } from 'kysely'
import type { BillingIssueCode, ChargeRow, ChargeStatus, Executor } from '../../db/database.ts'
import { heldBy, LEASES } from '../../db/leases.ts'
import { newId } from '../../lib/ids.ts'
import { toRfc3339 } from '../../lib/time.ts'
import type { Actor } from '../../http/actors.ts'
import type { NewEvent } from '../events/index.ts'
import { markAddOnsCharged } from '../onetimes/index.ts'
import { findStoresByIds } from '../stores/index.ts'
import { CHARGE_REQUIRES_REVIEW, lockSubscriptionsByIds, setBillingIssue, type SubscriptionChange } from '../subscriptions/index.ts'
import { presentCharge } from './charge.presenter.ts'
import { describeFailure, isRowError, realNow, storeTime, type Attempt, type BillingContext } from './renewal-context.ts'
import { periodIndexStartingAt, settleCharge, type DefiniteOutcome } from './renewal-plan.ts'

/**
 * Step 3 of a renewal: one transaction settles charges and moves their subscriptions on, only while
 * the charge is in the state the caller expects: pending under the caller's lease (a worker that lost
 * its lease settles nothing), or under review (an admin resolving it). A success that pays no period
 * (the subscription was cancelled meanwhile) is refunded: the refund is recorded here, in the same
 * transaction, and carried out by the refund processor.
 */

export interface Settled {
  attempt: Attempt
  outcome: DefiniteOutcome
}

/** Whose charge it is: the lease holder's while pending, or nobody's while under review. */
export type Expected = { status: 'pending'; token: string } | { status: 'requires_review' }

export interface SettleResult {
  /** Charges settled by this call. */
  settled: ChargeRow[]
  /** Refunds recorded because money moved for a subscription that no longer bills. */
  refunds: number
}

async function settleBatch(trx: Executor, ctx: BillingContext, results: readonly Settled[], expected: Expected, actor: Actor): Promise<SettleResult> {
  let locking = trx.selectFrom('charges').selectAll().where('id', 'in', results.map((result) => result.attempt.charge.id)).where('status', '=', expected.status as ChargeStatus)
  if (expected.status === 'pending') locking = locking.where(heldBy(LEASES.charges, expected.token))
  const current = await locking.orderBy('id').forUpdate().execute()
  if (current.length === 0) return { settled: [], refunds: 0 }
  const chargeById = new Map(current.map((charge) => [charge.id, charge]))
  const subscriptions = await lockSubscriptionsByIds(trx, current.map((charge) => charge.subscription_id))
  const subscriptionById = new Map(subscriptions.map((row) => [row.id, row]))
  const stores = await findStoresByIds(trx, current.map((charge) => charge.store_id))

  const settled: ChargeRow[] = []
  const moves: SubscriptionChange[] = []
  const paidAddOns: { chargeId: string; onetimeIds: string[]; at: Date }[] = []
  const refunds: { id: string; store_id: string; charge_id: string; amount: number; currency: string; reason: string; automatic: boolean; status: 'pending'; idempotency_key: string; created_at: Date }[] = []
  for (const { attempt, outcome } of results) {
    const charge = chargeById.get(attempt.charge.id)
    if (!charge) continue
    const store = stores.get(charge.store_id)!
    const subscription = subscriptionById.get(charge.subscription_id)!
    const at = storeTime(ctx.clock, store, charge.created_at)
    const periodIndex = attempt.periodIndex >= 0 ? attempt.periodIndex : periodIndexStartingAt(subscription, charge.period_start, store.timezone)
    const plan = settleCharge(subscription, store, charge, outcome, periodIndex, at)
    settled.push({ ...charge, ...plan.charge, settled_at: at, lease_until: null, lease_token: null, unknown_since: null, review: null })
    if (Object.keys(plan.subscription.set).length > 0) {
      moves.push({ id: subscription.id, set: plan.subscription.set, at, storeId: store.id, storeHash: store.store_hash, events: plan.subscription.events })
    }
    // The add-ons the charge carried are paid with the period it paid; a failure leaves them for the retry.
    if (plan.charge.status === 'succeeded' && !plan.refund) {
      paidAddOns.push({ chargeId: charge.id, onetimeIds: (charge.line_items ?? []).flatMap((line) => (line.onetime_id ? [line.onetime_id] : [])), at })
    }
    if (plan.refund) {
      ctx.log?.warn({ chargeId: charge.id, subscriptionId: subscription.id, status: subscription.status }, 'a renewal charge succeeded after its subscription left billing; refunding it')
      refunds.push({
        id: newId('re'),
        store_id: store.id,
        charge_id: charge.id,
        amount: charge.amount,
        currency: charge.currency,
        reason: `the subscription was ${subscription.status} when the payment succeeded`,
        automatic: true,
        status: 'pending',
        idempotency_key: `${charge.idempotency_key}:refund:auto`,
        created_at: realNow(),
      })
    }
  }
  await sql`
    UPDATE charges AS c
       SET status = v.status, gateway_charge_id = v.gateway_charge_id, failure_code = v.failure_code, failure_message = v.failure_message,
           next_retry_at = v.next_retry_at::timestamptz, settled_at = v.settled_at::timestamptz,
           lease_until = NULL, lease_token = NULL, unknown_since = NULL, review = NULL
      FROM (VALUES ${sql.join(settled.map((charge) => sql`(${charge.id}, ${charge.status}, ${charge.gateway_charge_id}, ${charge.failure_code}, ${charge.failure_message}, ${charge.next_retry_at?.toISOString() ?? null}, ${charge.settled_at!.toISOString()})`))})
        AS v(id, status, gateway_charge_id, failure_code, failure_message, next_retry_at, settled_at)
     WHERE c.id = v.id`.execute(trx)
  // A charge ended because billing was switched off sent nothing under its key: the key is set free, so
  // the same attempt, claimed again once billing is on, sends under it (a keyed gateway that did see an
  // earlier send answers with that payment instead of taking a second one).
  const unsent = settled.filter((charge) => charge.failure_code === 'billing_disabled').map((charge) => charge.id)
  if (unsent.length > 0) await trx.updateTable('charges').set({ idempotency_key: sql<string>`idempotency_key || ':billing-off:' || id` }).where('id', 'in', unsent).execute()
  // Charge events first: `charge.succeeded` comes before the `subscription.activated` it causes.
  const events: NewEvent[] = settled.map((charge) => ({
    storeId: charge.store_id,
    eventType: charge.status === 'succeeded' ? 'charge.succeeded' : 'charge.failed',
    occurredAt: charge.settled_at!,
    data: presentCharge(charge),
    actor,
  }))
  await ctx.writes.applyChanges(trx, moves, actor, events)
  await markAddOnsCharged(trx, paidAddOns)
  if (refunds.length > 0) await trx.insertInto('refunds').values(refunds).onConflict((oc) => oc.column('idempotency_key').doNothing()).execute()
  return { settled, refunds: refunds.length }
}

/**
 * Settles in one transaction; when one row's data breaks it, settles each on its own, and a charge
 * that still cannot be settled waits for a person (`requires_review`) while the others go on. The
 * events name `actor`: the renewal engine, or the admin who resolved a charge under review.
 */
export async function settleAll(ctx: BillingContext, results: readonly Settled[], expected: Expected, actor: Actor): Promise<SettleResult> {
  if (results.length === 0) return { settled: [], refunds: 0 }
  try {
    return await ctx.db.transaction().execute((trx) => settleBatch(trx, ctx, results, expected, actor))
  } catch (error) {
    if (!isRowError(error) || results.length === 1) {
      if (isRowError(error) && results.length === 1) {
        const { attempt, outcome } = results[0]!
        const gatewayChargeId = outcome.status === 'succeeded' ? outcome.gatewayChargeId : null
        await requireReview(ctx, attempt.charge, expected, 'settlement_failed', `the gateway answered ${outcome.status}${gatewayChargeId ? ` (${gatewayChargeId})` : ''} but it could not be recorded: ${describeFailure(error)}`, gatewayChargeId)
        return { settled: [], refunds: 0 }
      }
      throw error
    }
  }
  const total: SettleResult = { settled: [], refunds: 0 }
  for (const result of results) {
    try {
      const one = await settleAll(ctx, [result], expected, actor)
      total.settled.push(...one.settled)
      total.refunds += one.refunds
    } catch (error) {
      if (!isRowError(error)) throw error
      // Not even set aside: its lease runs out and the reconciler tries it again; the others go on.
      ctx.log?.error({ chargeId: result.attempt.charge.id, reason: describeFailure(error) }, 'charge could not be settled nor set aside')
    }
  }
  return total
}

/**
 * A charge a person must look at: its outcome stayed unknown past the grace period, or it could not
 * be recorded. Its subscription keeps waiting for it (no new attempt starts) and shows why; both are
 * written together. What the gateway said, if anything, is kept for the resolve.
 */
export async function requireReview(
  ctx: BillingContext,
  charge: ChargeRow,
  expected: Expected,
  code: BillingIssueCode,
  message: string,
  gatewayChargeId: string | null = null,
): Promise<boolean> {
  // Shown to the merchant: on the store's clock (a test store's test clock), as the charge it is about.
  const store = (await findStoresByIds(ctx.db, [charge.store_id])).get(charge.store_id)
  const since = toRfc3339(store?.test_clock_now ?? realNow())
  message = storableText(message)
  const mark = (flagSubscription: boolean) => ctx.db.transaction().execute(async (trx) => {
    let update = trx
      .updateTable('charges')
      .set({ status: 'requires_review', review: JSON.stringify({ code, message, since }), lease_until: null, lease_token: null, ...(gatewayChargeId ? { gateway_charge_id: gatewayChargeId } : {}) })
      .where('id', '=', charge.id)
      .where('status', '=', expected.status as ChargeStatus)
    if (expected.status === 'pending') update = update.where(heldBy(LEASES.charges, expected.token))
    const done = await update.executeTakeFirst()
    if (Number(done.numUpdatedRows) !== 1) return false
    if (flagSubscription) {
      await setBillingIssue(trx, [charge.subscription_id], { code: CHARGE_REQUIRES_REVIEW, message: `charge ${charge.id} requires review: ${message}`, since }, { whilePendingCharge: charge.id })
    }
    return true
  })
  // A subscription row the database refuses to touch must not keep the charge from being set aside.
  const marked = await mark(true).catch((error: unknown) => (isRowError(error) ? mark(false) : Promise.reject(error)))
  if (marked) ctx.log?.error({ chargeId: charge.id, subscriptionId: charge.subscription_id, code, reason: message }, 'charge set aside for review')
  return marked
}
