import type { KyselyPlugin, OperationNode, PluginTransformQueryArgs, PluginTransformResultArgs, QueryId, QueryResult, RootOperationNode, UnknownRow } from 'kysely'
import { randomBytes } from 'node:crypto'
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

/** A row of `table` changed: the one whose key is given, or any (`key` null: this process's own write, or a TRUNCATE). `local` marks this process's own writes. */
export type Change = { table: WatchedTable; key: string | null; local?: true } | { reset: true }

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

/**
 * Tells `listeners` about each statement of this process that wrote a watched table, once it has run:
 * an UPDATE, INSERT or DELETE built with Kysely, one inside a WITH of any statement, or raw SQL that
 * says so (`UPDATE`, `INSERT INTO`, `DELETE FROM` or `TRUNCATE` naming the table).
 */
export class LocalWritesPlugin implements KyselyPlugin {
  private readonly pending = new WeakMap<QueryId, WatchedTable[]>()
  private readonly onWrite: (table: WatchedTable) => void
  constructor(onWrite: (table: WatchedTable) => void) {
    this.onWrite = onWrite
  }

  transformQuery({ node, queryId }: PluginTransformQueryArgs): RootOperationNode {
    const tables = writtenTables(node)
    if (tables.length > 0) this.pending.set(queryId, tables)
    return node
  }

  async transformResult({ result, queryId }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const tables = this.pending.get(queryId)
    if (tables) {
      this.pending.delete(queryId)
      for (const table of tables) this.onWrite(table)
    }
    return result
  }
}

const RAW_WRITE = /\b(?:update|insert\s+into|delete\s+from|truncate(?:\s+table)?)\s+(?:only\s+)?(?:"?public"?\.)?"?(stores|admin_api_keys|revoked_sessions)\b/gi

export function writtenTables(node: OperationNode): WatchedTable[] {
  const found = new Set<WatchedTable>()
  const visit = (current: OperationNode | undefined): void => {
    if (!current) return
    const any = current as OperationNode & { with?: { expressions?: Array<{ expression?: OperationNode }> } }
    for (const cte of any.with?.expressions ?? []) visit(cte.expression)
    let target: OperationNode | undefined
    if (current.kind === 'UpdateQueryNode') target = (current as { table?: OperationNode }).table
    else if (current.kind === 'InsertQueryNode') target = (current as { into?: OperationNode }).into
    else if (current.kind === 'DeleteQueryNode') target = (current as { from?: { froms: OperationNode[] } }).from?.froms[0]
    else if (current.kind === 'RawNode') {
      const text = (current as { sqlFragments?: readonly string[] }).sqlFragments?.join(' ') ?? ''
      for (const match of text.matchAll(RAW_WRITE)) found.add(match[1]!.toLowerCase() as WatchedTable)
    }
    const name = target ? tableName(target) : undefined
    if (name && WATCHED.has(name)) found.add(name as WatchedTable)
  }
  visit(node)
  return [...found]
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
    plugin: new LocalWritesPlugin((table) => listeners.emit({ table, key: null, local: true })),
    feed: { live: true, onChange: (listener) => listeners.add(listener), close: async () => {} },
  }
}

const RECONNECT_MIN_MS = 250
const RECONNECT_MAX_MS = 10_000
/**
 * The listener proves every HEARTBEAT_MS that it still hears: it notifies a channel only it listens
 * on, through its own connection. A connection that stops carrying data without closing (a partition,
 * an idle flow dropped by a NAT or balancer, a pooler that accepts LISTEN but delivers nothing) is
 * given up within HEARTBEAT_DEADLINE_MS, and until it is heard again nothing is answered from memory:
 * together well inside the contract's one second.
 */
/** How the listening connection shows in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = 'subscription-billing cache listener'
export const HEARTBEAT_MS = 200
export const HEARTBEAT_DEADLINE_MS = 600

/**
 * PostgreSQL: this process's writes, and everyone's through a connection of its own (outside the
 * pool) that LISTENs from the first subscriber on, reconnecting with backoff while the server is away.
 */
