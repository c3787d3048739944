import { sql, type Kysely, type RawBuilder } from 'kysely'

/**
 * Two reads of the largest store whose cost grew with the whole table or the store's whole history
 * (issue 28, bench:spike --scenario size in BENCHMARKS.md):
 *
 * - The analytics "state at a moment" (MRR, active count) read every span of the store's history through
 *   the heap. It now reads the open spans and the spans closed since the window's start as two ranges
 *   (subscription-metrics.repository.ts), each from a partial index that carries every column the
 *   figures need, so neither touches the heap and neither grows with the store's past. Together the two
 *   hold each active or past-due span once: about the size of one covering index of those spans.
 * - The search by part of an email or name (migration 0028) found the text's rows in every store through
 *   trigram indexes, then dropped the other stores' rows: its cost followed the whole table. The trigram
 *   indexes are now led by the store (btree_gin lets a GIN index hold the plain `store_id` beside the
 *   trigrams), so the index yields only the store's matches. btree_gin is a contrib extension beside
 *   pg_trgm (trusted, as pg_trgm is); the embedded database loads it (src/db/connect.ts). The indexes
 *   keep 0028's names. Where pg_trgm was not installed, or btree_gin is not offered, they stay as they are.
 *
 * Down restores 0028's definitions and drops the two history indexes; the extension stays (as pg_trgm
 * does in 0028).
 */
const COVERED = sql.raw('currency, interval_count, cycles, amount, quantity, interval, discount_type, discount_value')

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX subscription_history_open_active_idx ON subscription_history (store_id, valid_from) INCLUDE (${COVERED})
    WHERE valid_to IS NULL AND status IN ('active', 'past_due')`.execute(db)
  await sql`CREATE INDEX subscription_history_closed_active_idx ON subscription_history (store_id, valid_to) INCLUDE (valid_from, ${COVERED})
    WHERE valid_to IS NOT NULL AND status IN ('active', 'past_due')`.execute(db)

  if ((await searchIndexesLedByStore(db)) === false && (await btreeGinOffered(db))) {
    await sql`CREATE EXTENSION IF NOT EXISTS btree_gin`.execute(db)
    await replaceSearchIndexes(db, sql`store_id, `)
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (await searchIndexesLedByStore(db)) await replaceSearchIndexes(db, sql``)
  await sql`DROP INDEX subscription_history_closed_active_idx`.execute(db)
  await sql`DROP INDEX subscription_history_open_active_idx`.execute(db)
}

/**
 * Remakes 0028's two trigram indexes under their own names (what reads them, and the tests that name
 * them, stay as they are): each new one is built before the old one goes, so searches keep an index
 * until the migration commits and the table is locked against reads only for the drop and the rename.
 */
async function replaceSearchIndexes(db: Kysely<unknown>, leading: RawBuilder<unknown>): Promise<void> {
  for (const column of ['email', 'name']) {
    const name = `subscribers_${column}_trgm_idx`
    await sql`CREATE INDEX ${sql.ref(`${name}_new`)} ON subscribers USING gin (${leading}${sql.ref(column)} gin_trgm_ops)`.execute(db)
    await sql`DROP INDEX ${sql.ref(name)}`.execute(db)
    await sql`ALTER INDEX ${sql.ref(`${name}_new`)} RENAME TO ${sql.ref(name)}`.execute(db)
  }
}

/** Whether 0028's email trigram index is led by the store; undefined where 0028 made none (no pg_trgm). */
async function searchIndexesLedByStore(db: Kysely<unknown>): Promise<boolean | undefined> {
  const { rows } = await sql<{ def: string }>`SELECT indexdef AS def FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'subscribers_email_trgm_idx'`.execute(db)
  return rows[0] ? /\(store_id,/.test(rows[0].def) : undefined
}

async function btreeGinOffered(db: Kysely<unknown>): Promise<boolean> {
  const { rows } = await sql<{ available: boolean }>`SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'btree_gin') AS available`.execute(db)
  return Boolean(rows[0]?.available)
}
