import { sql } from 'kysely'
import type { ChargeRow, RefundRow, StoreRow } from '../../db/database.ts'
import { claimLeased, heldBy, leaseFree, LEASES, newLeaseToken, releaseLeases } from '../../db/leases.ts'
import { AppError, invalidField, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { recordEvents } from '../events/index.ts'
import { presentCharge } from './charge.presenter.ts'
import type { ChargeView } from './charge.schemas.ts'
import type { RefundOutcome } from './gateways/index.ts'
import { realNow, type BillingContext } from './renewal-context.ts'

/**
 * Refunds, exactly once each, like charges: a pending refund row with its own idempotency key and
 * lease is committed before the gateway is asked; the answer is recorded only while the lease holds;
 * an unknown answer leaves it pending, and the refund pass asks again under the same key. What is
 * left to refund counts pending refunds too, so two refunds at once can never exceed the charge.
 */

export interface RefundResult {
  charge: ChargeView
  /** True once the money went back; false while the gateway's answer is unknown (it is retried). */
  completed: boolean
}

const RECHECK_MS = 5_000

export function createRefunds(ctx: BillingContext) {
  const { db, gateways } = ctx

  async function ask(refund: RefundRow, charge: ChargeRow): Promise<RefundOutcome> {
    const gateway = gateways.byName(charge.gateway)
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
      })
      .catch((error: unknown): RefundOutcome => ({ status: 'unknown', reason: String(error) }))
  }

  /** Records the gateway's answer while the lease is `token`'s; answers the charge as it is then. */
  async function record(refund: RefundRow, outcome: RefundOutcome, token: string): Promise<ChargeRow | undefined> {
    if (outcome.status === 'unknown') {
      await releaseLeases(db, LEASES.refunds, [refund.id], token, new Date(realNow().getTime() + Math.min(RECHECK_MS, ctx.leaseMs)))
      ctx.log?.warn({ refundId: refund.id, reason: outcome.reason }, 'refund outcome unknown; it will be asked again under the same key')
      return undefined
    }
    return db.transaction().execute(async (trx) => {
      const settledAt = realNow()
      const done = await trx
        .updateTable('refunds')
        .set({
          status: outcome.status,
          gateway_refund_id: outcome.status === 'succeeded' ? outcome.gatewayRefundId : null,
          failure_message: outcome.status === 'failed' ? outcome.message : null,
          settled_at: settledAt,
          lease_until: null,
          lease_token: null,
        })
        .where('id', '=', refund.id)
        .where('status', '=', 'pending')
        .where(heldBy(LEASES.refunds, token))
        .executeTakeFirst()
      if (Number(done.numUpdatedRows) !== 1 || outcome.status === 'failed') {
        return trx.selectFrom('charges').selectAll().where('id', '=', refund.charge_id).executeTakeFirst()
      }
      const charge = await trx
        .updateTable('charges')
        .set((eb) => ({ amount_refunded: eb('amount_refunded', '+', refund.amount) }))
        .where('id', '=', refund.charge_id)
        .returningAll()
        .executeTakeFirstOrThrow()
      await recordEvents(trx, [{ storeId: charge.store_id, eventType: 'charge.refunded', occurredAt: settledAt, data: presentCharge(charge) }])
      return charge
    })
  }

  return {
    /** A merchant's refund of all or part of what is left of a succeeded charge. */
    async refund(store: StoreRow, chargeId: string, input: { amount?: number | undefined; reason?: string | undefined }): Promise<RefundResult> {
      const token = newLeaseToken()
      const { refund, charge } = await db.transaction().execute(async (trx) => {
        const charge = await trx.selectFrom('charges').selectAll().where('id', '=', chargeId).where('store_id', '=', store.id).forUpdate().executeTakeFirst()
        if (!charge) throw notFound('charge', chargeId)
        if (charge.status !== 'succeeded') throw new AppError('invalid_state', `only a succeeded charge can be refunded; this one is ${charge.status}`)
        const open = await trx
          .selectFrom('refunds')
          .select([(eb) => eb.fn.countAll<number>().as('count'), (eb) => eb.fn.coalesce(eb.fn.sum<number>(sql`case when status = 'pending' then amount else 0 end`), sql<number>`0`).as('pending')])
          .where('charge_id', '=', charge.id)
          .executeTakeFirstOrThrow()
        const left = charge.amount - charge.amount_refunded - Number(open.pending)
        if (left <= 0) throw new AppError('invalid_state', charge.amount_refunded >= charge.amount ? 'the charge is already refunded in full' : 'the rest of the charge is being refunded already')
        const amount = input.amount ?? left
        if (amount > left) throw invalidField('/body/amount', `is more than is left to refund (${left})`)
        const refund = await trx
          .insertInto('refunds')
          .values({
            id: newId('re'),
            store_id: store.id,
            charge_id: charge.id,
            amount,
            currency: charge.currency,
            reason: input.reason ?? null,
            status: 'pending',
            idempotency_key: `${charge.idempotency_key}:refund:${Number(open.count) + 1}`,
            lease_until: new Date(realNow().getTime() + ctx.leaseMs),
            lease_token: token,
            created_at: realNow(),
          })
          .returningAll()
          .executeTakeFirstOrThrow()
        return { refund, charge }
      })
      const outcome = await ask(refund, charge)
      if (outcome.status === 'failed') {
        await record(refund, outcome, token)
        throw new AppError('refund_failed', `the gateway refused the refund: ${outcome.message}`)
      }
      const after = (await record(refund, outcome, token)) ?? charge
      return { charge: presentCharge(after), completed: outcome.status === 'succeeded' }
    },

    /** Carries out pending refunds nobody holds (automatic ones, and those whose answer was lost). */
    async processPending({ limit = 100 }: { limit?: number } = {}): Promise<number> {
      const now = realNow()
      const claim = await claimLeased<RefundRow>(db, LEASES.refunds, {
        candidates: sql`SELECT id FROM refunds WHERE status = 'pending' AND ${leaseFree(LEASES.refunds, now)} ORDER BY created_at LIMIT ${limit} FOR UPDATE SKIP LOCKED`,
        leaseMs: ctx.leaseMs,
        now,
      })
      for (const refund of claim.rows) {
        const charge = await db.selectFrom('charges').selectAll().where('id', '=', refund.charge_id).executeTakeFirstOrThrow()
        await record(refund, await ask(refund, charge), claim.token)
      }
      return claim.rows.length
    },
  }
}

export type Refunds = ReturnType<typeof createRefunds>
