import { sql, type RawBuilder } from 'kysely'
import type { Executor, JobRow } from '../db/database.ts'
import { claimLeased, leaseFree, LEASES, type Claim } from '../db/leases.ts'

/**
 * The job runner's claim, fair across stores (issue 28): one store's backlog (20,000 receipts after its
 * renewals) never holds back another store's emails. A batch is shared out between lanes:
 *   - the jobs of no store (recurring upkeep), oldest first, as the whole queue was before;
 *   - each store with due jobs, visited in store id order from where the last claim stopped (a cursor),
 *     a walk that costs one index probe per store however large its backlog (jobs_store_due_idx).
 * Every lane gets one place in turn until the batch is full or the lanes have nothing more due, so a
 * store alone with a backlog still fills whole batches and a store with one email takes one place. Rows
 * are still taken with FOR UPDATE SKIP LOCKED under the lease, and two statements need no transaction:
 * the walk only decides the shares, the claim re-checks every row.
 */
export interface FairClaimOptions {
  db: Executor
  batchSize: number
  leaseMs: number
  /** The fencing token each claim stamps. */
  token: string
}

interface Lane {
  /** null: the jobs of no store. */
  store_id: string | null
  /** Its due free jobs, counted up to the batch size. */
  due: number
}

/** Stores one walk statement visits: at least a batch's worth, so a batch can take one job from each. */
const MIN_WALK_STEPS = 16
/** A claim that walks on (past stores only waiting for retries) doubles its steps up to this, to pass thousands in a few statements. */
const MAX_WALK_STEPS = 1024