export function postgresChangeFeed(connectionString: string, onError?: (error: Error) => void): { feed: ChangeFeed; plugin: KyselyPlugin } {
  const listeners = new Listeners()
  const heartbeatChannel = `${CACHE_INVALIDATION_CHANNEL}_heartbeat_${randomBytes(8).toString('hex')}`
  let live = false
  let closed = false
  let client: pg.Client | undefined
  let retryTimer: NodeJS.Timeout | undefined
  let heartbeatTimer: NodeJS.Timeout | undefined
  /** When the unanswered heartbeat was sent, and what it said. */
  let awaiting: { nonce: string; sentAt: number } | undefined
  let delay = RECONNECT_MIN_MS

  const discard = (dead: pg.Client) => {
    dead.removeAllListeners()
    dead.on('error', () => {})
    void dead.end().catch(() => {})
    // A half-open socket would keep end() waiting: cut it.
    ;(dead as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy()
  }

  const lost = (error?: Error) => {
    if (error) onError?.(error)
    clearInterval(heartbeatTimer)
    heartbeatTimer = undefined
    awaiting = undefined
    const wasLive = live
    live = false
    if (wasLive) listeners.emit({ reset: true })
    const dead = client
    client = undefined
    if (dead) discard(dead)
    if (!closed && !retryTimer) {
      retryTimer = setTimeout(() => {
        retryTimer = undefined
        void listen()
      }, delay)
      retryTimer.unref()
      delay = Math.min(delay * 2, RECONNECT_MAX_MS)
    }
  }

  const beat = (connection: pg.Client) => {
    if (client !== connection) return
    const now = Date.now()
    if (awaiting) {
      if (now - awaiting.sentAt > HEARTBEAT_DEADLINE_MS) lost(new Error(`the cache invalidation listener heard nothing for ${now - awaiting.sentAt} ms`))
      return
    }
    const nonce = randomBytes(6).toString('hex')
    awaiting = { nonce, sentAt: now }
    connection.query('SELECT pg_notify($1, $2)', [heartbeatChannel, nonce]).catch((error: Error) => client === connection && lost(error))
  }

  const listen = async () => {
    if (closed || client) return
    const connection = new pg.Client({ connectionString, keepAlive: true, application_name: LISTENER_APPLICATION_NAME })
    client = connection
    connection.on('error', (error) => lost(error))
    connection.on('end', () => client === connection && lost())
    connection.on('notification', ({ channel, payload }) => {
      if (channel === heartbeatChannel) {
        if (awaiting?.nonce === payload) awaiting = undefined
        return
      }
      if (channel !== CACHE_INVALIDATION_CHANNEL || !payload) return
      const colon = payload.indexOf(':')
      const table = payload.slice(0, colon)
      // An empty key (a TRUNCATE) is every row.
      if (WATCHED.has(table)) listeners.emit({ table: table as WatchedTable, key: payload.slice(colon + 1) || null })
    })
    try {
      await connection.connect()
      await connection.query(`LISTEN ${CACHE_INVALIDATION_CHANNEL}; LISTEN ${heartbeatChannel}`)
      if (client !== connection || closed) return discard(connection)
      delay = RECONNECT_MIN_MS
      live = true
      // Anything cached while nobody listened is forgotten before the cache is trusted again.
      listeners.emit({ reset: true })
      heartbeatTimer = setInterval(() => beat(connection), HEARTBEAT_MS)
      heartbeatTimer.unref()
    } catch (error) {
      if (client === connection) lost(error as Error)
    }
  }

  return {
    plugin: new LocalWritesPlugin((table) => listeners.emit({ table, key: null, local: true })),
    feed: {
      get live() {
        return live
      },
      onChange: (listener) => listeners.add(listener, () => void listen()),
      close: async () => {
        closed = true
        live = false
        clearTimeout(retryTimer)
        clearInterval(heartbeatTimer)
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
