import { sql } from 'kysely'
import type { ChangeFeed, WatchedTable } from '../../db/change-feed.ts'
import type { Db, StoreRow } from '../../db/database.ts'
import { findActiveKeyByHash, findStoreById, findStoreByIdUnless } from './stores.repository.ts'

/**
 * What every authenticated request used to ask the database before its own query: the store, and
 * that the portal session was not signed out (or that the admin key is still active). Kept in
 * process and forgotten as the change feed reports changes (src/db/change-feed.ts):
 *
 * - this process's own writes are forgotten as soon as the statement has run, and nothing of that
 *   table is cached for LOCAL_WRITE_QUIET_MS after (the write may commit later, in a transaction);
 * - other processes' at their commit, as soon as PostgreSQL's notification arrives (milliseconds);
 * - while that notification channel is not connected nothing is answered from memory;
 * - and nothing is kept longer than ENTRY_TTL_MS even so (docs/contract.md, "Sign-out and caches").
 *
 * Only positive answers are kept: an unknown key, a revoked session or a missing store is asked
 * again every time, so guessing cannot fill memory. Cached store rows are frozen and shared.
 */
export const ENTRY_TTL_MS = 60_000
/** After this process writes a table, nothing of it is cached for this long (see the constructor). */
export const LOCAL_WRITE_QUIET_MS = 2_000
const MAX_STORES = 10_000
const MAX_KEYS = 10_000
const MAX_SESSIONS = 100_000

interface Entry<V> {
  value: V
  expiresAt: number
}

/** A bounded map whose entries are forgotten when the feed says their table (or row) changed. */
class ChangeAwareCache<V> {
  private readonly entries = new Map<string, Entry<V>>()
  /** Bumped on every change: a value loaded across a change is not kept (it may predate it). */
  private generation = 0
  private quietUntil = 0
  private readonly feed: ChangeFeed
  private readonly maxEntries: number
  private readonly now: () => number
  readonly unsubscribe: () => void

  constructor(feed: ChangeFeed, table: WatchedTable, maxEntries: number, now: () => number) {
    this.feed = feed
    this.maxEntries = maxEntries
    this.now = now
    this.unsubscribe = feed.onChange((change) => {
      if ('reset' in change) this.entries.clear()
      else if (change.table !== table) return
      else if (change.key === null) this.entries.clear()
      else this.entries.delete(change.key)
      // This process's write may sit in a transaction that commits later: what another request reads
      // meanwhile is the old row, so nothing is kept for a while (its commit notifies as well).
      if ('local' in change) this.quietUntil = this.now() + LOCAL_WRITE_QUIET_MS
      this.generation += 1
    })
  }

  get(key: string): V | undefined {
    if (!this.feed.live) return undefined
    const entry = this.entries.get(key)
    if (!entry) return undefined
    if (entry.expiresAt > this.now()) return entry.value
    this.entries.delete(key)
    return undefined
  }

  /** Taken before loading; `set` keeps the value only if nothing changed since and the feed is live. */
  ticket(): number {
    return this.feed.live ? this.generation : -1
  }

  set(ticket: number, key: string, value: V, ttlMs = ENTRY_TTL_MS): void {
    if (ticket !== this.generation || !this.feed.live || ttlMs <= 0 || this.now() < this.quietUntil) return
    if (this.entries.size >= this.maxEntries && !this.entries.has(key)) {
      // The oldest insertion goes first (a Map iterates in insertion order).
      this.entries.delete(this.entries.keys().next().value!)
    }
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs })
  }
}

export type AuthCache = ReturnType<typeof createAuthCache>

export function createAuthCache({ db, changes, now = Date.now }: { db: Db; changes: ChangeFeed; now?: () => number }) {
  const stores = new ChangeAwareCache<StoreRow>(changes, 'stores', MAX_STORES, now)
  const keys = new ChangeAwareCache<{ keyId: string; storeId: string }>(changes, 'admin_api_keys', MAX_KEYS, now)
  const liveSessions = new ChangeAwareCache<true>(changes, 'revoked_sessions', MAX_SESSIONS, now)

  return {
    /** The session's store, unless the store is gone or the session (`jti`, valid until `exp` seconds) was signed out. */
    async portalStore(storeId: string, jti: string, exp: number): Promise<StoreRow | undefined> {
      const cached = stores.get(storeId)
      if (cached && liveSessions.get(jti)) return cached
      const storeTicket = stores.ticket()
      const sessionTicket = liveSessions.ticket()
      // One query answers both "does the store exist" and "was this session signed out".
      const row = await findStoreByIdUnless(db, storeId, sql<boolean>`EXISTS (SELECT 1 FROM revoked_sessions WHERE jti = ${jti})`)
      if (!row) return undefined
      const store = deepFreeze(row)
      stores.set(storeTicket, storeId, store)
      liveSessions.set(sessionTicket, jti, true, Math.min(ENTRY_TTL_MS, exp * 1000 - now()))
      return store
    },

    /** The active admin key with this hash, and its store. */
    async adminKey(keyHash: string): Promise<{ keyId: string; store: StoreRow } | undefined> {
      const key = keys.get(keyHash)
      const cached = key && stores.get(key.storeId)
      if (key && cached) return { keyId: key.keyId, store: cached }
      const keyTicket = keys.ticket()
      const storeTicket = stores.ticket()
      const found = await findActiveKeyByHash(db, keyHash)
      if (!found) return undefined
      const store = deepFreeze(found.store)
      keys.set(keyTicket, keyHash, { keyId: found.keyId, storeId: store.id })
      stores.set(storeTicket, store.id, store)
      return { keyId: found.keyId, store }
    },

    async store(storeId: string): Promise<StoreRow | undefined> {
      const cached = stores.get(storeId)
      if (cached) return cached
      const ticket = stores.ticket()
      const row = await findStoreById(db, storeId)
      if (!row) return undefined
      const store = deepFreeze(row)
      stores.set(ticket, storeId, store)
      return store
    },

    close(): void {
      stores.unsubscribe()
      keys.unsubscribe()
      liveSessions.unsubscribe()
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
