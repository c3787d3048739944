// What bench/renewals.ts renews and measures against: due subscriptions seeded in bulk, the plain-SQL
// baseline that writes the rows a renewal writes, and the check that every renewal charged exactly once.
import { randomBytes } from 'node:crypto'
import { sql, type Insertable, type RawBuilder } from 'kysely'
import { DateTime } from 'luxon'
import { ulid } from 'ulid'
import type { ChargeRow, Db, EventsTable, PlanRow, StoreRow, SubscribersTable, SubscriptionRow, SubscriptionsTable, TestGatewayChargesTable } from '../../src/db/database.ts'
import { periodAt } from '../../src/lib/calendar.ts'
import { systemClock } from '../../src/lib/clock.ts'
import { newId } from '../../src/lib/ids.ts'
import { presentCharge } from '../../src/modules/billing/charge.presenter.ts'
import { chargeIdempotencyKey } from '../../src/modules/billing/gateways/index.ts'
import { createStore } from '../../src/modules/stores/index.ts'
import { presentSubscription } from '../../src/modules/subscriptions/index.ts'
import { scheduleAtActivation } from '../../src/modules/subscriptions/subscription-schedule.ts'
import { testModules } from '../../test/helpers/modules.ts'

const ADDRESS = { name: 'Ada Lovelace', line1: '1 Analytical Street', city: 'London', postal_code: 'N1 9GU', country: 'GB' }
const CADENCE = { interval: 'month' as const, interval_count: 1, prepaid_cycles: null }
const SEED_CHUNK = 1_000
/** Every seeded subscription's instrument: the test gateway charges it successfully. */
export const INSTRUMENT = 'pi_ok'

export interface SeededStore {
  store: StoreRow
  plan: PlanRow
  count: number
}

/**
 * A test-mode store with `count` active monthly subscriptions whose first paid period has ended: each
 * is due once (period 1), at times spread over the hours before `now`, with the schedule a checkout
 * without trial would have given it. Inserted in bulk; the seeding is not measured.
 */
export async function seedDueSubscriptions(db: Db, label: string, count: number, now: Date): Promise<SeededStore> {
  const store = await createStore(db, { storeHash: `bench-renewals-${label}-${randomBytes(3).toString('hex')}`, mode: 'test' })
  const catalog = testModules(db, { clock: systemClock }).catalog
  const product = await catalog.createProduct(store, { platform_product_id: `p-${label}`, name: 'Coffee beans' })
  const view = await catalog.createPlan(store, { product_id: product.id, name: 'Monthly', amount: 1500, currency: 'USD', interval: 'month' })
  const plan = await db.selectFrom('plans').selectAll().where('id', '=', view.id).executeTakeFirstOrThrow()
  // The latest renewal falls due an hour ago, the earliest `count` seconds before that.
  const lastDue = DateTime.fromJSDate(now, { zone: 'UTC' }).minus({ hours: 1 })
  for (let from = 0; from < count; from += SEED_CHUNK) {
    const subscribers: Insertable<SubscribersTable>[] = []
    const subscriptions: Insertable<SubscriptionsTable>[] = []
    for (let i = from; i < Math.min(count, from + SEED_CHUNK); i++) {
      const anchor = lastDue.minus({ seconds: i }).minus({ months: 1 }).toJSDate()
      const schedule = scheduleAtActivation(anchor, CADENCE, false, store.timezone)
      if (!(schedule.next_charge_at! <= now)) throw new Error(`seeding: subscription ${i} would not be due (${schedule.next_charge_at!.toISOString()})`)
      const subscriberId = newId('cus')
      subscribers.push({ id: subscriberId, store_id: store.id, email: `${label}-${i}@example.com`, name: 'Ada Lovelace', shipping_address: JSON.stringify(ADDRESS), created_at: anchor, updated_at: anchor })
      subscriptions.push({
        id: newId('sub'),
        store_id: store.id,
        subscriber_id: subscriberId,
        plan_id: plan.id,
        product_id: plan.product_id,
        platform_order_id: `order-${label}-${i}`,
        status: 'active',
        quantity: 1,
        amount: plan.amount,
        currency: plan.currency,
        interval: plan.interval,
        interval_count: plan.interval_count,
        payment_instrument_id: INSTRUMENT,
        shipping_address: JSON.stringify(ADDRESS),
        start_at: anchor,
        trial_days: 0,
        ...schedule,
        created_at: anchor,
        updated_at: anchor,
      })
    }
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('subscribers').values(subscribers).execute()
      await trx.insertInto('subscriptions').values(subscriptions).execute()
    })
  }
  return { store, plan, count }
}

