import { EventEmitter } from 'node:events'
import { sql, type RawBuilder } from 'kysely'
import pLimit from 'p-limit'
import { request, type Dispatcher } from 'undici'
import type { Db, Executor } from '../../db/database.ts'
import { claimLeased, keepLeases, leaseFree, LEASES } from '../../db/leases.ts'
import type { Clock } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { printableTextWithin } from '../../lib/printable-text.ts'
import { takeEventsToFanOut } from '../events/index.ts'
import { storeClockOf, storeTestClockOf } from '../stores/index.ts'
import { classifyAnswer, nextAttemptAt, type AttemptResult } from './retry-schedule.ts'
import { deliveryHeaders, signatureHeader } from './webhook-signing.ts'

/**
 * Outbound delivery, at least once (docs/contract.md, Webhook delivery):
 *   1. Fan-out turns each recorded event into one delivery row per enabled endpoint that wants its
 *      type, in one transaction with taking the event off the fan-out queue, so none is lost or doubled.
 *   2. Due deliveries are claimed with SKIP LOCKED under a lease and the claim commits before any
 *      HTTP call; a dispatcher that dies mid-call lets the lease run out and another sends again
 *      (the same `webhook-id` and body, so receivers can drop the duplicate).
 *   3. Each attempt is recorded with the delivery's new state and the endpoint's health: a first attempt
 *      that succeeds stays on the delivery row (delivered_latency_ms, delivered_response_body,
 *      delivered_sent_at, delivered_request_signature), any other attempt gets a webhook_attempts row;
 *      the delivery log shows both alike. The real time it was sent and the signature are kept with
 *      the attempt, so the inspector shows its headers as they were (deliveryHeaders); of the answer
 *      the first KiB is kept, never more.
 * One entity's events reach an endpoint in order: a delivery waits while an earlier one of the
 * same entity to the same endpoint is still pending.
 */

export interface DispatcherOptions {
  db: Db
  /** Real time: retries and signatures follow the wall clock, not a store's test clock. */
  clock: Clock
  agent: Dispatcher
  retrySchedule: readonly number[]
  disableAfterMs: number
  timeoutMs?: number
  concurrency?: number
  batchSize?: number
  /** Deliveries to one endpoint this dispatcher holds at once (claimed, not yet recorded); default: concurrency + batchSize. */
  perEndpoint?: number
  log?: { warn(object: object, message: string): void }
}

interface Claimed {
  id: string
  attempts: number
  /** The fencing token of the claim: recording requires it. */
  token: string
  payload: string
  event_id: string
  webhook_subscription_id: string
  url: string
  secret: string
  previous_secret: string | null
  previous_secret_expires_at: Date | null
  endpoint_status: string
  /** Where the store's test clock stood at the claim; null for a store on real time. */
  store_clock: Date | null
}

interface Sent {
  claimed: Claimed
  attemptedAt: Date
  latencyMs: number
  statusCode: number | null
  error: string | null
  responseBody: string | null
  /** The webhook-signature header sent; null when nothing was sent (the endpoint was disabled). */
  signature: string | null
  result: AttemptResult | { kind: 'endpoint_disabled' }
}

/** The error of an attempt that was never sent: its endpoint was disabled while it waited. */
export const NOT_SENT_ERROR = 'the endpoint is disabled'

/**
 * When an attempt happened as the merchant reads it: on the store's clock, so a test store's deliveries
 * line up with its subscriptions. Everything that drives delivery (next_attempt_at, leases, the
 * signature's timestamp, failing_since and the disabling it leads to) stays on real time: a receiver
 * checks the signature against its own clock, and retries wait for real.
 */
function shownAt(attempt: Sent): Date {
  return attempt.claimed.store_clock ?? attempt.attemptedAt
}

// Endpoints a claim's walk visits at least (more for a larger batch): enough that endpoints only waiting
// for their retries rarely make a claim walk twice.
const WALK_STEPS = 64

/** How much of an answer is kept: its start, in bytes of the stored text (escapes included). */
export const RESPONSE_KEPT_BYTES = 1024
// Beyond this the answer is not read to its end: the connection is dropped instead.
const RESPONSE_DRAINED_BYTES = 64 * 1024

