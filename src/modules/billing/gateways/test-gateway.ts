import { setTimeout as sleep } from 'node:timers/promises'
import type { Insertable, Selectable } from 'kysely'
import { monotonicFactory } from 'ulid'
import type { Db, TestGatewayChargesTable, TestGatewayRefundsTable } from '../../../db/database.ts'
import { systemClock, type Clock } from '../../../lib/clock.ts'
import type { ChargeOutcome, ChargeRequest, FailureCode, PaymentGateway, RefundOutcome, RefundRequest } from './gateway.ts'

/** The outcome an instrument id asks for (docs/contract.md, Billing): pure, so the table is tested on its own. */
export type ScriptedOutcome =
  | { status: 'succeeded'; timesOutFirst: boolean }
  | { status: 'failed'; failureCode: FailureCode }
  /** Declined the first time the subscription is charged with it, paid from then on: a card that works again (funds arrived). */
  | { status: 'failed_once'; failureCode: FailureCode }
  /** The gateway never learns what became of the charge: no money moves, yet nobody can say so. */
  | { status: 'unknown' }

export function scriptedOutcome(paymentInstrumentId: string): ScriptedOutcome {
  if (paymentInstrumentId.endsWith('_declined')) return { status: 'failed', failureCode: 'card_declined' }
  if (paymentInstrumentId.endsWith('_declined_once')) return { status: 'failed_once', failureCode: 'card_declined' }
  if (paymentInstrumentId.endsWith('_insufficient_funds')) return { status: 'failed', failureCode: 'insufficient_funds' }
  // The charge goes through, but the caller never hears so: the case exactly-once has to survive.
  if (paymentInstrumentId.endsWith('_timeout')) return { status: 'succeeded', timesOutFirst: true }
  // Every call is unknown and nothing is recorded: the case that must end in review, never in a second charge.
  if (paymentInstrumentId.endsWith('_unknown')) return { status: 'unknown' }
  return { status: 'succeeded', timesOutFirst: false }
}

const FAILURE_MESSAGES: Partial<Record<FailureCode, string>> = {
  card_declined: 'The card was declined.',
  insufficient_funds: 'The card has insufficient funds.',
}

export interface TestGatewayOptions {
  clock?: Clock
  /** Simulated processing time per charge call, for benchmarks of calls in flight. */
  latencyMs?: number
}

export interface ChargeCountFilter {
  idempotencyKey?: string
  subscriptionId?: string
  storeId?: string
}

export interface TestGateway extends PaymentGateway {
  readonly name: 'test'
  /** How many charges moved money (succeeded rows) matching the filter: what a double charge would show. */
  countCharges(filter: ChargeCountFilter): Promise<number>
  /** How many charge calls arrived with this key, replays included (0 when never called). */
  callsFor(idempotencyKey: string): Promise<number>
  /** The minor units refunded (succeeded refunds) of the charge made under this charge key; 0 when none. */
  refundedFor(chargeKey: string): Promise<number>
}

type LedgerRow = Pick<TestGatewayChargesTable, 'status' | 'failure_code' | 'gateway_charge_id'>
type LedgerEntry = Selectable<TestGatewayChargesTable>
interface Waiting {
  values: Insertable<TestGatewayChargesTable>
  resolve(row: LedgerEntry): void
  reject(error: unknown): void
}

const MAX_ROWS_PER_STATEMENT = 500
const nextUlid = monotonicFactory()

// A replay of a refused refund answers the first reason, kept in the ledger.
function refundOutcomeOf(row: Pick<Selectable<TestGatewayRefundsTable>, 'status' | 'gateway_refund_id' | 'failure_message'>): RefundOutcome {
  if (row.status === 'succeeded') return { status: 'succeeded', gatewayRefundId: row.gateway_refund_id ?? '' }
  return { status: 'failed', message: row.failure_message ?? 'The test gateway refused the refund.' }
}

function outcomeOf(row: LedgerRow): ChargeOutcome {
  if (row.status === 'succeeded') return { status: 'succeeded', gatewayChargeId: row.gateway_charge_id ?? '' }
  const failureCode = (row.failure_code ?? 'processing_error') as FailureCode
  return { status: 'failed', failureCode, failureMessage: FAILURE_MESSAGES[failureCode] ?? 'The charge failed.' }
}

/**
 * The `test` gateway: its ledger lives in the service's database so it survives restarts and every
 * worker sees one ledger, which is what lets the crash tests prove no key was ever charged twice.
 */
