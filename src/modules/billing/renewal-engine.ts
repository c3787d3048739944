import { sql } from 'kysely'
import type { ChargeRow, Db, Executor, StoreRow, SubscriptionRow } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { recordEvents, type NewEvent } from '../events/index.ts'
import { presentSubscription } from '../subscriptions/index.ts'
import { updateSubscription } from '../subscriptions/subscriptions.repository.ts'
import { presentCharge } from './charge.presenter.ts'
import { chargeIdempotencyKey, type ChargeOutcome, type ChargeRequest, type OrderOutcome, type PaymentGateway, type RenewalOrder } from './gateways/index.ts'
import { afterFailure, afterSuccess, FAILURE_TEXT, periodIndexStartingAt, planRenewal, type Settlement } from './renewal-plan.ts'

/**
 * The renewal engine. Exactly-once charging rests on three steps per attempt:
 *   1. One transaction claims the due subscription (SKIP LOCKED), records the `pending` charge with
 *      its idempotency key and `subscription.charged`, and marks the subscription as having a charge
 *      in flight. Nothing else can start an attempt for it until that charge settles.
 *   2. The gateway is called outside any transaction, with that key.
 *   3. A second transaction settles the charge if it is still pending, and moves the subscription on.
 * A crash between 1 and 3 leaves a pending charge whose lease runs out; the reconciler then asks the
 * gateway again with the same key, which answers the first outcome instead of charging twice.
 */

export interface GatewayResolver {
  /** The gateway new charges of this store go through. */
  forStore(store: StoreRow): PaymentGateway
  /** The gateway an existing charge went through (its `gateway` column). */
  byName(name: string): PaymentGateway
}

export interface RenewalEngineOptions {
  db: Db
  clock: Clock
  gateways: GatewayResolver
  /** How long a worker owns a pending charge's gateway call before the reconciler may take it over. */
  leaseMs?: number
  /** Gateway calls in flight at once per batch. */
  concurrency?: number
  /** Subscriptions claimed per batch by `runDue` unless the caller says otherwise. */
  batchSize?: number
  log?: { warn(object: object, message: string): void; error(object: object, message: string): void }
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
}

interface Attempt {
  charge: ChargeRow
  /** The period index the charge pays, for settling it. */
  periodIndex: number
}

const DEFAULT_LEASE_MS = 60_000
const DEFAULT_CONCURRENCY = 32

