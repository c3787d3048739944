import DataLoader from 'dataloader'
import { sql } from 'kysely'
import { LRUCache } from 'lru-cache'
import type { Db, StoreRow } from '../../db/database.ts'
import type { AdminKeyScope } from './stores.tables.ts'
import { findActiveKeysByHash, type ActiveKey, findStoreById, findStoreByIdUnless } from './stores.repository.ts'

/**
 * What every authenticated request would otherwise ask the database before its own query: the store,
 * and that the portal session was not signed out (or that the admin key is still active). Kept in
 * process for a short while (docs/contract.md, "Sign-out and caches"):
 *
 * - another process's change (or one made straight in the database) is seen within 1 s, because no
 *   answer is kept longer than ENTRY_TTL_MS counted from when the query that read it was sent;
 * - this process's own changes are seen by its next request, because the code that writes calls
 *   `forgetStore`, `forgetKey` or `forgetSession` once its write has committed.
 *
 * A read that was under way when something was forgotten is not kept (it may predate the change):
 * every forget moves `generation` on, and a read keeps its answer only if the generation it started
 * in is still current. Only positive answers are kept: an unknown key, a signed-out session or a
 * missing store is asked again every time, so guessing cannot fill memory.
 */
export const ENTRY_TTL_MS = 900
const MAX_STORES = 10_000
const MAX_KEYS = 10_000
const MAX_SESSIONS = 100_000
// One statement asks about at most this many sessions or keys.
const MAX_SESSION_BATCH = 500

/** A time source in milliseconds (lru-cache's `perf`): `performance` by default, a fake in tests. */
export interface CacheTime {
  now(): number
}

/** What the code that writes stores, admin keys or revocations calls after its write has committed. */
export interface AuthCacheInvalidation {
  forgetStore(storeId: string): void
  forgetKey(keyHash: string): void
  forgetSession(jti: string): void
}

export type AuthCache = ReturnType<typeof createAuthCache>

export function createAuthCache({ db, time = performance, ttlMs = ENTRY_TTL_MS }: { db: Db; time?: CacheTime; ttlMs?: number }) {
  // ttlResolution 0: read the time on every check, so an injected clock is obeyed at once.
  const lru = <V extends object>(max: number) => new LRUCache<string, V>({ max, ttl: ttlMs, ttlResolution: 0, perf: time })
  const stores = lru<StoreRow>(MAX_STORES)
  const keys = lru<{ keyId: string; keyName: string; scope: AdminKeyScope; storeId: string }>(MAX_KEYS)
  const liveSessions = lru<{ live: true }>(MAX_SESSIONS)
  const LIVE = Object.freeze({ live: true as const })
  let generation = 0
  /**
   * Which of the sessions asked about during one turn of the event loop were signed out: one query
   * for all of them. A session's entry lives under a second, so with many subscribers most requests
   * ask; one round trip each would cost more than the rest of the request (BENCHMARKS.md, issue 23).
   * No DataLoader cache: every load is asked of the database after it was made.
   */
  const revocations = new DataLoader<string, boolean>(async (jtis) => {
    const rows = await db.selectFrom('revoked_sessions').select('jti').where('jti', 'in', jtis).execute()
    const revoked = new Set(rows.map((row) => row.jti))
    return jtis.map((jti) => revoked.has(jti))
  }, { cache: false, maxBatchSize: MAX_SESSION_BATCH, batchScheduleFn: (dispatch) => setImmediate(dispatch) })
  /** The same for admin keys: the keys asked about during one turn, with their stores, in one query. */
  const activeKeys = new DataLoader<string, ActiveKey | undefined>(async (hashes) => {
    const found = await findActiveKeysByHash(db, hashes)
    return hashes.map((hash) => found.get(hash))
  }, { cache: false, maxBatchSize: MAX_SESSION_BATCH, batchScheduleFn: (dispatch) => setImmediate(dispatch) })

  /** Taken before a read: the answer is kept, aged from this moment, unless something was forgotten meanwhile. */
  function ticket() {
    const started = { generation, start: time.now() }
    return {
      keep<V extends object>(cache: LRUCache<string, V>, key: string, value: V): void {
        if (started.generation === generation) cache.set(key, value, { start: started.start })
      },
    }
  }

  return {
    /** The session's store, unless the store is gone or the session (`jti`) was signed out. */
    async portalStore(storeId: string, jti: string): Promise<StoreRow | undefined> {
      const cached = stores.get(storeId)
      if (cached && liveSessions.get(jti)) return cached
      const read = ticket()
      if (cached) {
        // Many sessions share one store: usually only the session needs asking about, batched.
        if (await revocations.load(jti)) return undefined
        read.keep(liveSessions, jti, LIVE)
        return cached
      }
      // One query answers both "does the store exist" and "was this session signed out".
      const row = await findStoreByIdUnless(db, storeId, sql<boolean>`EXISTS (SELECT 1 FROM revoked_sessions WHERE jti = ${jti})`)
      if (!row) return undefined
      const store = deepFreeze(row)
      read.keep(stores, storeId, store)
      read.keep(liveSessions, jti, LIVE)
      return store
    },

    /**
     * The console session's store while the session is good: its row (console_sessions) not ended
     * (signed out, store disconnected or uninstalled); its lifetime is the token's, checked against the
     * service's clock before this is asked. Never answered from memory: console
     * requests are few (a merchant's clicks), and one query makes an end count at once on every process.
     */
    async consoleStore(storeId: string, jti: string): Promise<StoreRow | undefined> {
      const row = await findStoreByIdUnless(db, storeId, sql<boolean>`NOT EXISTS (SELECT 1 FROM console_sessions WHERE jti = ${jti} AND store_id = ${storeId} AND ended_at IS NULL)`)
      return row ? deepFreeze(row) : undefined
    },

    /** The active admin key with this hash, and its store. */
    async adminKey(keyHash: string): Promise<{ keyId: string; keyName: string; scope: AdminKeyScope; store: StoreRow } | undefined> {
      const key = keys.get(keyHash)
      const cached = key && stores.get(key.storeId)
      if (key && cached) return { keyId: key.keyId, keyName: key.keyName, scope: key.scope, store: cached }
      const read = ticket()
      const found = await activeKeys.load(keyHash)
      if (!found) return undefined
      const store = deepFreeze(found.store)
      read.keep(keys, keyHash, { keyId: found.keyId, keyName: found.keyName, scope: found.scope, storeId: store.id })
      read.keep(stores, store.id, store)
      return { keyId: found.keyId, keyName: found.keyName, scope: found.scope, store }
    },

    async store(storeId: string): Promise<StoreRow | undefined> {
      const cached = stores.get(storeId)
      if (cached) return cached
      const read = ticket()
      const row = await findStoreById(db, storeId)
      if (!row) return undefined
      const store = deepFreeze(row)
      read.keep(stores, storeId, store)
      return store
    },

    forgetStore(storeId: string): void {
      generation += 1
      stores.delete(storeId)
    },

    forgetKey(keyHash: string): void {
      generation += 1
      keys.delete(keyHash)
    },

    forgetSession(jti: string): void {
      generation += 1
      liveSessions.delete(jti)
    },
  }
}

/** Shared between requests, so nothing may change one in place (a change would leak to other requests). */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value) && !(value instanceof Date)) {
    for (const inner of Object.values(value)) deepFreeze(inner)
    Object.freeze(value)
  }
  return value
}
