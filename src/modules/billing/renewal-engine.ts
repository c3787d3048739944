import { storableText } from '../../lib/printable-text.ts'
import { sql } from 'kysely'
import pLimit from 'p-limit'
import type { ChargeRow, Db, StoreRow } from '../../db/database.ts'
import { claimLeased, keepLeases, leaseFree, LEASES, newLeaseToken } from '../../db/leases.ts'
import { RENEWALS, type Actor } from '../../http/actors.ts'
import { systemClock, type Clock } from '../../lib/clock.ts'
import { AppError, notFound } from '../../lib/errors.ts'
import type { EventLog } from '../events/index.ts'
import { storesNotBilling } from '../stores/index.ts'
import type { SubscriptionWrites } from '../subscriptions/index.ts'
import type { ChargeOutcome } from './gateways/index.ts'
import { presentCharge } from './charge.presenter.ts'
import type { ChargeView } from './charge.schemas.ts'
import { createRefunds } from './refunds.ts'
import { groupCommit } from '../../lib/group-commit.ts'
import type { PlatformBudget } from '../platform/index.ts'
import { claimDue, emptyClaimCounts, type FairClaim } from './renewal-claim.ts'
import { createCollector } from './renewal-collect.ts'
import { type Attempt, type BillingContext, type BillingLog, type GatewayResolver } from './renewal-context.ts'
import { requireReview, settleAll, type Settled } from './renewal-settle.ts'

/**
 * The renewal engine. Exactly-once charging rests on three steps per attempt (claim, collect and
 * settle, each in its own file) and on one lease per charge:
 *   - the lease is taken with the claim, renewed while the charge waits and while its gateway call
 *     runs, and required to settle, so a worker that stalled past it changes nothing;
 *   - a worker that died lets the lease run out, and the reconciler takes the charge over: it sends
 *     it again only when that cannot move money twice, else it looks it up;
 *   - an outcome still unknown after the grace period makes the charge `requires_review`, resolved
 *     by an admin; it is never charged again under a new key.
 */

export type { GatewayResolver }

export interface RenewalEngineOptions {
  db: Db
  writes: SubscriptionWrites
  events: EventLog
  clock: Clock
  gateways: GatewayResolver
  /** How long a worker owns a charge before another may take it over; renewed while the worker lives. */
  leaseMs?: number
  /** Gateway calls in flight at once per batch. */
  concurrency?: number
  /** Subscriptions claimed per batch by `runDue` unless the caller says otherwise. */
  batchSize?: number
  /** How long an unknown outcome may stay unknown before the charge waits for a person. */
  unknownGraceMs?: number
  /** What leases, rechecks and the grace period are measured on; the system clock unless a test moves its own. */
  leaseClock?: Clock
  /** Counts each renewal's platform calls, so claims spend the stores' budgets at what a renewal costs. */
  budget?: Pick<PlatformBudget, 'counted' | 'returned'> | undefined
  log?: BillingLog
}

export interface RenewalCounts {
  /** Subscriptions claimed in this batch; 0 means nothing was due. */
  claimed: number
  /** Scheduled renewals processed: first attempts charged and renewals skipped at the subscriber's request. */
  renewals: number
  /** Dunning retries attempted. */
  retries: number
  expirations: number
  /** Charges still pending after this batch (gateway outcome unknown); the reconciler finishes them. */
  unsettled: number
  /** Renewals set aside because they failed on their own data. */
  setAside: number
}

const DEFAULT_LEASE_MS = 60_000
const DEFAULT_CONCURRENCY = 32
const DEFAULT_UNKNOWN_GRACE_MS = 24 * 3_600_000
// A platform renewal of a product whose stock is tracked (BENCHMARKS.md); learned from the calls made.
const FIRST_CALLS_PER_RENEWAL = 11
// An unknown outcome is looked up again after about as long as it has been unknown: soon at first, then rarely.
const MIN_RECHECK_MS = 5_000
const MAX_RECHECK_MS = 3_600_000