export function createRenewalEngine(options: RenewalEngineOptions) {
  const { db, clock, gateways } = options
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY
  const realNow = () => new Date()

  async function loadStores(trx: Executor, ids: string[]): Promise<Map<string, StoreRow>> {
    if (ids.length === 0) return new Map()
    const rows = await trx.selectFrom('stores').selectAll().where('id', 'in', [...new Set(ids)]).execute()
    return new Map(rows.map((row) => [row.id, row]))
  }

  /** Step 1: claims due subscriptions and records their attempts (or their skips and expirations). */
  async function claim(limit: number, storeId: string | undefined, counts: RenewalCounts): Promise<Attempt[]> {
    return db.transaction().execute(async (trx) => {
      let query = trx
        .selectFrom('subscriptions as s')
        .innerJoin('stores as st', 'st.id', 's.store_id')
        .selectAll('s')
        .where('s.status', 'in', ['active', 'past_due'])
        .where('s.pending_charge_id', 'is', null)
        .where('s.cancel_at_period_end', '=', false)
        .where('s.next_charge_at', '<=', sql<Date>`coalesce(st.test_clock_now, ${clock.now()})`)
        // A prepaid block whose later cycles have not begun yet (due work `prepaid_cycle`, due before
        // this renewal) renews after them: charging first would move the period past those cycles.
        .where(sql<boolean>`NOT (s.prepaid_cycles_total IS NOT NULL AND s.dunning_attempts = 0 AND s.period_index >= 0
                                 AND s.current_period_end IS NOT NULL AND s.current_period_end < s.next_charge_at)`)
      if (storeId) query = query.where('s.store_id', '=', storeId)
      const due = await query.orderBy('s.next_charge_at').limit(limit).forUpdate('s').skipLocked().execute()
      counts.claimed += due.length
      if (due.length === 0) return []
      const stores = await loadStores(trx, due.map((row) => row.store_id))

      const attempts: Attempt[] = []
      const charges: ChargeRow[] = []
      const lifecycleEvents: NewEvent[] = []
      for (const subscription of due) {
        const store = stores.get(subscription.store_id)!
        const dueAt = subscription.next_charge_at!
        const renewal = planRenewal(subscription, store)
        if (renewal.kind !== 'charge') {
          const updated = await updateSubscription(trx, subscription.id, renewal.set, storeTime(store, dueAt))
          const view = presentSubscription(updated, store.store_hash)
          for (const eventType of renewal.events) lifecycleEvents.push({ storeId: store.id, eventType, occurredAt: dueAt, data: view })
          if (renewal.kind === 'skip') counts.renewals++
          else counts.expirations++
          continue
        }
        if (renewal.attempt === 1) counts.renewals++
        else counts.retries++
        const row: ChargeRow = {
          id: newId('ch'),
          store_id: store.id,
          subscription_id: subscription.id,
          amount: renewal.amount,
          currency: renewal.currency,
          status: 'pending' as const,
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
          gateway: gateways.forStore(store).name,
          gateway_charge_id: null,
          platform_order_id: null,
          lease_until: new Date(realNow().getTime() + leaseMs),
        }
        charges.push(row)
        attempts.push({ charge: row, periodIndex: renewal.periodIndex })
      }
      await recordEvents(trx, lifecycleEvents)
      if (charges.length === 0) return attempts

      await trx.insertInto('charges').values(charges).execute()
      const marked = await sql<SubscriptionRow>`
        UPDATE subscriptions AS s
           SET pending_charge_id = v.charge_id, latest_charge_id = v.charge_id,
               updated_at = v.updated_at::timestamptz, version = s.version + 1
          FROM (VALUES ${sql.join(charges.map((charge) => sql`(${charge.subscription_id}, ${charge.id}, ${storeTime(stores.get(charge.store_id)!, charge.created_at).toISOString()})`))})
            AS v(id, charge_id, updated_at)
         WHERE s.id = v.id
     RETURNING s.*`.execute(trx)
      const byId = new Map(marked.rows.map((row) => [row.id, row]))
      await recordEvents(
        trx,
        charges.map((charge) => {
          const store = stores.get(charge.store_id)!
          return { storeId: store.id, eventType: 'subscription.charged' as const, occurredAt: charge.created_at, data: presentSubscription(byId.get(charge.subscription_id)!, store.store_hash) }
        }),
      )
      return attempts
    })
  }

  /** The time a piece of work happens on the store's clock: a test clock runs work at its due time. */
  function storeTime(store: StoreRow, dueAt: Date): Date {
    if (store.test_clock_now !== null) return dueAt
    const now = clock.now()
    return now > dueAt ? now : dueAt
  }

  function requestOf(charge: ChargeRow): ChargeRequest {
    return {
      idempotencyKey: charge.idempotency_key,
      storeId: charge.store_id,
      subscriptionId: charge.subscription_id,
      amount: charge.amount,
      currency: charge.currency.trim(),
      paymentInstrumentId: charge.payment_instrument_id,
      description: `Subscription ${charge.subscription_id} renewal`,
      orderId: charge.platform_order_id ?? undefined,
    }
  }

  /** Step 2: asks the gateway, turning a lost answer into a lookup by the same key before giving up. */
  async function collect(charge: ChargeRow): Promise<ChargeOutcome> {
    const gateway = gateways.byName(charge.gateway)
    const request = requestOf(charge)
    if (gateway.createOrder && !charge.platform_order_id) {
      const order = await raiseOrder(gateway, charge, request)
      if (order.status !== 'created') return order
      request.orderId = order.orderId
    }
    const first = await gateway.charge(request).catch((error: unknown) => ({ status: 'unknown' as const, reason: String(error) }))
    if (first.status !== 'unknown') return first
    const found = await gateway.lookup(request).catch((error: unknown) => ({ status: 'unknown' as const, reason: String(error) }))
    // No trace at the gateway means no money moved: asking again with the same key is safe.
    if (found === undefined) return gateway.charge(request).catch((error: unknown) => ({ status: 'unknown' as const, reason: String(error) }))
    return found
  }

  /**
   * The renewal's order on the platform, raised under the charge's idempotency key and kept on the
   * charge before any payment is tried, so a retry pays the same order.
   */
  async function raiseOrder(gateway: PaymentGateway, charge: ChargeRow, request: ChargeRequest): Promise<OrderOutcome> {
    const row = await db
      .selectFrom('subscriptions as s')
      .innerJoin('products as p', 'p.id', 's.product_id')
      .innerJoin('subscribers as c', 'c.id', 's.subscriber_id')
      .select(['p.platform_product_id', 's.quantity', 's.shipping_address', 'c.email'])
      .where('s.id', '=', charge.subscription_id)
      .executeTakeFirstOrThrow()
    const order: RenewalOrder = {
      platformProductId: row.platform_product_id,
      quantity: row.quantity,
      amount: charge.amount,
      currency: charge.currency.trim(),
      email: row.email,
      shippingAddress: (row.shipping_address as Record<string, unknown> | null) ?? null,
    }
    const made = await gateway.createOrder!(request, order).catch((error: unknown): OrderOutcome => ({ status: 'unknown', reason: String(error) }))
    if (made.status === 'created') {
      await db.updateTable('charges').set({ platform_order_id: made.orderId }).where('id', '=', charge.id).where('platform_order_id', 'is', null).execute()
    }
    return made
  }

  /** Step 3: settles charges that are still pending and moves their subscriptions on, in one transaction. */
  async function settle(results: { attempt: Attempt; outcome: ChargeOutcome }[]): Promise<void> {
    const definite = results.filter((result) => result.outcome.status !== 'unknown')
    if (definite.length === 0) return
    await db.transaction().execute(async (trx) => {
      const pending = await trx
        .selectFrom('charges')
        .selectAll()
        .where('id', 'in', definite.map((result) => result.attempt.charge.id))
        .where('status', '=', 'pending')
        .orderBy('id')
        .forUpdate()
        .execute()
      if (pending.length === 0) return
      const stillPending = new Set(pending.map((charge) => charge.id))
      const subscriptions = await trx
        .selectFrom('subscriptions')
        .selectAll()
        .where('id', 'in', pending.map((charge) => charge.subscription_id))
        .orderBy('id')
        .forUpdate()
        .execute()
      const subscriptionById = new Map(subscriptions.map((row) => [row.id, row]))
      const stores = await loadStores(trx, pending.map((charge) => charge.store_id))

      const events: NewEvent[] = []
      const chargeValues: ReturnType<typeof sql>[] = []
      const moves: { id: string; set: Record<string, unknown>; at: Date; store: StoreRow; eventTypes: string[] }[] = []
      const chargeEvents: { charge: ChargeRow; store: StoreRow; at: Date; succeeded: boolean }[] = []
      for (const { attempt, outcome } of definite) {
        if (!stillPending.has(attempt.charge.id) || outcome.status === 'unknown') continue
        const charge = attempt.charge
        const store = stores.get(charge.store_id)!
        const subscription = subscriptionById.get(charge.subscription_id)!
        const at = storeTime(store, charge.created_at)
        const succeeded = outcome.status === 'succeeded'
        let change: Settlement = { set: {}, events: [] }
        let nextRetryAt: Date | null = null
        if (subscription.pending_charge_id === charge.id) {
          change = { set: { pending_charge_id: null }, events: [] }
          if (succeeded && ['active', 'past_due', 'paused'].includes(subscription.status)) {
            change = afterSuccess(subscription, store, periodIndexOf(subscription, store, attempt), at)
          } else if (!succeeded && ['active', 'past_due'].includes(subscription.status)) {
            const failure = afterFailure(subscription, store, charge.attempt, charge.period_start, at)
            change = failure
            nextRetryAt = failure.nextRetryAt
          }
        }
        if (succeeded && !('period_index' in change.set)) {
          // Money moved for a subscription that left billing meanwhile: recorded, and said loudly.
          options.log?.warn({ chargeId: charge.id, subscriptionId: subscription.id, status: subscription.status }, 'a renewal charge succeeded after its subscription left billing')
        }
        const settled: ChargeRow = {
          ...charge,
          status: succeeded ? 'succeeded' : 'failed',
          gateway_charge_id: outcome.status === 'succeeded' ? outcome.gatewayChargeId : null,
          failure_code: outcome.status === 'failed' ? outcome.failureCode : null,
          failure_message: outcome.status === 'failed' ? outcome.failureMessage || FAILURE_TEXT[outcome.failureCode] : null,
          next_retry_at: nextRetryAt,
          settled_at: at,
          lease_until: null,
        }
        chargeValues.push(sql`(${settled.id}, ${settled.status}, ${settled.gateway_charge_id}, ${settled.failure_code}, ${settled.failure_message}, ${settled.next_retry_at?.toISOString() ?? null}, ${at.toISOString()})`)
        chargeEvents.push({ charge: settled, store, at, succeeded })
        if (Object.keys(change.set).length > 0) moves.push({ id: subscription.id, set: change.set as Record<string, unknown>, at, store, eventTypes: change.events })
      }
      if (chargeValues.length > 0) {
        await sql`UPDATE charges AS c SET status = v.status, gateway_charge_id = v.gateway_charge_id, failure_code = v.failure_code, failure_message = v.failure_message,
                   next_retry_at = v.next_retry_at::timestamptz, settled_at = v.settled_at::timestamptz, lease_until = NULL
              FROM (VALUES ${sql.join(chargeValues)}) AS v(id, status, gateway_charge_id, failure_code, failure_message, next_retry_at, settled_at)
             WHERE c.id = v.id`.execute(trx)
      }
      for (const { charge, store, at, succeeded } of chargeEvents) events.push({ storeId: store.id, eventType: succeeded ? 'charge.succeeded' : 'charge.failed', occurredAt: at, data: presentCharge(charge) })
      // One UPDATE per shape of change (success, failure...): the columns each sets, typed.
      const groups = new Map<string, typeof moves>()
      for (const move of moves) {
        const key = Object.keys(move.set).sort().join(',')
        groups.set(key, [...(groups.get(key) ?? []), move])
      }
      for (const [key, group] of groups) {
        const columns = key.split(',')
        const rows = group.map((move) => sql`(${sql.join([sql`${move.id}`, sql`${move.at.toISOString()}`, ...columns.map((column) => sql`${toParam(move.set[column])}`)])})`)
        const updated = await sql<SubscriptionRow>`UPDATE subscriptions AS s SET ${sql.join(columns.map((column) => sql`${sql.ref(column)} = ${sql.raw(`v.${column}::${COLUMN_TYPES[column] ?? 'text'}`)}`))},
                 updated_at = v.at::timestamptz, version = s.version + 1
            FROM (VALUES ${sql.join(rows)}) AS v(id, at, ${sql.join(columns.map((column) => sql.ref(column)))})
           WHERE s.id = v.id RETURNING s.*`.execute(trx)
        const byId = new Map(updated.rows.map((row) => [row.id, row]))
        for (const move of group) {
          const view = presentSubscription(byId.get(move.id)!, move.store.store_hash)
          for (const eventType of move.eventTypes) events.push({ storeId: move.store.id, eventType: eventType as NewEvent['eventType'], occurredAt: move.at, data: view })
        }
      }
      await recordEvents(trx, events)
    })
  }

  // The reconciler rebuilds attempts from charge rows alone, so the period index is recomputed.
  function periodIndexOf(subscription: SubscriptionRow, store: StoreRow, attempt: Attempt): number {
    return attempt.periodIndex >= 0 ? attempt.periodIndex : periodIndexStartingAt(subscription, attempt.charge.period_start, store.timezone)
  }

  async function collectAll(attempts: Attempt[]): Promise<{ attempt: Attempt; outcome: ChargeOutcome }[]> {
    const results: { attempt: Attempt; outcome: ChargeOutcome }[] = []
    let next = 0
    const lanes = Array.from({ length: Math.min(concurrency, attempts.length) }, async () => {
      while (next < attempts.length) {
        const attempt = attempts[next++]!
        results.push({ attempt, outcome: await collect(attempt.charge) })
      }
    })
    await Promise.all(lanes)
    return results
  }

  async function chargeAndSettle(attempts: Attempt[]): Promise<number> {
    if (attempts.length === 0) return 0
    const results = await collectAll(attempts)
    await settle(results)
    const unknown = results.filter((result) => result.outcome.status === 'unknown')
    for (const { attempt, outcome } of unknown) {
      options.log?.warn({ chargeId: attempt.charge.id, reason: outcome.status === 'unknown' ? outcome.reason : '' }, 'charge outcome unknown; the reconciler will ask the gateway again')
    }
    return unknown.length
  }

  return {
    /** Claims up to `limit` due renewals, charges them and settles them. */
    async runDue({ limit = options.batchSize ?? 200, storeId }: { limit?: number; storeId?: string } = {}): Promise<RenewalCounts> {
      const counts: RenewalCounts = { claimed: 0, renewals: 0, retries: 0, expirations: 0, unsettled: 0 }
      const attempts = await claim(limit, storeId, counts)
      counts.unsettled = await chargeAndSettle(attempts)
      return counts
    },

    /**
     * Finishes charges left pending by a worker that died or a gateway that could not answer: takes
     * over their expired leases and asks the gateway again with the same idempotency key.
     */
    async reconcile({ limit = 200 }: { limit?: number } = {}): Promise<number> {
      const taken = await db.transaction().execute(async (trx) => {
        const stale = await trx
          .selectFrom('charges')
          .selectAll()
          .where('status', '=', 'pending')
          .where('lease_until', '<', realNow())
          .orderBy('lease_until')
          .limit(limit)
          .forUpdate()
          .skipLocked()
          .execute()
        if (stale.length === 0) return []
        const leaseUntil = new Date(realNow().getTime() + leaseMs)
        await trx.updateTable('charges').set({ lease_until: leaseUntil }).where('id', 'in', stale.map((charge) => charge.id)).execute()
        return stale.map((charge) => ({ charge: { ...charge, lease_until: leaseUntil }, periodIndex: -1 }))
      })
      await chargeAndSettle(taken)
      return taken.length
    },
  }
}

export type RenewalEngine = ReturnType<typeof createRenewalEngine>

// The SQL type of each subscription column a settlement sets, for the typed VALUES list.
const COLUMN_TYPES: Record<string, string> = {
  status: 'text', pending_charge_id: 'text', period_index: 'integer', current_period_start: 'timestamptz', current_period_end: 'timestamptz',
  next_charge_at: 'timestamptz', prepaid_cycles_remaining: 'integer', dunning_attempts: 'integer', dunning_started_at: 'timestamptz',
  unpaid_period_start: 'timestamptz', past_due_at: 'timestamptz', reminded_for: 'timestamptz',
}
function toParam(value: unknown): unknown {
  return value instanceof Date ? value.toISOString() : value
}
