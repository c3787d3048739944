import { setTimeout as sleep } from 'node:timers/promises'
import { ulid } from 'ulid'
import type { Db, TestGatewayChargesTable } from '../../../db/database.ts'
import { systemClock, type Clock } from '../../../lib/clock.ts'
import type { ChargeOutcome, ChargeRequest, FailureCode, PaymentGateway } from './gateway.ts'

/** The outcome an instrument id asks for (CONTRACT section 7): pure, so the table is tested on its own. */
export type ScriptedOutcome = { status: 'succeeded'; timesOutFirst: boolean } | { status: 'failed'; failureCode: FailureCode }

export function scriptedOutcome(paymentInstrumentId: string): ScriptedOutcome {
  if (paymentInstrumentId.endsWith('_declined')) return { status: 'failed', failureCode: 'card_declined' }
  if (paymentInstrumentId.endsWith('_insufficient_funds')) return { status: 'failed', failureCode: 'insufficient_funds' }
  // The charge goes through, but the caller never hears so: the case exactly-once has to survive.
  if (paymentInstrumentId.endsWith('_timeout')) return { status: 'succeeded', timesOutFirst: true }
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
}

type LedgerRow = Pick<TestGatewayChargesTable, 'status' | 'failure_code' | 'gateway_charge_id'>

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

  return {
    name: 'test',

    async charge(request: ChargeRequest): Promise<ChargeOutcome> {
      if (!Number.isInteger(request.amount) || request.amount < 0) throw new RangeError(`amount must be a non-negative integer of minor units, got ${request.amount}`)
      if (latencyMs > 0) await sleep(latencyMs)
      const scripted = scriptedOutcome(request.paymentInstrumentId)
      // One statement both charges and replays: the primary key lets only the first call with a key
      // insert (concurrent ones wait for it, then take the update branch), and RETURNING hands back
      // the first outcome either way. `calls` = 1 tells the first call from a replay.
      const row = await db
        .insertInto('test_gateway_charges')
        .values({
          idempotency_key: request.idempotencyKey,
          store_id: request.storeId,
          subscription_id: request.subscriptionId,
          amount: request.amount,
          currency: request.currency,
          payment_instrument_id: request.paymentInstrumentId,
          status: scripted.status,
          failure_code: scripted.status === 'failed' ? scripted.failureCode : null,
          gateway_charge_id: scripted.status === 'succeeded' ? `tgw_${ulid()}` : null,
          created_at: clock.now(),
        })
        .onConflict((oc) => oc.column('idempotency_key').doUpdateSet((eb) => ({ calls: eb('test_gateway_charges.calls', '+', 1) })))
        .returningAll()
        .executeTakeFirstOrThrow()
      // Reusing a key for a different charge is an engine bug; real gateways refuse it, and so do we, loudly.
      if (row.amount !== request.amount || row.currency.trim() !== request.currency || row.payment_instrument_id !== request.paymentInstrumentId || row.subscription_id !== request.subscriptionId || row.store_id !== request.storeId) {
        throw new Error(`test gateway: idempotency key ${request.idempotencyKey} was first used for a different charge`)
      }
      if (row.calls === 1 && scripted.status === 'succeeded' && scripted.timesOutFirst) {
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