/** Fresh statistics and no dead rows from the previous case, as autovacuum would leave the tables. */
export async function tidyTables(db: Db): Promise<void> {
  for (const table of ['subscriptions', 'subscribers', 'charges', 'events', 'test_gateway_charges']) await sql`VACUUM (ANALYZE) ${sql.table(table)}`.execute(db)
}

/** The due subscriptions of a seeded store, read before the baseline's clock starts. */
export function dueSubscriptions(db: Db, store: StoreRow): Promise<SubscriptionRow[]> {
  return db.selectFrom('subscriptions').selectAll().where('store_id', '=', store.id).orderBy('next_charge_at').execute()
}

/**
 * The baseline: the rows renewing a batch of subscriptions leaves behind, written with plain SQL in
 * one transaction and four statements, with no claim, no gateway call and no settlement: the
 * succeeded charge, its `test` gateway ledger row, `subscription.charged` and `charge.succeeded`
 * with payloads of the engine's shape, and the subscription moved on to period 1.
 */
export async function plainRenewalBatch(db: Db, store: StoreRow, batch: SubscriptionRow[]): Promise<void> {
  const now = new Date()
  const charges: ChargeRow[] = []
  const events: Insertable<EventsTable>[] = []
  const ledger: Insertable<TestGatewayChargesTable>[] = []
  const moves: RawBuilder<unknown>[] = []
  for (const subscription of batch) {
    const dueAt = subscription.next_charge_at!
    const paid = periodAt(subscription.billing_anchor_at!, subscription.interval, subscription.interval_count, 1, store.timezone)
    const charge: ChargeRow = {
      id: newId('ch'),
      store_id: store.id,
      subscription_id: subscription.id,
      amount: subscription.amount * subscription.quantity,
      subtotal: subscription.amount * subscription.quantity,
      shipping_amount: 0,
      shipping_method: null,
      tax_amount: 0,
      discount_amount: 0,
      discount_id: null,
      line_items: [],
      currency: subscription.currency,
      status: 'succeeded',
      attempt: 1,
      payment_instrument_id: subscription.payment_instrument_id,
      idempotency_key: chargeIdempotencyKey(subscription.id, paid.start, 1),
      failure_code: null,
      failure_message: null,
      next_retry_at: null,
      period_start: paid.start,
      period_end: paid.end,
      created_at: dueAt,
      settled_at: now,
      gateway: 'test',
      gateway_charge_id: `tgw_${ulid()}`,
      platform_order_id: null,
      platform_cart_id: null,
      order_requested_at: null,
      lease_until: null,
      lease_token: null,
      submitted_at: null,
      unknown_since: null,
      review: null,
      amount_refunded: 0,
    }
    charges.push(charge)
    ledger.push({
      idempotency_key: charge.idempotency_key,
      store_id: store.id,
      subscription_id: subscription.id,
      amount: charge.amount,
      currency: charge.currency,
      payment_instrument_id: charge.payment_instrument_id,
      status: 'succeeded' as const,
      failure_code: null,
      gateway_charge_id: charge.gateway_charge_id,
      created_at: now,
    })
    const charged = presentSubscription({ ...subscription, latest_charge_id: charge.id, updated_at: now, version: subscription.version + 1 }, store.store_hash)
    events.push(eventRow(store, 'subscription.charged', dueAt, charged), eventRow(store, 'charge.succeeded', now, presentCharge(charge)))
    moves.push(sql`(${subscription.id}, ${charge.id}, ${paid.start.toISOString()}, ${paid.end.toISOString()}, ${now.toISOString()})`)
  }
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('charges').values(charges.map((charge) => ({ ...charge, line_items: JSON.stringify(charge.line_items) }))).execute()
    await trx.insertInto('test_gateway_charges').values(ledger).execute()
    await trx.insertInto('events').values(events).execute()
    await sql`
      UPDATE subscriptions AS s
         SET period_index = 1, current_period_start = v.period_start::timestamptz, current_period_end = v.period_end::timestamptz,
             next_charge_at = v.period_end::timestamptz, latest_charge_id = v.charge_id, updated_at = v.at::timestamptz, version = s.version + 1
        FROM (VALUES ${sql.join(moves)}) AS v(id, charge_id, period_start, period_end, at)
       WHERE s.id = v.id`.execute(trx)
  })
}