export function createWebhookDispatcher(options: DispatcherOptions) {
  const { db, clock, agent } = options
  const timeoutMs = options.timeoutMs ?? 15_000
  const concurrency = options.concurrency ?? 64
  const batchSize = options.batchSize ?? 200
  // Long enough for every call of a batch to time out once, queued behind the concurrency bound.
  const leaseMs = timeoutMs * (Math.ceil(batchSize / concurrency) + 1)
  const deadlines = deadlineSweeper(timeoutMs)

  /**
   * The insert is a plain one: ON CONFLICT DO NOTHING costs a speculative insertion per row (~4 µs per
   * delivery here). A delivery can exist before its event is fanned out only when an admin redelivered
   * an event still queued; then the unique key refuses the batch, it rolls back whole (its events stay
   * queued) and is done again skipping what exists.
   */
  async function fanOut(limit = 1_000): Promise<number> {
    try {
      return await fanOutOnce(limit, false)
    } catch (error) {
      if ((error as { code?: unknown }).code !== '23505') throw error
      return fanOutOnce(limit, true)
    }
  }

  function fanOutOnce(limit: number, skipExisting: boolean): Promise<number> {
    return db.transaction().execute(async (trx) => {
      const events = await takeEventsToFanOut(trx, limit)
      if (events.length === 0) return 0
      const storeIds = [...new Set(events.map((event) => event.store_id))]
      const endpoints = await trx
        .selectFrom('webhook_subscriptions')
        .select(['id', 'store_id', 'event_types'])
        .where('store_id', 'in', storeIds)
        .where('status', '=', 'enabled')
        .execute()
      const now = clock.now()
      // Column arrays, one parameter each: a multi-row VALUES would bind 11 parameters per row.
      const ids: string[] = [], stores: string[] = [], endpointIds: string[] = [], eventIds: string[] = [], types: string[] = [], entities: string[] = [], positions: number[] = []
      for (const event of events) {
        for (const endpoint of endpoints) {
          if (endpoint.store_id !== event.store_id || !endpoint.event_types.includes(event.event_type)) continue
          ids.push(newId('msg'))
          stores.push(event.store_id)
          endpointIds.push(endpoint.id)
          eventIds.push(event.id)
          types.push(event.event_type)
          entities.push(event.entity_id)
          positions.push(event.position)
        }
      }
      if (ids.length > 0) {
        await sql`
          INSERT INTO webhook_deliveries (id, store_id, webhook_subscription_id, event_id, event_type, entity_id, event_position, status, next_attempt_at, created_at, updated_at)
          SELECT r.id, r.store_id, r.endpoint_id, r.event_id, r.event_type, r.entity_id, r.position, 'pending', ${now}::timestamptz, ${storeClockOf('r.store_id', now)}, ${now}::timestamptz
            FROM unnest(${ids}::text[], ${stores}::text[], ${endpointIds}::text[], ${eventIds}::text[], ${types}::text[], ${entities}::text[], ${positions}::bigint[])
              AS r(id, store_id, endpoint_id, event_id, event_type, entity_id, position)
          ${skipExisting ? sql`ON CONFLICT DO NOTHING` : sql``}`.execute(trx)
      }
      return events.length
    })
  }

  /**
   * Fair across stores (issue 28): one endpoint's backlog, or an endpoint that does not answer, must not
   * hold back anyone else's deliveries. The claim walks the endpoints with pending deliveries in id order
   * from where the last claim stopped (a skip scan: one index probe per endpoint, whatever its backlog),
   * shares the batch among those with something due, and takes each one's oldest due deliveries, up to its
   * share and to what this dispatcher may still hold for it. The batch is sent round-robin by endpoint.
   */
  async function claim(limit: number): Promise<Claimed[]> {
    const now = clock.now()
    const claimed = await db.transaction().execute(async (trx) => {
      // Stale statistics (a fresh table, PGlite without autovacuum, or stats taken when nothing was pending)
      // make the planner sort an endpoint's pending rows per claim; the index order is right at any size.
      await sql`SET LOCAL enable_bitmapscan = off`.execute(trx)
      // On along the endpoints until one has something due, at most once round: a claim that found nothing
      // while work is due would stop a drain (and idle the loop) behind endpoints that only wait for retries.
      let due: { endpoint_id: string }[] = []
      for (let wrapped = walkCursor === ''; ; ) {
        const walked = await walkEndpoints(trx, now, Math.max(limit, WALK_STEPS))
        due = walked.filter((endpoint) => endpoint.due && (inHand.get(endpoint.endpoint_id) ?? 0) < perEndpoint)
        if (due.length > 0 || (walkCursor === '' && wrapped)) break
        if (walkCursor === '') wrapped = true
      }
      if (due.length === 0) return []
      // Shares that add up to the batch, so no endpoint's share is cut off by the batch's limit: with more
      // endpoints due than places, the first `limit` get one each and the next claim starts after the last.
      const base = Math.floor(limit / due.length)
      const given = due.map((endpoint, i) => ({ id: endpoint.endpoint_id, share: Math.min(base + (i < limit % due.length ? 1 : 0), perEndpoint - (inHand.get(endpoint.endpoint_id) ?? 0)) }))
      const served = given.filter((endpoint) => endpoint.share > 0)
      if (served.length === 0) return []
      if (served.length < given.length) walkCursor = served.at(-1)!.id
      const endpointIds = served.map((endpoint) => endpoint.id)
      const shares = served.map((endpoint) => endpoint.share)
      const { token, rows } = await claimLeased<Omit<Claimed, 'token'> & { failing_since: Date | null; due_at: Date }>(trx, LEASES.deliveries, {
        candidates: sql`
          SELECT p.id FROM unnest(${endpointIds}::text[], ${shares}::int[]) AS w(endpoint_id, share)
          CROSS JOIN LATERAL (
            SELECT d.id FROM webhook_deliveries d
             WHERE d.webhook_subscription_id = w.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= ${now}
               AND ${leaseFree(LEASES.deliveries, now, 'd')}
               -- The first pending of its entity to this endpoint (per-entity order). Not NOT EXISTS: the planner
               -- turns that into an anti-join reading the endpoint's whole backlog; this is one probe of the entity index.
               AND d.event_position = (
                 SELECT e.event_position FROM webhook_deliveries e
                  WHERE e.webhook_subscription_id = d.webhook_subscription_id AND e.entity_id = d.entity_id AND e.status = 'pending'
                  ORDER BY e.event_position LIMIT 1)
             ORDER BY d.next_attempt_at
             LIMIT w.share
             FOR UPDATE OF d SKIP LOCKED) p
          LIMIT ${limit}`,
        leaseMs,
        now,
        from: sql`events e, webhook_subscriptions w`,
        where: sql`e.id = t.event_id AND w.id = t.webhook_subscription_id`,
        returning: sql`t.id, t.attempts, t.event_id, t.webhook_subscription_id, e.payload, w.url, w.secret, w.previous_secret,
                       w.previous_secret_expires_at, w.status AS endpoint_status, w.failing_since, t.next_attempt_at AS due_at,
                       ${storeTestClockOf('t.store_id')} AS store_clock`,
      })
      for (const row of rows) if (row.failing_since !== null) failingKnown.add(row.webhook_subscription_id)
      return roundRobin(rows).map(({ failing_since: _, due_at: __, ...row }) => ({ ...row, token }))
    })
    for (const delivery of claimed) inHand.set(delivery.webhook_subscription_id, (inHand.get(delivery.webhook_subscription_id) ?? 0) + 1)
    return claimed
  }

  /**
   * Up to `steps` endpoints with pending deliveries, in id order after the cursor, each with whether it has
   * one due and free now. The cursor moves to the last one walked, or back to the start once the walk ran
   * out of endpoints: every endpoint with work comes round within (endpoints / steps) claims.
   */
  async function walkEndpoints(trx: Executor, now: Date, steps: number): Promise<{ endpoint_id: string; due: boolean }[]> {
    const next = (after: RawBuilder<unknown>) => sql`(
      SELECT d.webhook_subscription_id FROM webhook_deliveries d
       WHERE d.status = 'pending' AND d.webhook_subscription_id > ${after}
       ORDER BY d.webhook_subscription_id LIMIT 1)`
    const { rows } = await sql<{ endpoint_id: string; due: boolean }>`
      WITH RECURSIVE walk (endpoint_id, step) AS (
        SELECT ${next(sql`${walkCursor}`)}, 1
        UNION ALL
        SELECT ${next(sql`w.endpoint_id`)}, w.step + 1 FROM walk w WHERE w.endpoint_id IS NOT NULL AND w.step < ${steps}
      )
      -- Due: its oldest free pending delivery is due (in index order, past the ones in flight).
      SELECT w.endpoint_id, coalesce((
               SELECT d.next_attempt_at FROM webhook_deliveries d
                WHERE d.webhook_subscription_id = w.endpoint_id AND d.status = 'pending' AND ${leaseFree(LEASES.deliveries, now, 'd')}
                ORDER BY d.next_attempt_at LIMIT 1) <= ${now}, false) AS due
        FROM walk w WHERE w.endpoint_id IS NOT NULL
       ORDER BY w.step`.execute(trx)
    walkCursor = rows.length < steps ? '' : rows[rows.length - 1]!.endpoint_id
    return rows
  }
  // Where the next walk starts (shared by this dispatcher's lanes, so they take turns along the endpoints).
  let walkCursor = ''
  // Deliveries claimed and not yet recorded, by endpoint: an endpoint that is slow or hangs holds at most
  // `perEndpoint` of this dispatcher's calls, and every other endpoint's go on beside them.
  const inHand = new Map<string, number>()
  // One batch in flight and the next claimed (the dispatch loop's pipelining) still fit for a single endpoint.
  const perEndpoint = options.perEndpoint ?? concurrency + batchSize
  function handedBack(deliveries: readonly Claimed[]): void {
    for (const { webhook_subscription_id: id } of deliveries) {
      const left = (inHand.get(id) ?? 1) - 1
      if (left > 0) inHand.set(id, left)
      else inHand.delete(id)
    }
  }
  // Endpoints seen with failing_since set: only these need it cleared after a success.
  const failingKnown = new Set<string>()

  async function send(claimed: Claimed): Promise<Sent> {
    const attemptedAt = clock.now()
    if (claimed.endpoint_status !== 'enabled') {
      return { claimed, attemptedAt, latencyMs: 0, statusCode: null, error: NOT_SENT_ERROR, responseBody: null, signature: null, result: { kind: 'endpoint_disabled' } }
    }
    const secrets = [claimed.secret]
    if (claimed.previous_secret && claimed.previous_secret_expires_at && claimed.previous_secret_expires_at > attemptedAt) secrets.push(claimed.previous_secret)
    const signature = signatureHeader(secrets, claimed.event_id, attemptedAt, claimed.payload)
    const started = performance.now()
    // The whole call's bound (headersTimeout and bodyTimeout bound each wait): a signal the sweeper aborts.
    const call = deadlines.start()
    try {
      const response = await request(claimed.url, {
        method: 'POST',
        dispatcher: agent,
        headers: deliveryHeaders(claimed.event_id, attemptedAt, signature),
        body: claimed.payload,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: call.signal,
      })
      const responseBody = await readStart(response.body)
      const retryAfter = response.headers['retry-after']
      return {
        claimed,
        attemptedAt,
        latencyMs: Math.round(performance.now() - started),
        statusCode: response.statusCode,
        error: null,
        responseBody,
        signature,
        result: classifyAnswer(response.statusCode, Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, attemptedAt),
      }
    } catch (error) {
      return { claimed, attemptedAt, latencyMs: Math.round(performance.now() - started), statusCode: null, error: call.timedOut ? describeTimeout(timeoutMs) : describe(error, timeoutMs), responseBody: null, signature, result: { kind: 'failed' } }
    } finally {
      deadlines.end(call)
    }
  }

  async function record(sent: Sent[]): Promise<void> {
    if (sent.length === 0) return
    try {
      await recordTogether(sent)
      return
    } catch (error) {
      if (sent.length === 1) return unrecorded(sent[0]!, error)
    }
    // One attempt the database refuses fails the whole statement: alone, it holds back only itself.
    for (const attempt of sent) {
      try {
        await recordTogether([attempt])
      } catch (error) {
        unrecorded(attempt, error)
      }
    }
  }

  // Not the error's detail or the reply: either may hold what the receiver sent.
  function unrecorded(attempt: Sent, error: unknown): void {
    unrecordedAttempts += 1
    const { code, message } = error as { code?: unknown; message?: unknown }
    options.log?.warn(
      { deliveryId: attempt.claimed.id, webhookSubscriptionId: attempt.claimed.webhook_subscription_id, statusCode: attempt.statusCode, code, message, unrecordedAttempts },
      'webhook attempt not recorded; the delivery is sent again when its lease runs out',
    )
  }
  // Attempts this dispatcher could not record, so far: in each warning, for alerting on a rising count.
  let unrecordedAttempts = 0

  async function recordTogether(sent: Sent[]): Promise<void> {
    const now = clock.now()
    const inline = (attempt: Sent) => attempt.result.kind === 'delivered' && attempt.claimed.attempts === 0
    const succeeded = new Set(sent.filter((attempt) => attempt.result.kind === 'delivered').map((attempt) => attempt.claimed.webhook_subscription_id))
    // Forgotten only once this commits: a rolled-back record must still clear failing_since on retry.
    const recovered = [...succeeded].filter((id) => failingKnown.has(id))
    if (recovered.length === 0 && sent.every(inline)) {
      // The common case, one statement: first attempts that succeeded, kept on their delivery rows.
      const updated = await updateDeliveries(db, sent, now)
      // A stalled holder's success the lease's new holder overwrote: still an attempt, so it gets its row.
      const refused = sent.filter((attempt) => !updated.has(attempt.claimed.id))
      try {
        await insertAttempts(db, refused)
      } catch (error) {
        // Not thrown: the updates above are committed, and recording them again one by one would log these twice.
        for (const attempt of refused) unrecorded(attempt, error)
      }
      return
    }
    await db.transaction().execute(async (trx) => {
      const updated = await updateDeliveries(trx, sent, now)
      await insertAttempts(trx, sent.filter((attempt) => !inline(attempt) || !updated.has(attempt.claimed.id)))

      const gone = new Set(sent.filter((attempt) => attempt.result.kind === 'gone').map((attempt) => attempt.claimed.webhook_subscription_id))
      const failing = new Set(sent.filter((attempt) => attempt.result.kind === 'failed').map((attempt) => attempt.claimed.webhook_subscription_id).filter((id) => !succeeded.has(id)))
      if (recovered.length > 0) {
        await trx.updateTable('webhook_subscriptions').set({ failing_since: null }).where('id', 'in', recovered).where('failing_since', 'is not', null).execute()
      }
      if (failing.size > 0) {
        await trx.updateTable('webhook_subscriptions').set({ failing_since: now }).where('id', 'in', [...failing]).where('failing_since', 'is', null).execute()
        const disabled = await trx
          .updateTable('webhook_subscriptions')
          .set({ status: 'disabled', disabled_reason: `failing without a success for ${describeDuration(options.disableAfterMs)}`, updated_at: now })
          .where('id', 'in', [...failing])
          .where('status', '=', 'enabled')
          .where('failing_since', '<=', new Date(now.getTime() - options.disableAfterMs))
          .returning(['id', 'url'])
          .execute()
        for (const endpoint of disabled) options.log?.warn({ webhookSubscriptionId: endpoint.id }, 'webhook endpoint disabled: it kept failing')
      }
      if (gone.size > 0) {
        const disabled = await trx
          .updateTable('webhook_subscriptions')
          .set({ status: 'disabled', disabled_reason: 'the endpoint answered 410 Gone', updated_at: now })
          .where('id', 'in', [...gone])
          .where('status', '=', 'enabled')
          .returning('id')
          .execute()
        for (const endpoint of disabled) options.log?.warn({ webhookSubscriptionId: endpoint.id }, 'webhook endpoint disabled: it answered 410 Gone')
      }
    })
    for (const id of recovered) failingKnown.delete(id)
  }

  /**
   * Every delivery's new state, in one statement, only while the lease is ours: a dispatcher that stalled
   * past it must not undo a newer attempt. A first attempt that succeeded is kept on the row itself.
   * Answers the ids updated.
   */
  async function updateDeliveries(executor: Executor, sent: Sent[], now: Date): Promise<Set<string>> {
    // Column arrays, one parameter each (a VALUES list would bind ten per delivery).
    const n = sent.length
    const ids = new Array<string>(n), tokens = new Array<string>(n), statuses = new Array<string>(n), attemptCounts = new Array<number>(n)
    const nexts = new Array<string | null>(n), codes = new Array<number | null>(n), errors = new Array<string | null>(n)
    const delivered = new Array<string | null>(n), latencies = new Array<number | null>(n), bodies = new Array<string | null>(n)
    const sentAt = new Array<string | null>(n), signatures = new Array<string | null>(n)
    for (let i = 0; i < n; i++) {
      const attempt = sent[i]!
      const { claimed, result, statusCode } = attempt
      const attempts = claimed.attempts + 1
      ids[i] = claimed.id
      tokens[i] = claimed.token
      attemptCounts[i] = attempts
      codes[i] = statusCode
      if (result.kind === 'delivered') {
        const first = claimed.attempts === 0
        statuses[i] = 'succeeded'
        nexts[i] = null
        errors[i] = null
        delivered[i] = shownAt(attempt).toISOString()
        latencies[i] = first ? attempt.latencyMs : null
        bodies[i] = first ? attempt.responseBody : null
        sentAt[i] = first ? attempt.attemptedAt.toISOString() : null
        signatures[i] = first ? attempt.signature : null
      } else {
        const next = result.kind === 'failed' ? nextAttemptAt(attempts, options.retrySchedule, attempt.attemptedAt, result.retryAfterMs) : null
        statuses[i] = next ? 'pending' : 'failed'
        nexts[i] = next?.toISOString() ?? null
        errors[i] = attempt.error ?? (statusCode !== null ? `the endpoint answered ${statusCode}` : null)
        delivered[i] = null
        latencies[i] = null
        bodies[i] = null
        sentAt[i] = null
        signatures[i] = null
      }
    }
    const { rows } = await sql<{ id: string }>`
      UPDATE webhook_deliveries AS d
         SET status = v.status, attempts = v.attempts, next_attempt_at = v.next,
             last_status_code = v.code, last_error = v.error, delivered_at = v.delivered,
             delivered_latency_ms = v.latency, delivered_response_body = v.body, delivered_sent_at = v.sent_at, delivered_request_signature = v.signature,
             locked_until = NULL, lease_token = NULL, updated_at = ${now}
        FROM unnest(${ids}::text[], ${tokens}::text[], ${statuses}::text[], ${attemptCounts}::int[], ${nexts}::timestamptz[], ${codes}::int[],
                    ${errors}::text[], ${delivered}::timestamptz[], ${latencies}::int[], ${bodies}::text[],
                    ${sentAt}::timestamptz[], ${signatures}::text[])
          AS v(id, token, status, attempts, next, code, error, delivered, latency, body, sent_at, signature)
       WHERE d.id = v.id AND d.lease_token = v.token
         AND d.id = ANY(${ids}::text[]) -- else the planner may hash-join a scan of the whole table
   RETURNING d.id`.execute(executor)
    return new Set(rows.map((row) => row.id))
  }

  /**
   * Attempt rows. An endpoint deleted while its deliveries were in flight took them along (ON DELETE
   * CASCADE): their attempts have nothing to belong to and are dropped, as inserting them would fail
   * the whole record; FOR KEY SHARE keeps the rows found from being deleted before this commits.
   */
  async function insertAttempts(executor: Executor, sent: Sent[]): Promise<void> {
    if (sent.length === 0) return
    await sql`
      WITH v (delivery_id, attempted_at, status_code, latency_ms, error, response_body, sent_at, request_signature) AS (VALUES ${sql.join(sent.map((a) => sql`(${a.claimed.id}, ${shownAt(a).toISOString()}::timestamptz, ${a.statusCode}::int, ${a.latencyMs}::int, ${a.error}, ${a.responseBody}, ${a.signature === null ? null : a.attemptedAt.toISOString()}::timestamptz, ${a.signature})`))}),
           existing AS (SELECT id FROM webhook_deliveries WHERE id = ANY(${sent.map((attempt) => attempt.claimed.id)}::text[]) FOR KEY SHARE)
      INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error, response_body, sent_at, request_signature)
      SELECT v.delivery_id, v.attempted_at, v.status_code, v.latency_ms, v.error, v.response_body, v.sent_at, v.request_signature FROM v JOIN existing ON existing.id = v.delivery_id`.execute(executor)
  }

  return {
    fanOut,

    /** Claims up to one batch of due deliveries, sends them (bounded concurrency) and records the attempts. */
    async deliverDue(limit = batchSize): Promise<number> {
      const batch = await startDelivery(pLimit(concurrency), limit)
      await batch.done
      return batch.count
    },

    /**
     * A lane of its own for startDelivery: its calls in flight stay within the concurrency bound, whatever
     * number of batches send through it at once.
     */
    lane: (): Lane => pLimit(concurrency),
    startDelivery,
  }

  /**
   * Claims up to one batch and starts sending it through `lane`: answers once claimed, with `started`
   * (at most one round of calls, the concurrency bound, is left to begin) and `done` (all sent and
   * recorded; it does not reject, a failure to record is logged and the lease runs out). A dispatch
   * loop claims the next batch once this one has started, so the lane has calls queued while this
   * batch's last round is sent, answered and recorded, and while the next claim runs (claiming only
   * once the queue is empty measured slower). Per-entity order holds across batches in hand: a claimed
   * delivery stays pending until recorded, and the claim passes over any delivery with an earlier one
   * pending.
   */
  async function startDelivery(lane: Lane, limit = batchSize): Promise<Delivery> {
    const claimed = await claim(limit)
    if (claimed.length === 0) return { count: 0, started: Promise.resolve(), done: Promise.resolve() }
    // Slow receivers must not outlive the lease while this dispatcher lives: it is renewed meanwhile.
    const keeper = keepLeases(db, LEASES.deliveries, claimed[0]!.token, leaseMs, { now: () => clock.now(), ...(options.log ? { log: { warn: options.log.warn.bind(options.log) } } : {}) })
    keeper.add(claimed.map((delivery) => delivery.id))
    let toStart = claimed.length
    let lastRound!: () => void
    const started = new Promise<void>((resolve) => {
      lastRound = resolve
    })
    const begin = () => {
      if (--toStart <= concurrency) lastRound()
    }
    const sending = Promise.all(
      claimed.map((delivery) =>
        lane(async () => {
          begin()
          return keeper.lost(delivery.id) ? undefined : send(delivery)
        }),
      ),
    )
    const done = (async () => {
      let sent: (Sent | undefined)[]
      try {
        sent = await sending
      } finally {
        lastRound()
        await keeper.stop()
      }
      await record(sent.filter((attempt) => attempt !== undefined))
    })()
      .catch((error: unknown) => {
        // send() and record() do not throw; anything else leaves the leases to run out, and the batch is sent again.
        options.log?.warn({ err: error }, 'webhook batch not finished; its deliveries are sent again when their leases run out')
      })
      .finally(() => handedBack(claimed))
    return { count: claimed.length, started, done }
  }
}