export function createRenewalEngine(options: RenewalEngineOptions) {
  const ctx: BillingContext = {
    db: options.db,
    writes: options.writes,
    events: options.events,
    clock: options.clock,
    leaseClock: options.leaseClock ?? systemClock,
    gateways: options.gateways,
    leaseMs: options.leaseMs ?? DEFAULT_LEASE_MS,
    unknownGraceMs: options.unknownGraceMs ?? DEFAULT_UNKNOWN_GRACE_MS,
    callsPerRenewal: () => callsPerRenewal,
    budgeted: options.budget !== undefined,
    log: options.log,
  }
  // A moving average of the platform calls one renewal made (the last twenty or so weigh most).
  let callsPerRenewal = FIRST_CALLS_PER_RENEWAL
  async function metered(attempt: Attempt, work: () => Promise<ChargeOutcome>): Promise<ChargeOutcome> {
    const budget = options.budget
    if (!budget) return work()
    let made = 0
    try {
      const { result, calls } = await budget.counted(work)
      made = calls
      if (calls > 0) callsPerRenewal = Math.min(50, Math.max(1, callsPerRenewal * 0.9 + calls * 0.1))
      return result
    } finally {
      if (attempt.reservedCalls) budget.returned(attempt.charge.store_id, attempt.reservedCalls, made)
    }
  }
  const { db } = ctx
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY
  const collector = createCollector(ctx)
  const refunds = createRefunds(ctx)

  /**
   * Unknown outcomes: the lease is given back with the time of the next look, and a charge unknown
   * for longer than the grace period is handed to a person.
   */
  async function noteUnknown(unknown: { attempt: Attempt; outcome: ChargeOutcome }[], token: string): Promise<void> {
    if (unknown.length === 0) return
    const now = ctx.leaseClock.now()
    const recheck: ChargeRow[] = []
    for (const { attempt: { charge }, outcome } of unknown) {
      const reason = outcome.status === 'unknown' ? outcome.reason : ''
      const unknownMs = charge.unknown_since ? now.getTime() - charge.unknown_since.getTime() : 0
      if (charge.unknown_since && unknownMs >= ctx.unknownGraceMs) {
        await requireReview(ctx, charge, { status: 'pending', token }, 'outcome_unknown', `the gateway's answer stayed unknown for ${Math.round(unknownMs / 60_000)} minutes: ${reason}`)
      } else {
        recheck.push(charge)
        ctx.log?.warn({ chargeId: charge.id, reason }, 'charge outcome unknown; it will be looked up again under the same key')
      }
    }
    if (recheck.length === 0) return
    const rows = recheck.map((charge) => {
      const unknownSince = charge.unknown_since ?? now
      const delay = Math.min(MAX_RECHECK_MS, Math.max(Math.min(MIN_RECHECK_MS, ctx.leaseMs), now.getTime() - unknownSince.getTime()))
      return sql`(${charge.id}, ${unknownSince.toISOString()}, ${new Date(now.getTime() + delay).toISOString()})`
    })
    await sql`
      UPDATE charges AS c SET unknown_since = v.unknown_since::timestamptz, lease_until = v.next_look::timestamptz, lease_token = NULL
        FROM (VALUES ${sql.join(rows)}) AS v(id, unknown_since, next_look)
       WHERE c.id = v.id AND c.status = 'pending' AND c.lease_token = ${token}`.execute(db)
  }

  type Collected = { attempt: Attempt; outcome: ChargeOutcome }
  // Gateway calls in flight in this process, whoever claimed them (runDue and the renewal loop share it).
  const gatewaySlots = pLimit(concurrency)
  // The reconciler's look-ups have slots of their own: a store whose platform hangs, with many charges
  // left unknown, must not take every slot the renewals of other stores are waiting for.
  const reconcileSlots = pLimit(Math.max(1, Math.ceil(concurrency / 4)))

  /**
   * Collects and settles charges held under `token`, keeping their leases alive meanwhile. Each is
   * settled as soon as its gateway answers (answers arriving together settle in one transaction), so
   * one slow store's calls hold back nobody else's outcome; `onSettled` hears of each as it ends.
   */
  async function chargeAndSettle(attempts: Attempt[], token: string, onSettled?: (charges: ChargeRow[]) => void, slots = gatewaySlots): Promise<number> {
    if (attempts.length === 0) return 0
    const keeper = keepLeases(db, LEASES.charges, token, ctx.leaseMs, { now: () => ctx.leaseClock.now(), log: ctx.log })
    keeper.add(attempts.map(({ charge }) => charge.id))
    let unsettled = 0
    // Money that paid no period goes back as soon as these renewals are settled (not inside a settlement,
    // which would hold up outcomes arriving meanwhile); the refund pass is the backstop.
    let refundsOwed = false
    const settler = groupCommit<Collected>(async (results) => {
      keeper.remove(results.map(({ attempt }) => attempt.charge.id))
      const definite = results.filter((result) => result.outcome.status !== 'unknown') as Settled[]
      const { refunds: owed } = await settleAll(ctx, definite, { status: 'pending', token }, RENEWALS)
      const unknown = results.filter((result) => result.outcome.status === 'unknown')
      unsettled += unknown.length
      await noteUnknown(unknown, token)
      refundsOwed ||= owed > 0
    })
    try {
      // Read now, not at the claim: a charge taken over later is sent only if its store still bills.
      const notBilling = await storesNotBilling(db, attempts.map(({ charge }) => charge.store_id)).catch((error: unknown) => {
        // Nothing was sent: the calls reserved for these renewals go back (their leases run out, the reconciler takes them).
        for (const attempt of attempts) if (attempt.reservedCalls) options.budget?.returned(attempt.charge.store_id, attempt.reservedCalls, 0)
        throw error
      })
      const ended = await Promise.allSettled(
        attempts.map(async (attempt) => {
          try {
            const outcome = await slots(async () => {
              // Taken over while it waited (this worker stalled past the lease): it is someone else's now.
              if (keeper.lost(attempt.charge.id)) {
                if (attempt.reservedCalls) options.budget?.returned(attempt.charge.store_id, attempt.reservedCalls, 0)
                return undefined
              }
              // A bug or a database error while collecting one charge must not lose the others' answers.
              return metered(attempt, () => collector.collect(attempt.charge, token, { storeBills: !notBilling.has(attempt.charge.store_id) })).catch((error: unknown): ChargeOutcome => ({ status: 'unknown', reason: String(error) }))
            })
            if (outcome) await settler.push({ attempt, outcome: storableOutcome(outcome) })
          } finally {
            onSettled?.([attempt.charge])
          }
        }),
      )
      if (refundsOwed) await refunds.processPending()
      // A settlement that could not be written leaves its charges pending under their leases: the reconciler finishes them.
      const failed = ended.find((result) => result.status === 'rejected')
      if (failed) throw failed.reason
    } finally {
      await keeper.stop()
    }
    return unsettled
  }

  return {
    /** Claims up to `limit` due renewals (of one store, or one subscription: order now), charges them and settles them. */
    async runDue({ limit = options.batchSize ?? 200, storeId, id }: { limit?: number; storeId?: string; id?: string } = {}): Promise<RenewalCounts> {
      const token = newLeaseToken()
      const claimed = emptyClaimCounts()
      const attempts = await claimDue(ctx, { limit, storeId, id, token }, claimed)
      const unsettled = await chargeAndSettle(attempts, token)
      return { ...claimed, unsettled }
    },

    /**
     * The worker's claim (CONTRACT section 19): up to `limit` due renewals taken round-robin across
     * stores from `fair.after`, each store within its platform budget. Answers them under a new lease
     * token, for `work`; `counts.lastStoreId` is where the next claim starts.
     */
    async claimFairly(limit: number, fair: FairClaim): Promise<{ token: string; attempts: Attempt[]; counts: ReturnType<typeof emptyClaimCounts> }> {
      const token = newLeaseToken()
      const counts = emptyClaimCounts()
      const attempts = await claimDue(ctx, { limit, token, fair }, counts)
      return { token, attempts, counts }
    },

    /** Charges and settles claimed attempts; `onSettled` hears of each charge as it ends. Answers how many stayed unknown. */
    work: chargeAndSettle,

    /**
     * Takes over pending charges nobody holds (their worker died, or their outcome was unknown and
     * it is time to look again), and carries out pending refunds.
     */
    async reconcile({ limit = 200 }: { limit?: number } = {}): Promise<number> {
      const now = ctx.leaseClock.now()
      const claim = await claimLeased<ChargeRow>(db, LEASES.charges, {
        candidates: sql`SELECT id FROM charges WHERE status = 'pending' AND ${leaseFree(LEASES.charges, now)} ORDER BY lease_until LIMIT ${limit} FOR UPDATE SKIP LOCKED`,
        leaseMs: ctx.leaseMs,
        now,
      })
      await chargeAndSettle(claim.rows.map((charge) => ({ charge, periodIndex: -1 })), claim.token, undefined, reconcileSlots)
      const refunded = await refunds.processPending()
      return claim.rows.length + refunded
    },

    /** An admin settles a charge under review as if the gateway had answered so. */
    async resolve(store: StoreRow, chargeId: string, outcome: 'succeeded' | 'failed', actor: Actor): Promise<ChargeView> {
      const charge = await db.selectFrom('charges').selectAll().where('id', '=', chargeId).where('store_id', '=', store.id).executeTakeFirst()
      if (!charge) throw notFound('charge', chargeId)
      if (charge.status !== 'requires_review') throw new AppError('invalid_state', `only a charge that requires review can be resolved; this one is ${charge.status}`)
      const settled: Settled = {
        attempt: { charge, periodIndex: -1 },
        outcome: outcome === 'succeeded'
          ? { status: 'succeeded', gatewayChargeId: charge.gateway_charge_id }
          : { status: 'failed', failureCode: 'processing_error', failureMessage: 'Resolved as failed after review.' },
      }
      const result = await settleAll(ctx, [settled], { status: 'requires_review' }, actor)
      const after = result.settled[0]
      if (!after) {
        const now = await db.selectFrom('charges').selectAll().where('id', '=', chargeId).executeTakeFirstOrThrow()
        if (now.status === 'requires_review') throw new AppError('internal_error', 'the outcome could not be recorded; the charge still requires review')
        throw new AppError('invalid_state', `the charge is ${now.status} now`)
      }
      if (result.refunds > 0) await refunds.processPending()
      const current = await db.selectFrom('charges').selectAll().where('id', '=', chargeId).executeTakeFirstOrThrow()
      return presentCharge(current)
    },

    refund: refunds.refund,
  }
}

export type RenewalEngine = ReturnType<typeof createRenewalEngine>

/**
 * A gateway's words as the database can keep them: a failure message or reason quoting another
 * system may hold what PostgreSQL refuses (NUL), and a charge whose outcome cannot be written would
 * stay pending with nobody told.
 */
function storableOutcome(outcome: ChargeOutcome): ChargeOutcome {
  switch (outcome.status) {
    case 'succeeded':
      return { status: 'succeeded', gatewayChargeId: storableText(outcome.gatewayChargeId) }
    case 'failed':
      return { ...outcome, failureMessage: storableText(outcome.failureMessage) }
    case 'unknown':
      return { ...outcome, reason: storableText(outcome.reason) }
  }
}
