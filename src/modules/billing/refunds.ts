import { sql } from 'kysely'
import type { ChargeRow, RefundRow, StoreRow } from '../../db/database.ts'
import { isRowDataError } from '../../db/errors.ts'
import { claimLeased, heldBy, keepLeases, leaseFree, LEASES, newLeaseToken, releaseLeases } from '../../db/leases.ts'
import { AppError, invalidField, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { toRfc3339 } from '../../lib/time.ts'
import { RENEWALS, type Actor } from '../../http/actors.ts'
import { presentCharge } from './charge.presenter.ts'
import type { ChargeView } from './charge.schemas.ts'
import type { RefundOutcome } from './gateways/index.ts'
import { refundsOfCharges } from './refunds.repository.ts'
import { storeClockOf } from '../stores/index.ts'
import { markSubmitted, realNow, type BillingContext } from './renewal-context.ts'

/**
 * Refunds, exactly once each, like charges: a pending refund row with its own idempotency key and
 * lease is committed before the gateway is asked; the lease is renewed while the gateway answers and
 * the answer is recorded only while it holds. A gateway that deduplicates by key is simply asked
 * again after a lost answer; one that does not (the platform) gets `submitted_at` recorded before the
 * request that moves money, and a refund sent there whose answer was lost is never sent again: it
 * waits for a person (`review`), its amount still reserved. What is left to refund counts pending
 * refunds too, so two refunds at once can never exceed the charge.
 */

export interface RefundResult {
  charge: ChargeView
  /** True once the money went back; false while the gateway's answer is awaited. */
  completed: boolean
}

const RECHECK_MS = 5_000

export function createRefunds(ctx: BillingContext) {
  const { db, gateways } = ctx

  async function ask(refund: RefundRow, charge: ChargeRow, token: string): Promise<RefundOutcome> {
    const gateway = gateways.byName(charge.gateway)
    if (refund.submitted_at !== null && !gateway.honoursIdempotencyKeys) {
      return { status: 'unknown', reason: 'the refund was sent before and its answer was lost; the gateway takes no idempotency key, so it is not sent again' }
    }
    return gateway
      .refund({
        idempotencyKey: refund.idempotency_key,
        storeId: refund.store_id,
        chargeIdempotencyKey: charge.idempotency_key,
        gatewayChargeId: charge.gateway_charge_id,
        orderId: charge.platform_order_id ?? undefined,
        amount: refund.amount,
        currency: refund.currency.trim(),
        reason: refund.reason ?? undefined,
        onSubmit: gateway.honoursIdempotencyKeys ? undefined : () => markSubmitted(db, 'refunds', refund.id, token),
      })
      .catch((error: unknown): RefundOutcome => ({ status: 'unknown', reason: String(error) }))
  }

  /** Asks the gateway while keeping the refund's lease alive. */
  async function askHolding(refund: RefundRow, charge: ChargeRow, token: string): Promise<RefundOutcome> {
    const keeper = keepLeases(db, LEASES.refunds, token, ctx.leaseMs, { now: () => ctx.leaseClock.now(), log: ctx.log })
    keeper.add([refund.id])
    try {
      return await ask(refund, charge, token)
    } finally {
      await keeper.stop()
    }
  }

  /** Records the gateway's answer while the lease is `token`'s; answers the charge as it is then. */
  async function record(refund: RefundRow, charge: ChargeRow, outcome: RefundOutcome, token: string, actor: Actor): Promise<ChargeRow | undefined> {
    if (outcome.status === 'unknown') {
      const current = await db.selectFrom('refunds').select('submitted_at').where('id', '=', refund.id).executeTakeFirst()
      if (current?.submitted_at && !gateways.byName(charge.gateway).honoursIdempotencyKeys) {
        const review = { code: 'outcome_unknown', message: `the gateway's answer was lost after the refund was sent: ${outcome.reason}`, since: toRfc3339(realNow()) }
        const marked = await db
          .updateTable('refunds')
          .set({ review: JSON.stringify(review), lease_until: null, lease_token: null })
          .where('id', '=', refund.id)
          .where('status', '=', 'pending')
          .where(heldBy(LEASES.refunds, token))
          .executeTakeFirst()
        if (Number(marked.numUpdatedRows) === 1) ctx.log?.error({ refundId: refund.id, chargeId: charge.id, reason: outcome.reason }, 'refund set aside for review: it was sent and its answer was lost')
        return undefined
      }
      await releaseLeases(db, LEASES.refunds, [refund.id], token, new Date(ctx.leaseClock.now().getTime() + Math.min(RECHECK_MS, ctx.leaseMs)))
      ctx.log?.warn({ refundId: refund.id, reason: outcome.reason }, 'refund outcome unknown; it will be asked again under the same key')
      return undefined
    }
    if (outcome.status === 'failed' && refund.automatic) {
      // Money a subscriber is owed stays with the merchant until someone acts: said loudly.
      ctx.log?.error({ refundId: refund.id, chargeId: charge.id, reason: outcome.message }, 'an automatic refund was refused by the gateway')
    }
    return db.transaction().execute(async (trx) => {
      const settledAt = realNow()
      const done = await trx
        .updateTable('refunds')
        .set({
          status: outcome.status,
          gateway_refund_id: outcome.status === 'succeeded' ? outcome.gatewayRefundId : null,
          failure_message: outcome.status === 'failed' ? outcome.message : null,
          // On the store's clock, as its charges are: a test store's refunds land in its own windows.
          settled_at: storeClockOf('refunds.store_id', settledAt),
          lease_until: null,
          lease_token: null,
        })
        .where('id', '=', refund.id)
        .where('status', '=', 'pending')
        .where(heldBy(LEASES.refunds, token))
        .returning('settled_at')
        .executeTakeFirst()
      if (!done || outcome.status === 'failed') {
        return trx.selectFrom('charges').selectAll().where('id', '=', refund.charge_id).executeTakeFirst()
      }
      const updated = await trx
        .updateTable('charges')
        .set((eb) => ({ amount_refunded: eb('amount_refunded', '+', refund.amount) }))
        .where('id', '=', refund.charge_id)
        .returningAll()
        .executeTakeFirstOrThrow()
      // The charge with every refund, this one's reason included: the timeline shows it (CONTRACT 17).
      const refunds = (await refundsOfCharges(trx, [updated.id])).get(updated.id) ?? []
      await ctx.events.recordMany(trx, [{ storeId: updated.store_id, eventType: 'charge.refunded', occurredAt: done.settled_at ?? settledAt, data: presentCharge(updated, refunds), actor }])
      return updated
    })
  }

  return {
    /** A merchant's refund of all or part of what is left of a succeeded charge. */
    async refund(store: StoreRow, chargeId: string, input: { amount?: number | undefined; reason?: string | undefined }, actor: Actor): Promise<RefundResult> {
      const token = newLeaseToken()
      const { refund, charge, queued } = await db.transaction().execute(async (trx) => {
        const charge = await trx.selectFrom('charges').selectAll().where('id', '=', chargeId).where('store_id', '=', store.id).forUpdate().executeTakeFirst()
        if (!charge) throw notFound('charge', chargeId)
        if (charge.status !== 'succeeded') throw new AppError('invalid_state', `only a succeeded charge can be refunded; this one is ${charge.status}`)
        const open = await trx
          .selectFrom('refunds')
          .select([
            (eb) => eb.fn.countAll<number>().as('count'),
            (eb) => eb.fn.coalesce(eb.fn.sum<number>(sql`case when status = 'pending' then amount else 0 end`), sql<number>`0`).as('pending'),
            sql<number>`count(*) filter (where status = 'pending')`.as('pending_count'),
          ])
          .where('charge_id', '=', charge.id)
          .executeTakeFirstOrThrow()
        const left = charge.amount - charge.amount_refunded - Number(open.pending)
        if (left <= 0) throw new AppError('invalid_state', charge.amount_refunded >= charge.amount ? 'the charge is already refunded in full' : 'the rest of the charge is being refunded already')
        const amount = input.amount ?? left
        if (amount > left) throw invalidField('/body/amount', `is more than is left to refund (${left})`)
        // One refund of a charge at the gateway at a time: the platform refuses concurrent refunds of
        // one order (docs/platform-api.md §5). The charge row is locked, so this count is exact.
        const queued = Number(open.pending_count) > 0
        const refund = await trx
          .insertInto('refunds')
          .values({
            id: newId('re'),
            store_id: store.id,
            charge_id: charge.id,
            amount,
            currency: charge.currency,
            reason: input.reason ?? null,
            // Who asked: a refund carried out later (behind another, or asked again) still names them.
            requested_by: JSON.stringify(actor),
            status: 'pending',
            idempotency_key: `${charge.idempotency_key}:refund:${Number(open.count) + 1}`,
            // Behind another refund of this charge it waits its turn, free for the refund pass.
            lease_until: queued ? null : new Date(ctx.leaseClock.now().getTime() + ctx.leaseMs),
            lease_token: queued ? null : token,
            created_at: store.test_clock_now ?? realNow(),
          })
          .returningAll()
          .executeTakeFirstOrThrow()
        return { refund, charge, queued }
      })
      if (queued) return { charge: presentCharge(charge), completed: false }
      const outcome = await askHolding(refund, charge, token)
      if (outcome.status === 'failed') {
        await record(refund, charge, outcome, token, actor)
        throw new AppError('refund_failed', `the gateway refused the refund: ${outcome.message}`)
      }
      const after = (await record(refund, charge, outcome, token, actor)) ?? charge
      return { charge: presentCharge(after), completed: outcome.status === 'succeeded' }
    },

    /** Carries out pending refunds nobody holds (automatic ones, and those whose answer was lost), one at a time. */
    async processPending({ limit = 100 }: { limit?: number } = {}): Promise<number> {
      let done = 0
      for (; done < limit; done++) {
        const now = ctx.leaseClock.now()
        // One per claim: each refund's lease covers its own gateway calls only.
        const claim = await claimLeased<RefundRow>(db, LEASES.refunds, {
          // Only the oldest pending refund of its charge: the ones after it wait until it settles, so
          // two refunds of one charge are never at the gateway together (one in review holds the rest).
          candidates: sql`SELECT id FROM refunds WHERE status = 'pending' AND review IS NULL AND ${leaseFree(LEASES.refunds, now)}
                            AND id = (SELECT o.id FROM refunds o WHERE o.charge_id = refunds.charge_id AND o.status = 'pending' ORDER BY o.created_at, o.id LIMIT 1)
                          ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
          leaseMs: ctx.leaseMs,
          now,
        })
        const refund = claim.rows[0]
        if (!refund) break
        const charge = await db.selectFrom('charges').selectAll().where('id', '=', refund.charge_id).executeTakeFirstOrThrow()
        const outcome = await askHolding(refund, charge, claim.token)
        try {
          // A merchant's refund names the merchant; an automatic one (money that paid no period) the renewal engine.
          await record(refund, charge, outcome, claim.token, refund.requested_by ?? RENEWALS)
        } catch (error) {
          if (!isRowDataError(error)) throw error
          // Left leased: it is asked again (under its key) when the lease ends; the refunds after it go on.
          ctx.log?.error({ refundId: refund.id, outcome: outcome.status, err: error }, 'a refund outcome could not be recorded')
        }
      }
      return done
    },
  }
}

export type Refunds = ReturnType<typeof createRefunds>
