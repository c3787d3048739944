import assert from 'node:assert/strict'
// wall clock: closeTestApp polls the PostgreSQL server for the pool's sessions to end.
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import type { Db } from '../../../src/db/database.ts'
import type { App } from '../../../src/http/types.ts'
import { onPostgres } from '../../helpers/database.ts'
import { call, type TestApp } from '../../helpers/test-app.ts'

type Auth = Record<string, string>
type Response = Awaited<ReturnType<typeof call>>

export const ADDRESS = { name: 'Ada Lovelace', line1: '1 Analytical Street', city: 'London', postal_code: 'N1 9GU', country: 'GB' }
export const OTHER_ADDRESS = { name: 'Grace Hopper', line1: '7 Compiler Road', line2: 'Unit 2', city: 'Arlington', state: 'VA', postal_code: '22201', country: 'US' }

// Luhn-valid test numbers; none is a real card.
export const VISA = '4111111111111111'
export const VISA_INTEGER = 4242424242424242

let orderCounter = 0
export function nextOrderId(): string {
  orderCounter += 1
  return `order-${process.pid}-${orderCounter}`
}

let emailCounter = 0
export function nextEmail(name = 'buyer'): string {
  emailCounter += 1
  return `${name}-${process.pid}-${emailCounter}@example.com`
}

export function checkoutBody(planIds: string | string[], overrides: Record<string, unknown> = {}): Record<string, any> {
  const ids = Array.isArray(planIds) ? planIds : [planIds]
  return {
    platform_order_id: nextOrderId(),
    email: nextEmail(),
    name: 'Ada Lovelace',
    shipping_address: ADDRESS,
    payment_instrument_id: 'instr_9f8e7d',
    items: ids.map((plan_id) => ({ plan_id, quantity: 1 })),
    ...overrides,
  }
}

export function postCheckout(app: App, auth: Auth, payload: Record<string, unknown>): Promise<Response> {
  return call(app, { method: 'POST', url: '/api/v1/admin/checkouts', headers: auth, payload })
}

/** A checkout that must succeed; answers its subscriptions. */
export { checkoutViaApi as checkout } from '../../helpers/subscriptions.ts'

export function act(app: App, auth: Auth, subscriptionId: string, action: string, payload?: Record<string, unknown>): Promise<Response> {
  return call(app, {
    method: 'POST',
    url: `/api/v1/admin/subscriptions/${subscriptionId}/${action}`,
    headers: auth,
    ...(payload === undefined ? {} : { payload }),
  })
}

/** The subscription as GET shows it, without the embedded subscriber (the shape actions and events carry). */
export async function getSubscription(app: App, auth: Auth, id: string): Promise<any> {
  const response = await call(app, { method: 'GET', url: `/api/v1/admin/subscriptions/${id}`, headers: auth })
  assert.equal(response.statusCode, 200, `reading ${id} failed: ${response.body}`)
  const { subscriber: _subscriber, ...subscription } = response.json
  return subscription
}

export interface RowCounts {
  subscriptions: number
  subscribers: number
  events: number
  checkouts: number
  change_requests: number
}

/** How many rows one store owns in every table a checkout, action or request writes. */
export async function rowCounts(db: Db, storeId: string): Promise<RowCounts> {
  const count = async (table: 'subscriptions' | 'subscribers' | 'events' | 'checkouts' | 'change_requests') => {
    const row = await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('store_id', '=', storeId).executeTakeFirstOrThrow()
    return Number(row.n)
  }
  return {
    subscriptions: await count('subscriptions'),
    subscribers: await count('subscribers'),
    events: await count('events'),
    checkouts: await count('checkouts'),
    change_requests: await count('change_requests'),
  }
}

/** An entity's events as stored in the outbox, oldest first. */
export { storedEvents } from '../../helpers/subscriptions.ts'

const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

/** The event envelope (docs/contract.md, Events), exactly. */
export function assertEnvelope(event: any, eventType: string): void {
  assert.deepEqual(Object.keys(event).sort(), ['actor', 'api_version', 'data', 'event_type', 'id', 'sequence', 'timestamp'])
  assert.ok(['admin_key', 'console', 'subscriber', 'platform', 'system'].includes(event.actor.type), `an actor of a known type: ${JSON.stringify(event.actor)}`)
  assert.match(event.id, /^evt_[0-9A-HJKMNP-TV-Z]{26}$/)
  assert.equal(event.event_type, eventType)
  assert.match(event.timestamp, RFC3339_UTC)
  assert.equal(event.api_version, 'v1')
  assert.ok(Number.isInteger(event.sequence) && event.sequence >= 1)
}

export const addDays = (iso: string, days: number): string => new Date(new Date(iso).getTime() + days * 86_400_000).toISOString()

/** The scratch PostgreSQL database's name (its location ends with it). */
export function scratchDatabaseName(t: TestApp): string {
  return t.database.location.slice(t.database.location.lastIndexOf('/') + 1)
}

/** Runs one query on the server's maintenance connection (DATABASE_URL), outside the app's pool. */
export async function adminQuery(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL })
  await client.connect()
  try {
    return await client.query(text, values)
  } finally {
    await client.end()
  }
}

/**
 * Closes the app and its database. pg's Pool.end() resolves before its clients' sockets close, and the
 * helper then drops the scratch database WITH (FORCE): a backend still open gets terminated, and its
 * error reaches a pool without an 'error' listener (see connect.ts), failing whichever file ran last.
 * So the pool is ended first and the database dropped only once the server shows no connections to it.
 */
export async function closeTestApp(t: TestApp): Promise<void> {
  await t.app.close()
  await t.db.destroy()
  if (onPostgres) {
    const name = scratchDatabaseName(t)
    for (let waited = 0; waited < 5_000; waited += 20) {
      const { rows } = await adminQuery('select count(*)::int as n from pg_stat_activity where datname = $1', [name])
      if (rows[0].n === 0) break
      // wall clock: the PostgreSQL server ends the closed pool's sessions on its own time; polled, with a deadline.
      await sleep(20)
    }
  }
  await t.database.close()
}