export function createFairClaim({ db, batchSize, leaseMs, token }: FairClaimOptions) {
  const firstSteps = Math.max(batchSize, MIN_WALK_STEPS)
  // The last store served: the next claim's walk starts after it ('' = from the first store).
  let cursor = ''

  const workable = (kinds: readonly string[], at: Date) =>
    sql`j.failed_at IS NULL AND j.kind IN (${sql.join(kinds)}) AND j.run_at <= ${at} AND ${leaseFree(LEASES.jobs, at, 'j')}`

  /**
   * Up to `steps` stores with jobs, in id order after `after` (and not past `until`, once the walk has
   * wrapped round), each with its due free jobs counted up to the batch size; with `unstored`, the lane
   * of no store first.
   */
  async function walk(at: Date, kinds: readonly string[], after: string, until: string | undefined, unstored: boolean, steps: number): Promise<Lane[]> {
    const bound = until === undefined ? sql`` : sql` AND j.store_id <= ${until}`
    const next = (from: RawBuilder<unknown>) => sql`(
      SELECT j.store_id FROM jobs j WHERE j.failed_at IS NULL AND j.store_id > ${from}${bound} ORDER BY j.store_id LIMIT 1)`
    const counted = (lane: RawBuilder<unknown>) => sql`(
      SELECT count(*) FROM (SELECT 1 FROM jobs j WHERE ${lane} AND ${workable(kinds, at)} ORDER BY j.run_at, j.id LIMIT ${batchSize}) d)::int`
    const { rows } = await sql<Lane>`
      WITH RECURSIVE walk (store_id, step) AS (
        SELECT ${next(sql`${after}`)}, 1
        UNION ALL
        SELECT ${next(sql`w.store_id`)}, w.step + 1 FROM walk w WHERE w.store_id IS NOT NULL AND w.step < ${steps}
      )
      ${unstored ? sql`SELECT NULL::text AS store_id, 0 AS step, ${counted(sql`j.store_id IS NULL`)} AS due UNION ALL` : sql``}
      SELECT w.store_id, w.step, ${counted(sql`j.store_id = w.store_id`)} AS due
        FROM walk w WHERE w.store_id IS NOT NULL
       ORDER BY step`.execute(db)
    return rows
  }

  /**
   * The lanes with something due, in turn from the cursor: on along the stores (round to the first ones
   * when the walk runs out) until they fill a batch or the walk has been once round, so neither stores
   * only waiting for retries nor the end of the store list leave a batch short while work is due.
   */
  async function dueLanes(at: Date, kinds: readonly string[]): Promise<{ lanes: Lane[]; walkedTo: string }> {
    const start = cursor
    const lanes: Lane[] = []
    let after = start
    let until: string | undefined
    let wrapped = start === ''
    for (let first = true, steps = firstSteps; ; first = false, steps = Math.min(2 * steps, Math.max(MAX_WALK_STEPS, firstSteps))) {
      const rows = await walk(at, kinds, after, until, first, steps)
      for (const row of rows) if (row.due > 0) lanes.push(row)
      const stores = rows.filter((row) => row.store_id !== null)
      const exhausted = stores.length < steps
      if (!exhausted) after = stores[stores.length - 1]!.store_id!
      const enough = lanes.reduce((sum, lane) => sum + lane.due, 0) >= batchSize
      if (enough || (exhausted && wrapped)) return { lanes, walkedTo: exhausted ? '' : after }
      if (exhausted) {
        wrapped = true
        after = ''
        until = start
      }
    }
  }

  return async function claim(at: Date, kinds: readonly string[]): Promise<Claim<JobRow>> {
    if (kinds.length === 0) return { token, until: at, rows: [] }
    const { lanes, walkedTo } = await dueLanes(at, kinds)
    const shares = shareOut(lanes.map((lane) => lane.due), batchSize)
    // A store that had jobs due and got no place this time is the first to have one next time.
    const firstLeftOut = lanes.findIndex((lane, i) => lane.store_id !== null && shares[i] === 0)
    const lastServed = firstLeftOut < 0 ? undefined : lanes.slice(0, firstLeftOut).findLast((lane) => lane.store_id !== null)
    cursor = firstLeftOut < 0 ? walkedTo : (lastServed?.store_id ?? cursor)

    const unstoredShare = lanes.findIndex((lane) => lane.store_id === null)
    const unstored = unstoredShare < 0 ? 0 : shares[unstoredShare]!
    const stores = lanes.flatMap((lane, i) => (lane.store_id !== null && shares[i]! > 0 ? [{ id: lane.store_id, share: shares[i]! }] : []))
    if (unstored === 0 && stores.length === 0) return { token, until: at, rows: [] }
    const parts: RawBuilder<unknown>[] = []
    if (unstored > 0) {
      parts.push(sql`SELECT u.id FROM (
        SELECT j.id FROM jobs j WHERE j.store_id IS NULL AND ${workable(kinds, at)}
         ORDER BY j.run_at, j.id LIMIT ${unstored} FOR UPDATE OF j SKIP LOCKED) u`)
    }
    if (stores.length > 0) {
      parts.push(sql`SELECT p.id FROM unnest(${stores.map((s) => s.id)}::text[], ${stores.map((s) => s.share)}::int[]) AS w(store_id, share)
        CROSS JOIN LATERAL (
          SELECT j.id FROM jobs j WHERE j.store_id = w.store_id AND ${workable(kinds, at)}
           ORDER BY j.run_at, j.id LIMIT w.share FOR UPDATE OF j SKIP LOCKED) p`)
    }
    const claimed = await claimLeased<JobRow>(db, LEASES.jobs, {
      // The outer LIMIT is no bound (the shares are) but the planner's estimate: without it, it guesses each
      // lane's `LIMIT w.share` as a tenth of the store's rows and joins the whole table by its key.
      candidates: sql`SELECT id FROM (${sql.join(parts, sql` UNION ALL `)}) lanes LIMIT ${shares.reduce((sum, share) => sum + share, 0)}`,
      leaseMs,
      now: at,
      token,
      set: sql`attempts = t.attempts + 1`,
    })
    return { ...claimed, rows: inTurn(claimed.rows) }
  }
}

/**
 * Places in a batch of `slots`, lane by lane: one each in turn while a lane has more due, so every lane
 * with something due gets a place before any gets a second (while there are places), and places a lane
 * cannot use go to the others.
 */
export function shareOut(due: readonly number[], slots: number): number[] {
  const shares = due.map(() => 0)
  for (let left = slots, gave = true; left > 0 && gave; ) {
    gave = false
    for (let i = 0; i < due.length && left > 0; i++) {
      if (shares[i]! < due[i]!) {
        shares[i]!++
        left--
        gave = true
      }
    }
  }
  return shares
}

/** The batch in the order it runs: each lane's oldest first, the lanes taking turns (a store's one email does not wait behind another's nine). */
export function inTurn(rows: JobRow[]): JobRow[] {
  const oldestFirst = [...rows].sort((a, b) => a.run_at.getTime() - b.run_at.getTime() || Number(a.id) - Number(b.id))
  const turn = new Map<string | null, number>()
  const ranked = oldestFirst.map((row, index) => {
    const rank = turn.get(row.store_id) ?? 0
    turn.set(row.store_id, rank + 1)
    return { row, rank, index }
  })
  return ranked.sort((a, b) => a.rank - b.rank || a.index - b.index).map(({ row }) => row)
}
