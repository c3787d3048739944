import { sql } from 'kysely'
import type { Db, SubscriptionRow } from '../../db/database.ts'
import { listSubscriptions } from './subscriptions.repository.ts'

/**
 * First pages of subscription lists (the portal's "my subscriptions", the admin's unfiltered list)
 * read at the same moment share database round trips, as DataLoader batches reads.
 *
 * Why: per request, the round trip costs more Node CPU than everything else the route does (the
 * driver's socket write and read, the protocol, the plan; BENCHMARKS.md, Portal), and under load
 * hundreds of such reads wait at once. Reads asked for during one turn of the event loop are sent
 * together when it ends (setImmediate): identical ones (same store, subscriber and page size) share
 * one answer, different ones one statement (`unnest ... CROSS JOIN LATERAL`, each key its own
 * index-ordered `LIMIT`). Every read is sent after it was asked for, so it sees every write committed
 * before its request arrived, as an unbatched read would. Rows of one key are never given to another:
 * each row carries the position of the key that selected it.
 */
export interface FirstPageKey {
  storeId: string
  /** One subscriber's subscriptions, or null for the whole store's. */
  subscriberId: string | null
  /** The page size; the read fetches one more row to tell whether more exist. */
  limit: number
}

interface Waiting {
  key: FirstPageKey
  waiters: Array<{ resolve: (rows: SubscriptionRow[]) => void; reject: (error: unknown) => void }>
}

export type FirstPageBatcher = ReturnType<typeof createFirstPageBatcher>

export function createFirstPageBatcher(db: Db) {
  let pending: Map<string, Waiting> | undefined
  /** Statements sent and reads answered: for tests and benchmarks. */
  const stats = { statements: 0, reads: 0 }

  async function flush(batch: Map<string, Waiting>): Promise<void> {
    const entries = [...batch.values()]
    const ofSubscriber = entries.filter((entry) => entry.key.subscriberId !== null)
    const ofStore = entries.filter((entry) => entry.key.subscriberId === null)
    await Promise.all([answer(ofSubscriber), answer(ofStore)])
  }

  async function answer(entries: Waiting[]): Promise<void> {
    if (entries.length === 0) return
    let results: SubscriptionRow[][]
    try {
      results = await readAll(entries.map((entry) => entry.key))
    } catch (error) {
      for (const entry of entries) for (const waiter of entry.waiters) waiter.reject(error)
      return
    }
    entries.forEach((entry, i) => {
      for (const waiter of entry.waiters) waiter.resolve(results[i]!)
    })
  }

  async function readAll(keys: FirstPageKey[]): Promise<SubscriptionRow[][]> {
    stats.statements += 1
    if (keys.length === 1) {
      const [key] = keys as [FirstPageKey]
      return [await listSubscriptions(db, key.storeId, { limit: key.limit, subscriberId: key.subscriberId ?? undefined })]
    }
    const storeIds = keys.map((key) => key.storeId)
    const limits = keys.map((key) => key.limit + 1)
    const { rows } = keys[0]!.subscriberId !== null
      ? await sql<SubscriptionRow & { batch_position: number }>`
          SELECT k.batch_position, s.*
          FROM unnest(${storeIds}::text[], ${keys.map((key) => key.subscriberId)}::text[], ${limits}::int[]) WITH ORDINALITY AS k(store_id, subscriber_id, lim, batch_position)
          CROSS JOIN LATERAL (
            SELECT * FROM subscriptions WHERE store_id = k.store_id AND subscriber_id = k.subscriber_id ORDER BY id DESC LIMIT k.lim
          ) s
          ORDER BY k.batch_position, s.id DESC`.execute(db)
      : await sql<SubscriptionRow & { batch_position: number }>`
          SELECT k.batch_position, s.*
          FROM unnest(${storeIds}::text[], ${limits}::int[]) WITH ORDINALITY AS k(store_id, lim, batch_position)
          CROSS JOIN LATERAL (
            SELECT * FROM subscriptions WHERE store_id = k.store_id ORDER BY id DESC LIMIT k.lim
          ) s
          ORDER BY k.batch_position, s.id DESC`.execute(db)
    // In key order, newest first within each key (as the unbatched read orders them). The position
    // stays on the row rather than being copied away (52 columns a row): no view presents it.
    const results: SubscriptionRow[][] = keys.map(() => [])
    for (const row of rows) results[row.batch_position - 1]!.push(row)
    return results
  }

  return {
    stats,
    /** Rows of the key's first page (`limit + 1` at most, newest first), read together with the other keys of this turn. */
    read(key: FirstPageKey): Promise<SubscriptionRow[]> {
      stats.reads += 1
      // No subscriber has an empty id; read unbatched it would mean "no filter", so never ask.
      if (key.subscriberId === '') return Promise.resolve([])
      if (!pending) {
        const batch = new Map<string, Waiting>()
        pending = batch
        setImmediate(() => {
          pending = undefined
          void flush(batch)
        })
      }
      const id = `${key.storeId}\u0000${key.subscriberId === null ? '*' : `=${key.subscriberId}`}\u0000${key.limit}`
      let entry = pending.get(id)
      if (!entry) pending.set(id, (entry = { key, waiters: [] }))
      const waiting = entry
      return new Promise((resolve, reject) => waiting.waiters.push({ resolve, reject }))
    },
  }
}