/** What bounds a dispatcher's calls in flight (p-limit). */
export type Lane = ReturnType<typeof pLimit>

export interface Delivery {
  /** Deliveries claimed. */
  count: number
  /** At most one round of calls (the concurrency bound) is left to begin. */
  started: Promise<void>
  /** Every attempt sent and recorded; never rejects. */
  done: Promise<void>
}

export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>

/**
 * The first KiB of an answer, as printable text (NUL and bad UTF-8 escaped) of at most a KiB: escapes
 * that lengthen it cut it shorter. The rest is drained (keep-alive) or the connection dropped.
 */
async function readStart(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string | null> {
  const kept: Buffer[] = []
  let keptBytes = 0
  let total = 0
  for await (const chunk of body) {
    total += chunk.length
    if (keptBytes < RESPONSE_KEPT_BYTES) {
      const slice = chunk.subarray(0, RESPONSE_KEPT_BYTES - keptBytes)
      kept.push(slice)
      keptBytes += slice.length
    }
    if (total > RESPONSE_DRAINED_BYTES) {
      body.destroy()
      break
    }
  }
  return keptBytes === 0 ? null : printableTextWithin(Buffer.concat(kept), RESPONSE_KEPT_BYTES)
}

/** "5 days", "36 hours", "1 minute": the threshold as a disabled endpoint's reason states it. */
function describeDuration(ms: number): string {
  const units = [[86_400_000, 'day'], [3_600_000, 'hour'], [60_000, 'minute'], [1_000, 'second']] as const
  const [size, name] = units.find(([unit]) => ms >= unit && ms % unit === 0) ?? units.find(([unit]) => ms >= unit) ?? units[3]
  const count = Math.round((ms / size) * 10) / 10
  return `${count} ${name}${count === 1 ? '' : 's'}`
}

function describeTimeout(timeoutMs: number): string {
  return `no answer within ${timeoutMs / 1000} s`
}

function describe(error: unknown, timeoutMs: number): string {
  const err = error as { name?: string; code?: string; message?: string }
  if (err.name === 'TimeoutError' || err.code === 'UND_ERR_HEADERS_TIMEOUT' || err.code === 'UND_ERR_BODY_TIMEOUT') return describeTimeout(timeoutMs)
  return [err.code, err.message].filter(Boolean).join(': ') || 'the request failed'
}

interface Call {
  /** What undici listens on for 'abort' (an EventEmitter: request() takes one as its signal). */
  signal: EventEmitter
  deadline: number
  timedOut: boolean
}

/**
 * Bounds each call's whole time without a timer per call: AbortSignal.timeout's timers outlive the
 * calls (each fires later, building a DOMException, for a call long finished). One sweep per tenth of
 * the timeout aborts the calls past their deadline, so a call ends between 1 and 1.1 timeouts.
 */
function deadlineSweeper(timeoutMs: number) {
  const calls = new Set<Call>()
  const everyMs = Math.max(5, Math.min(1_000, Math.floor(timeoutMs / 10)))
  let timer: NodeJS.Timeout | undefined
  const sweep = () => {
    const at = performance.now()
    for (const call of calls) {
      if (call.deadline > at) continue
      calls.delete(call)
      call.timedOut = true
      call.signal.emit('abort')
    }
    if (calls.size === 0) {
      clearInterval(timer)
      timer = undefined
    }
  }
  return {
    start(): Call {
      const call: Call = { signal: new EventEmitter(), deadline: performance.now() + timeoutMs, timedOut: false }
      calls.add(call)
      if (timer === undefined) {
        timer = setInterval(sweep, everyMs)
        timer.unref()
      }
      return call
    },
    end(call: Call): void {
      calls.delete(call)
    },
  }
}

/** A batch in the order its calls start: each endpoint's oldest first, one endpoint after another in turn. */
function roundRobin<R extends { webhook_subscription_id: string; due_at: Date }>(rows: R[]): R[] {
  const byEndpoint = new Map<string, R[]>()
  for (const row of [...rows].sort((a, b) => a.due_at.getTime() - b.due_at.getTime())) {
    const queue = byEndpoint.get(row.webhook_subscription_id)
    if (queue) queue.push(row)
    else byEndpoint.set(row.webhook_subscription_id, [row])
  }
  const queues = [...byEndpoint.values()]
  const ordered: R[] = []
  for (let round = 0; ordered.length < rows.length; round++) for (const queue of queues) if (round < queue.length) ordered.push(queue[round]!)
  return ordered
}