export function createTestGateway(db: Db, options: TestGatewayOptions = {}): TestGateway {
  const clock = options.clock ?? systemClock
  const latencyMs = options.latencyMs ?? 0

  // Calls arriving in the same tick are written together, as a real processor's ledger would
  // batch them; one statement per call would make the test gateway the bottleneck of every bench.
  let waiting: Waiting[] = []
  let scheduled = false
  const schedule = () => {
    if (scheduled) return
    scheduled = true
    setImmediate(() => void flush())
  }

  /**
   * One statement both charges and replays: the primary key lets only the first call with a key
   * insert (concurrent ones wait for it, then take the update branch), and RETURNING hands back the
   * first outcome either way. `calls` = 1 tells the first call from a replay.
   */
  function record(values: Insertable<TestGatewayChargesTable>): Promise<LedgerEntry> {
    return new Promise((resolve, reject) => {
      waiting.push({ values, resolve, reject })
      schedule()
    })
  }

  async function flush(): Promise<void> {
    scheduled = false
    const taken = waiting
    waiting = []
    // One statement may touch a row once: a second call with the same key goes in the next one.
    const keys = new Set<string>()
    const now: Waiting[] = []
    for (const entry of taken) {
      if (keys.has(entry.values.idempotency_key)) waiting.push(entry)
      else {
        keys.add(entry.values.idempotency_key)
        now.push(entry)
      }
    }
    if (waiting.length > 0) schedule()
    for (let start = 0; start < now.length; start += MAX_ROWS_PER_STATEMENT) {
      const chunk = now.slice(start, start + MAX_ROWS_PER_STATEMENT)
      try {
        const rows = await db
          .insertInto('test_gateway_charges')
          .values(chunk.map((entry) => entry.values))
          .onConflict((oc) => oc.column('idempotency_key').doUpdateSet((eb) => ({ calls: eb('test_gateway_charges.calls', '+', 1) })))
          .returningAll()
          .execute()
        const byKey = new Map(rows.map((row) => [row.idempotency_key, row]))
        for (const entry of chunk) {
          const row = byKey.get(entry.values.idempotency_key)
          if (row) entry.resolve(row)
          else entry.reject(new Error(`test gateway: no ledger row came back for ${entry.values.idempotency_key}`))
        }
      } catch (error) {
        for (const entry of chunk) entry.reject(error)
      }
    }
  }

  async function declinedBefore(request: ChargeRequest): Promise<boolean> {
    const row = await db
      .selectFrom('test_gateway_charges')
      .select('idempotency_key')
      .where('subscription_id', '=', request.subscriptionId)
      .where('payment_instrument_id', '=', request.paymentInstrumentId)
      .where('status', '=', 'failed')
      .where('idempotency_key', '!=', request.idempotencyKey)
      .limit(1)
      .executeTakeFirst()
    return row !== undefined
  }

  return {
    name: 'test',
    honoursIdempotencyKeys: true,

    async charge(request: ChargeRequest): Promise<ChargeOutcome> {
      if (!Number.isInteger(request.amount) || request.amount < 0) throw new RangeError(`amount must be a non-negative integer of minor units, got ${request.amount}`)
      if (latencyMs > 0) await sleep(latencyMs)
      const scripted = scriptedOutcome(request.paymentInstrumentId)
      // No ledger row: no money moved, and `lookup` finds nothing, yet the caller is never told so.
      if (scripted.status === 'unknown') return { status: 'unknown', reason: 'The test gateway never learned the outcome (instrument ending in _unknown).' }
      // Declined once: paid when the ledger already declined this subscription with this instrument under another key.
      const outcome = scripted.status === 'failed_once' ? ((await declinedBefore(request)) ? ({ status: 'succeeded', timesOutFirst: false } as const) : ({ status: 'failed', failureCode: scripted.failureCode } as const)) : scripted
      const row = await record({
        idempotency_key: request.idempotencyKey,
        store_id: request.storeId,
        subscription_id: request.subscriptionId,
        amount: request.amount,
        currency: request.currency,
        payment_instrument_id: request.paymentInstrumentId,
        status: outcome.status,
        failure_code: outcome.status === 'failed' ? outcome.failureCode : null,
        gateway_charge_id: outcome.status === 'succeeded' ? `tgw_${nextUlid()}` : null,
        created_at: clock.now(),
      })
      // Reusing a key for a different charge is an engine bug; real gateways refuse it, and so do we, loudly.
      if (row.amount !== request.amount || row.currency.trim() !== request.currency || row.payment_instrument_id !== request.paymentInstrumentId || row.subscription_id !== request.subscriptionId || row.store_id !== request.storeId) {
        throw new Error(`test gateway: idempotency key ${request.idempotencyKey} was first used for a different charge`)
      }
      if (row.calls === 1 && outcome.status === 'succeeded' && outcome.timesOutFirst) {
        return { status: 'unknown', reason: 'The test gateway timed out (instrument ending in _timeout); the charge was made.' }
      }
      return outcomeOf(row)
    },

    async lookup(request: ChargeRequest): Promise<ChargeOutcome | undefined> {
      const row = await db
        .selectFrom('test_gateway_charges')
        .select(['status', 'failure_code', 'gateway_charge_id'])
        .where('idempotency_key', '=', request.idempotencyKey)
        .executeTakeFirst()
      return row ? outcomeOf(row) : undefined
    },

    /**
     * One transaction per refund, holding the charge's ledger row locked (FOR UPDATE), so refunds of
     * one charge are decided one at a time and their sum never passes the amount charged. The refund
     * key's row is written with the same upsert as charges: a replay (or a concurrent twin, when no
     * charge row exists to lock) gets the first row back with `calls` counted up.
     */
    async refund(request: RefundRequest): Promise<RefundOutcome> {
      if (!Number.isInteger(request.amount) || request.amount <= 0) throw new RangeError(`refund amount must be a positive integer of minor units, got ${request.amount}`)
      if (latencyMs > 0) await sleep(latencyMs)
      const { row } = await db.transaction().execute(async (trx) => {
        const charge = await trx
          .selectFrom('test_gateway_charges')
          .select(['status', 'amount', 'currency', 'store_id'])
          .where('idempotency_key', '=', request.chargeIdempotencyKey)
          .forUpdate()
          .executeTakeFirst()
        let refusal: string | undefined
        if (!charge || charge.status !== 'succeeded' || charge.store_id !== request.storeId) {
          refusal = `The test gateway has no succeeded charge under key ${request.chargeIdempotencyKey} to refund.`
        } else if (charge.currency.trim() !== request.currency) {
          refusal = `The charge was made in ${charge.currency.trim()}, not ${request.currency}.`
        } else {
          const { total } = await trx
            .selectFrom('test_gateway_refunds')
            .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('amount'), eb.lit(0)).as('total'))
            .where('charge_key', '=', request.chargeIdempotencyKey)
            .where('status', '=', 'succeeded')
            .executeTakeFirstOrThrow()
          const refunded = Number(total)
          if (refunded + request.amount > charge.amount) {
            refusal = `Refunding ${request.amount} would exceed the charge: ${refunded} of ${charge.amount} is refunded already.`
          }
        }
        const row = await trx
          .insertInto('test_gateway_refunds')
          .values({
            idempotency_key: request.idempotencyKey,
            charge_key: request.chargeIdempotencyKey,
            amount: request.amount,
            status: refusal ? 'failed' : 'succeeded',
            gateway_refund_id: refusal ? null : `tre_${nextUlid()}`,
            failure_message: refusal ?? null,
            created_at: clock.now(),
          })
          .onConflict((oc) => oc.column('idempotency_key').doUpdateSet((eb) => ({ calls: eb('test_gateway_refunds.calls', '+', 1) })))
          .returningAll()
          .executeTakeFirstOrThrow()
        return { row }
      })
      // Reusing a refund key for another refund is an engine bug: refused loudly, like a reused charge key.
      if (row.charge_key !== request.chargeIdempotencyKey || Number(row.amount) !== request.amount) {
        throw new Error(`test gateway: refund idempotency key ${request.idempotencyKey} was first used for a different refund`)
      }
      return refundOutcomeOf(row)
    },

    async refundedFor(chargeKey: string): Promise<number> {
      const { total } = await db
        .selectFrom('test_gateway_refunds')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('amount'), eb.lit(0)).as('total'))
        .where('charge_key', '=', chargeKey)
        .where('status', '=', 'succeeded')
        .executeTakeFirstOrThrow()
      return Number(total)
    },

    async countCharges(filter: ChargeCountFilter): Promise<number> {
      let query = db.selectFrom('test_gateway_charges').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'succeeded')
      if (filter.idempotencyKey !== undefined) query = query.where('idempotency_key', '=', filter.idempotencyKey)
      if (filter.subscriptionId !== undefined) query = query.where('subscription_id', '=', filter.subscriptionId)
      if (filter.storeId !== undefined) query = query.where('store_id', '=', filter.storeId)
      const { n } = await query.executeTakeFirstOrThrow()
      return Number(n)
    },

    async callsFor(idempotencyKey: string): Promise<number> {
      const row = await db.selectFrom('test_gateway_charges').select('calls').where('idempotency_key', '=', idempotencyKey).executeTakeFirst()
      return row?.calls ?? 0
    },
  }
}