/** An outbox row shaped as the event log writes it: the first event of its entity. */
function eventRow(store: StoreRow, eventType: string, occurredAt: Date, data: { id: string; object: string }): Insertable<EventsTable> {
  const id = newId('evt')
  const payload = JSON.stringify({ id, event_type: eventType, timestamp: occurredAt.toISOString(), api_version: 'v1', data, sequence: 1 })
  return { id, store_id: store.id, entity_type: data.object, entity_id: data.id, event_type: eventType, sequence: 1, occurred_at: occurredAt, payload }
}

/**
 * Every seeded subscription renewed exactly once: one charge, succeeded, one ledger row called once,
 * both events, and the subscription on period 1 with nothing in flight. Throws otherwise.
 */
export async function verifyRenewed(db: Db, seeded: SeededStore, now: Date): Promise<void> {
  const storeId = seeded.store.id
  const { rows } = await sql<Record<string, number>>`
    SELECT
      (SELECT count(*) FROM subscriptions WHERE store_id = ${storeId})::int AS subscriptions,
      (SELECT count(*) FROM subscriptions s WHERE s.store_id = ${storeId}
          AND (SELECT count(*) FROM charges c WHERE c.subscription_id = s.id AND c.status = 'succeeded') = 1)::int AS with_one_success,
      (SELECT count(*) FROM subscriptions WHERE store_id = ${storeId} AND period_index = 1 AND pending_charge_id IS NULL
          AND latest_charge_id IS NOT NULL AND next_charge_at > ${now})::int AS moved_on,
      (SELECT count(*) FROM charges WHERE store_id = ${storeId})::int AS charges,
      (SELECT count(*) FROM test_gateway_charges WHERE store_id = ${storeId} AND status = 'succeeded' AND calls = 1)::int AS gateway_charges,
      (SELECT count(*) FROM test_gateway_charges WHERE store_id = ${storeId})::int AS gateway_rows,
      (SELECT count(*) FROM events WHERE store_id = ${storeId} AND event_type = 'subscription.charged')::int AS charged_events,
      (SELECT count(*) FROM events WHERE store_id = ${storeId} AND event_type = 'charge.succeeded')::int AS succeeded_events,
      (SELECT count(*) FROM events WHERE store_id = ${storeId})::int AS events`.execute(db)
  const found = rows[0]!
  const n = seeded.count
  const wanted = { subscriptions: n, with_one_success: n, moved_on: n, charges: n, gateway_charges: n, gateway_rows: n, charged_events: n, succeeded_events: n, events: 2 * n }
  const wrong = Object.entries(wanted).filter(([key, value]) => Number(found[key]) !== value)
  if (wrong.length > 0) {
    throw new Error(`store ${seeded.store.store_hash}: renewals not exactly once: ${wrong.map(([key, value]) => `${key} ${found[key]} (expected ${value})`).join(', ')}`)
  }
}
