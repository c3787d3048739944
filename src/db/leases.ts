import { randomUUID } from 'node:crypto'
import { sql, type RawBuilder } from 'kysely'
import type { Executor } from './database.ts'

/**
 * The one claim-with-lease primitive: the job runner, the renewal engine and the webhook dispatcher
 * all take work this way.
 *   - claim: rows are chosen with FOR UPDATE SKIP LOCKED (so concurrent claimers take disjoint rows)
 *     and stamped with a lease end and a fresh fencing token;
 *   - renew: while the work runs, the holder pushes the lease end forward, and learns which rows
 *     it lost (someone else's token is there now: it stalled past its lease);
 *   - release: the holder gives the rows back, optionally not before a given time;
 *   - every write that finishes the work carries `heldBy(...)`, so a holder that lost its lease
 *     cannot overwrite what the new holder did.
 */
export interface LeaseSpec {
  table: 'jobs' | 'charges' | 'refunds' | 'webhook_deliveries'
  /** The lease end column. */
  until: string
  /** The fencing token column. */
  token: string
}

export const LEASES = {
  jobs: { table: 'jobs', until: 'locked_until', token: 'locked_by' },
  charges: { table: 'charges', until: 'lease_until', token: 'lease_token' },
  refunds: { table: 'refunds', until: 'lease_until', token: 'lease_token' },
  deliveries: { table: 'webhook_deliveries', until: 'locked_until', token: 'lease_token' },
} as const satisfies Record<string, LeaseSpec>

export type LeaseId = string | number

export function newLeaseToken(): string {
  return randomUUID()
}

/** Rows nobody holds: never leased, released, or whose lease ran out by `now`. */
export function leaseFree(spec: LeaseSpec, now: Date, alias: string = spec.table): RawBuilder<boolean> {
  const until = sql.ref(`${alias}.${spec.until}`)
  return sql<boolean>`(${until} IS NULL OR ${until} < ${now})`
}

/** The condition every finishing write carries: the row is still ours. */
export function heldBy(spec: LeaseSpec, token: string, alias: string = spec.table): RawBuilder<boolean> {
  return sql<boolean>`${sql.ref(`${alias}.${spec.token}`)} = ${token}`
}

export interface ClaimOptions {
  /**
   * A SELECT of `id` (and any further columns to hand back, readable as `c.<name>` in `returning`)
   * over free rows, ordered and limited, ending in FOR UPDATE [OF alias] SKIP LOCKED.
   */
  candidates: RawBuilder<unknown>
  leaseMs: number
  now: Date
  /** Further assignments made with the claim (e.g. `attempts = attempts + 1`). */
  set?: RawBuilder<unknown>
  /** Further tables to read in `returning`, joined by `where` (e.g. the event a delivery sends). */
  from?: RawBuilder<unknown>
  where?: RawBuilder<unknown>
  /** What to hand back; `t` is the table, `c` the candidates. Default: the whole row. */
  returning?: RawBuilder<unknown>
  /** The token to stamp; a fresh one by default. */
  token?: string
}

export interface Claim<R> {
  token: string
  until: Date
  rows: R[]
}

export async function claimLeased<R>(db: Executor, spec: LeaseSpec, options: ClaimOptions): Promise<Claim<R>> {
  const token = options.token ?? newLeaseToken()
  const until = new Date(options.now.getTime() + options.leaseMs)
  const { rows } = await sql<R>`
    WITH c AS (${options.candidates})
    UPDATE ${sql.table(spec.table)} AS t
       SET ${sql.ref(spec.until)} = ${until}, ${sql.ref(spec.token)} = ${token}${options.set ? sql`, ${options.set}` : sql``}
      FROM c${options.from ? sql`, ${options.from}` : sql``}
     WHERE t.id = c.id${options.where ? sql` AND ${options.where}` : sql``}
 RETURNING ${options.returning ?? sql`t.*`}`.execute(db)
  return { token, until, rows }
}

/** Pushes the lease of the rows still held under `token` forward; answers the ids still held. */
export async function renewLeases(db: Executor, spec: LeaseSpec, ids: readonly LeaseId[], token: string, leaseMs: number, now: Date): Promise<Set<LeaseId>> {
  if (ids.length === 0) return new Set()
  const { rows } = await sql<{ id: LeaseId }>`
    UPDATE ${sql.table(spec.table)} SET ${sql.ref(spec.until)} = ${new Date(now.getTime() + leaseMs)}
     WHERE id IN (${sql.join(ids)}) AND ${sql.ref(spec.token)} = ${token}
 RETURNING id`.execute(db)
  return new Set(rows.map((row) => row.id))
}

/** Gives rows back; with `notBefore` nobody may claim them before then. Only rows still ours. */
export async function releaseLeases(db: Executor, spec: LeaseSpec, ids: readonly LeaseId[], token: string, notBefore: Date | null = null): Promise<void> {
  if (ids.length === 0) return
  await sql`UPDATE ${sql.table(spec.table)} SET ${sql.ref(spec.until)} = ${notBefore}, ${sql.ref(spec.token)} = NULL
             WHERE id IN (${sql.join(ids)}) AND ${sql.ref(spec.token)} = ${token}`.execute(db)
}

export interface LeaseKeeper {
  /** Rows to keep renewing. */
  add(ids: readonly LeaseId[]): void
  /** Rows done with (settled or released): no longer renewed. */
  remove(ids: readonly LeaseId[]): void
  /** True once a renewal found the row held by someone else: do not start work on it. */
  lost(id: LeaseId): boolean
  stop(): Promise<void>
}

/**
 * Renews the leases of the rows in hand every third of the lease while work runs, so a slow call
 * never outlives its lease while its holder is alive; a holder that stalls longer loses the rows
 * to the next claimer, and its finishing writes are refused by the token.
 */
export function keepLeases(db: Executor, spec: LeaseSpec, token: string, leaseMs: number, options: {
  now?: () => Date
  intervalMs?: number
  log?: { warn(object: object, message: string): void }
} = {}): LeaseKeeper {
  const now = options.now ?? (() => new Date())
  const held = new Set<LeaseId>()
  const lostIds = new Set<LeaseId>()
  let renewing: Promise<void> | undefined
  const tick = async () => {
    if (held.size === 0) return
    const ids = [...held]
    try {
      const still = await renewLeases(db, spec, ids, token, leaseMs, now())
      for (const id of ids) {
        if (!still.has(id) && held.has(id)) {
          held.delete(id)
          lostIds.add(id)
        }
      }
    } catch (error) {
      // The database may be back at the next tick; until the lease ends the rows are still ours.
      options.log?.warn({ err: error, table: spec.table }, 'could not renew leases')
    }
  }
  const timer = setInterval(() => {
    renewing ??= tick().finally(() => {
      renewing = undefined
    })
  }, options.intervalMs ?? Math.max(50, Math.floor(leaseMs / 3)))
  timer.unref()
  return {
    add(ids) {
      for (const id of ids) held.add(id)
    },
    remove(ids) {
      for (const id of ids) held.delete(id)
    },
    lost: (id) => lostIds.has(id),
    async stop() {
      clearInterval(timer)
      await renewing
    },
  }
}
