import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import type { DatabaseHandle } from '../../src/db/connect.ts'
import { createTestDatabase } from '../helpers/database.ts'

/**
 * Every table carries store_id (issue 28), so the schema stays distributable by store (Citus, docs/scaling.md
 * "Beyond one PostgreSQL"): a new table without it fails here until it gets the column or a reason below.
 * A child table that can cheaply copy its parent's store_id gets it rather than an excuse (bulk_operation_items, 0037).
 */
const EXCEPTIONS: Record<string, string> = {
  stores: 'the store itself: its id is the store key (a distributed table on id, or a reference table)',
  kysely_migration: 'migration bookkeeping, one row per migration',
  kysely_migration_lock: 'migration bookkeeping, one row',
  service_secrets: "the service's own signing and encryption keys, shared by every store (a reference table)",
  idempotency_keys: 'keyed by the caller (`store:`, `subscriber:` or `ip:` scope): storefront callers have no store yet; distributed by scope, never joined',
  revoked_sessions: 'portal session ids revoked before they expire: read by the random jti, short-lived, rarely written (a reference table)',
  test_gateway_refunds: "the simulated gateway's own books (an outside system), keyed by the charge's idempotency key; never deployed with live stores",
  webhook_attempts:
    'reached only through its delivery (delivery_id, cascading); a backfill would rewrite every attempt ever kept, so it gets store_id when the deliveries are distributed (docs/scaling.md)',
}

/**
 * Tables whose store_id may be null, each with why: a row of no store stays on the coordinator (or one copy
 * per node) when the schema is distributed.
 */
const NULLABLE: Record<string, string> = {
  jobs: "the job queue: a store's jobs carry its store_id (their lane in the fair claim, 0038); recurring upkeep spans every store and belongs to none",
}

describe('every table carries store_id', () => {
  let handle: DatabaseHandle
  let tables: { name: string; has_store_id: boolean; store_id_not_null: boolean }[]

  before(async () => {
    handle = await createTestDatabase()
    const { rows } = await sql<{ name: string; has_store_id: boolean; store_id_not_null: boolean }>`
      SELECT c.relname AS name,
             coalesce(bool_or(a.attname = 'store_id'), false) AS has_store_id,
             coalesce(bool_or(a.attname = 'store_id' AND a.attnotnull), false) AS store_id_not_null
        FROM pg_class c
        LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
       WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
       GROUP BY c.relname
       ORDER BY c.relname`.execute(handle.db)
    tables = rows
  })
  after(() => handle?.close())

  test('a table of the migrated schema has a store_id column, or a stated reason not to', () => {
    assert.ok(tables.length > 20, `only ${tables.length} tables found: is the database migrated?`)
    const missing = tables.filter((table) => !table.has_store_id && !(table.name in EXCEPTIONS)).map((table) => table.name)
    assert.deepEqual(missing, [], 'tables without store_id: add the column (copied from the parent row) or a one-line reason to EXCEPTIONS')
  })

  test('store_id is never optional where it exists (a row of no store cannot be placed on a shard)', () => {
    // webhook_deliveries lost only its foreign key (0016), never NOT NULL.
    assert.deepEqual(tables.filter((table) => table.has_store_id && !table.store_id_not_null && !(table.name in NULLABLE)).map((table) => table.name), [])
    for (const [name, reason] of Object.entries(NULLABLE)) {
      const table = tables.find((row) => row.name === name)
      assert.ok(table?.has_store_id && !table.store_id_not_null, `${name} is excused as nullable but its store_id is missing or NOT NULL now: drop its excuse`)
      assert.ok(reason.length > 20, `${name}: say why`)
    }
  })

  test('every exception still names a table without store_id (no stale excuses)', () => {
    const byName = new Map(tables.map((table) => [table.name, table]))
    for (const [name, reason] of Object.entries(EXCEPTIONS)) {
      assert.ok(byName.has(name), `${name} is excused but no longer exists`)
      assert.equal(byName.get(name)!.has_store_id, false, `${name} has store_id now: drop its exception`)
      assert.ok(reason.length > 20, `${name}: say why`)
    }
  })
})
