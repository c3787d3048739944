import { setTimeout as sleep } from 'node:timers/promises'
import type { Db, StoreRow } from '../../src/db/database.ts'
import { PLATFORM_ORDERS } from '../../src/http/actors.ts'
import { newId } from '../../src/lib/ids.ts'
import { createEventsModule, type NewEvent } from '../../src/modules/events/index.ts'
import type { WebhookDispatcher } from '../../src/modules/webhooks/index.ts'
import { now } from './webhook-receivers.ts'

/** event id -> when its transaction's commit returned (epoch ms, this process's clock) */
export type CommitTimes = Map<string, number>

/**
 * Events as a checkout writes them: `subscription.created` then `subscription.activated` for each new
 * subscription, through the outbox writer the service uses, with `template` (a real subscription's API
 * view) as the payload's data so bodies have the service's size.
 */
function eventsFor(store: StoreRow, template: Record<string, unknown>, count: number, at: Date): NewEvent[] {
  const events: NewEvent[] = []
  while (events.length < count) {
    const data = { ...template, id: newId('sub'), object: 'subscription', platform_order_id: `bench-${events.length}-${Math.random().toString(36).slice(2, 10)}` }
    events.push({ storeId: store.id, eventType: 'subscription.created', occurredAt: at, data, actor: PLATFORM_ORDERS })
    if (events.length < count) events.push({ storeId: store.id, eventType: 'subscription.activated', occurredAt: at, data: { ...data, status: 'active' }, actor: PLATFORM_ORDERS })
  }
  return events
}

async function commitEvents(db: Db, events: NewEvent[], commits: CommitTimes): Promise<void> {
  const log = createEventsModule({ db }).service.log
  const recorded = await db.transaction().execute((trx) => log.recordOfNewEntities(trx, events))
  const at = now()
  for (const event of recorded) commits.set(event.id, at)
}

/** `count` events committed up front, `perTransaction` at a time: the backlog a dispatcher drains. */
export async function insertBacklog(db: Db, store: StoreRow, template: Record<string, unknown>, count: number, perTransaction = 1_000): Promise<CommitTimes> {
  const commits: CommitTimes = new Map()
  for (let done = 0; done < count; done += perTransaction) {
    await commitEvents(db, eventsFor(store, template, Math.min(perTransaction, count - done), new Date()), commits)
  }
  return commits
}

export interface SteadyRun {
  commits: CommitTimes
  seconds: number
  /** Ticks whose transaction started more than one tick late (the producer could not keep the rate). */
  lateTicks: number
}

/**
 * Events at a steady rate while the dispatcher runs: every `tickMs` a transaction of rate x tick
 * events, started on schedule whether or not earlier ones have committed (at most 32 in flight).
 */
export async function produceSteady(db: Db, store: StoreRow, template: Record<string, unknown>, ratePerSecond: number, seconds: number, tickMs = 20): Promise<SteadyRun> {
  const commits: CommitTimes = new Map()
  const ticks = Math.round((seconds * 1000) / tickMs)
  const perTick = Math.max(1, Math.round((ratePerSecond * tickMs) / 1000))
  const inFlight = new Set<Promise<void>>()
  let lateTicks = 0
  const started = performance.now()
  for (let tick = 0; tick < ticks; tick++) {
    const due = started + tick * tickMs
    const wait = due - performance.now()
    if (wait > 0) await sleep(wait)
    else if (-wait > tickMs) lateTicks++
    while (inFlight.size >= 32) await Promise.race(inFlight)
    const pending = commitEvents(db, eventsFor(store, template, perTick, new Date()), commits).finally(() => inFlight.delete(pending))
    inFlight.add(pending)
  }
  await Promise.all(inFlight)
  return { commits, seconds: (performance.now() - started) / 1000, lateTicks }
}

export interface PassStats {
  fanOut: { passes: number; busy: number; events: number; ms: number }
  deliverDue: { passes: number; busy: number; deliveries: number; ms: number }
}

/** The dispatcher with each fanOut() and deliverDue() pass timed and counted. */
export function timedDispatcher(dispatcher: WebhookDispatcher): { dispatcher: WebhookDispatcher; stats: PassStats } {
  const stats: PassStats = { fanOut: { passes: 0, busy: 0, events: 0, ms: 0 }, deliverDue: { passes: 0, busy: 0, deliveries: 0, ms: 0 } }
  return {
    stats,
    dispatcher: {
      fanOut: timedPass((limit) => dispatcher.fanOut(limit), stats.fanOut, 'events'),
      deliverDue: timedPass((limit) => dispatcher.deliverDue(limit), stats.deliverDue, 'deliveries'),
      lane: () => dispatcher.lane(),
      // A pipelined pass (startDispatchLoop): timed from its claim to its record, batches overlapping.
      startDelivery: async (lane, limit) => {
        const started = performance.now()
        const batch = await dispatcher.startDelivery(lane, limit)
        stats.deliverDue.passes++
        if (batch.count === 0) return batch
        return {
          ...batch,
          done: batch.done.then(() => {
            stats.deliverDue.busy++
            stats.deliverDue.deliveries += batch.count
            stats.deliverDue.ms += performance.now() - started
          }),
        }
      },
    },
  }
}

/** `pass` counted in `stats`: every call in `passes`; a call that did work in `busy`, its time in `ms` and its count in `stats[done]`. */
function timedPass<K extends string>(pass: (limit?: number) => Promise<number>, stats: Record<'passes' | 'busy' | 'ms' | K, number>, done: K): (limit?: number) => Promise<number> {
  return async (limit?: number) => {
    const started = performance.now()
    const count = await pass(limit)
    stats.passes++
    if (count > 0) {
      stats.busy++
      stats[done] += count
      stats.ms += performance.now() - started
    }
    return count
  }
}
