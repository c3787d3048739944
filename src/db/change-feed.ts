import type { KyselyPlugin, OperationNode, PluginTransformQueryArgs, PluginTransformResultArgs, QueryId, QueryResult, RootOperationNode, UnknownRow } from 'kysely'
import pg from 'pg'

/**
 * Which rows of the tables that authenticate requests changed, so per-process caches of them
 * (src/http/auth-cache.ts) can forget what is no longer true. Two sources:
 *
 * - This process's own writes, seen by a Kysely plugin the moment each statement has run: a change
 *   made and awaited here is never read back stale here (tests rely on it, and so do the routes
 *   that change a store and answer with it).
 * - Every process's committed writes, from PostgreSQL's `LISTEN cache_invalidation` (triggers of
 *   migration 0015 send `table:key` at commit). The embedded database is one process, whose
 *   transactions hold its only connection until they end, so its own writes are all there is.
 *
 * `live` says whether both are being heard. While a PostgreSQL listener is down (never connected,
 * dropped, reconnecting), caches must not answer from memory; every listener is told `reset` when
 * hearing stops or starts again, since notifications may have been missed in between.
 */
export const CACHE_INVALIDATION_CHANNEL = 'cache_invalidation'

export type WatchedTable = 'stores' | 'admin_api_keys' | 'revoked_sessions'
const WATCHED: ReadonlySet<string> = new Set<WatchedTable>(['stores', 'admin_api_keys', 'revoked_sessions'])

/** A row of `table` changed: the one whose key is given, or any (`key` null: this process's own write). */
export type Change = { table: WatchedTable; key: string | null } | { reset: true }

export interface ChangeFeed {
  readonly live: boolean
  onChange(listener: (change: Change) => void): () => void
  close(): Promise<void>
}

class Listeners {
  private readonly listeners = new Set<(change: Change) => void>()
  add(listener: (change: Change) => void, onFirst?: () => void): () => void {
    this.listeners.add(listener)
    if (this.listeners.size === 1) onFirst?.()
    return () => void this.listeners.delete(listener)
  }
  emit(change: Change): void {
    for (const listener of this.listeners) listener(change)
  }
}

/** Tells `listeners` about each statement of this process that wrote a watched table, once it has run. */
export class LocalWritesPlugin implements KyselyPlugin {
  private readonly pending = new WeakMap<QueryId, WatchedTable>()
  private readonly onWrite: (table: WatchedTable) => void
  constructor(onWrite: (table: WatchedTable) => void) {
    this.onWrite = onWrite
  }

  transformQuery({ node, queryId }: PluginTransformQueryArgs): RootOperationNode {
    const table = writtenTable(node)
    if (table) this.pending.set(queryId, table)
    return node
  }

  async transformResult({ result, queryId }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const table = this.pending.get(queryId)
    if (table) {
      this.pending.delete(queryId)
      this.onWrite(table)
    }
    return result
  }
}

function writtenTable(node: RootOperationNode): WatchedTable | undefined {
  const target: OperationNode | undefined =
    node.kind === 'UpdateQueryNode' ? node.table : node.kind === 'InsertQueryNode' ? node.into : node.kind === 'DeleteQueryNode' ? node.from.froms[0] : undefined
  const name = target ? tableName(target) : undefined
  return name && WATCHED.has(name) ? (name as WatchedTable) : undefined
}

function tableName(node: OperationNode): string | undefined {
  const named = node as { kind: string; node?: OperationNode; table?: { identifier?: { name?: string } } }
  if (named.kind === 'AliasNode' && named.node) return tableName(named.node)
  return named.kind === 'TableNode' ? named.table?.identifier?.name : undefined
}

/** The embedded database: one process, so its own writes are every write. */
export function embeddedChangeFeed(): { feed: ChangeFeed; plugin: KyselyPlugin } {
  const listeners = new Listeners()
  return {
    plugin: new LocalWritesPlugin((table) => listeners.emit({ table, key: null })),
    feed: { live: true, onChange: (listener) => listeners.add(listener), close: async () => {} },
  }
}

const RECONNECT_MIN_MS = 250
const RECONNECT_MAX_MS = 10_000

/**
 * PostgreSQL: this process's writes, and everyone's through a connection of its own (outside the
 * pool) that LISTENs from the first subscriber on, reconnecting with backoff while the server is away.
 */
export function postgresChangeFeed(connectionString: string, onError?: (error: Error) => void): { feed: ChangeFeed; plugin: KyselyPlugin } {
  const listeners = new Listeners()
  let live = false
  let closed = false
  let client: pg.Client | undefined
  let retryTimer: NodeJS.Timeout | undefined
  let delay = RECONNECT_MIN_MS

  const lost = (error?: Error) => {
    if (error) onError?.(error)
    const wasLive = live
    live = false
    if (wasLive) listeners.emit({ reset: true })
    const dead = client
    client = undefined
    dead?.removeAllListeners()
    dead?.on('error', () => {})
    void dead?.end().catch(() => {})
    if (!closed && !retryTimer) {
      retryTimer = setTimeout(() => {
        retryTimer = undefined
        void listen()
      }, delay)
      retryTimer.unref()
      delay = Math.min(delay * 2, RECONNECT_MAX_MS)
    }
  }

  const listen = async () => {
    if (closed || client) return
    const connection = new pg.Client({ connectionString })
    client = connection
    connection.on('error', (error) => lost(error))
    connection.on('end', () => client === connection && lost())
    connection.on('notification', ({ channel, payload }) => {
      if (channel !== CACHE_INVALIDATION_CHANNEL || !payload) return
      const colon = payload.indexOf(':')
      const table = payload.slice(0, colon)
      if (WATCHED.has(table)) listeners.emit({ table: table as WatchedTable, key: payload.slice(colon + 1) })
    })
    try {
      await connection.connect()
      await connection.query(`LISTEN ${CACHE_INVALIDATION_CHANNEL}`)
      if (client !== connection || closed) return void connection.end().catch(() => {})
      delay = RECONNECT_MIN_MS
      live = true
      // Anything cached while nobody listened is forgotten before the cache is trusted again.
      listeners.emit({ reset: true })
    } catch (error) {
      if (client === connection) lost(error as Error)
    }
  }

  return {
    plugin: new LocalWritesPlugin((table) => listeners.emit({ table, key: null })),
    feed: {
      get live() {
        return live
      },
      onChange: (listener) => listeners.add(listener, () => void listen()),
      close: async () => {
        closed = true
        live = false
        clearTimeout(retryTimer)
        const open = client
        client = undefined
        if (open) {
          open.removeAllListeners()
          open.on('error', () => {})
          await open.end().catch(() => {})
        }
      },
    },
  }
}
