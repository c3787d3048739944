import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { sql } from 'kysely'
import { createStore } from '../../src/modules/stores/index.ts'
import { createTestDatabase, embeddedDatabases, onPostgres } from '../helpers/database.ts'

/**
 * The embedded test databases are reused within a process (test/helpers/database.ts): a closed one is
 * handed to the next caller only emptied, and only if nothing but its rows changed. Each caller must
 * still get what a fresh migrated database holds, and a closed handle must reach nothing.
 */
describe('a test database after its user closed it', { skip: onPostgres && 'each PostgreSQL test database is a scratch database of its own' }, () => {
  test('the next one is empty, its sequences restarted, and the closed handle reaches nothing', async () => {
    const first = await createTestDatabase()
    await createStore(first.db, { storeHash: 'reuse-a', mode: 'test' })
    const position = async (db: typeof first.db) => (await sql<{ n: number }>`SELECT nextval(pg_get_serial_sequence('events', 'position'))::int AS n`.execute(db)).rows[0]!.n
    await position(first.db)
    await position(first.db)
    await first.close()
    await assert.rejects(first.db.selectFrom('stores').selectAll().execute(), 'a closed handle reaches no database')

    const reused = embeddedDatabases.reused
    const second = await createTestDatabase()
    assert.equal(embeddedDatabases.reused, reused + 1, 'the closed one was handed on, not a fresh copy loaded')
    try {
      assert.deepEqual(await second.db.selectFrom('stores').selectAll().execute(), [])
      assert.equal(await position(second.db), 1, 'sequences start again')
    } finally {
      await second.close()
    }
  })

  test('one whose triggers, constraints or session settings changed is not handed on', async () => {
    const changes = [
      sql`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`,
      sql`CREATE TRIGGER refuse_stores BEFORE INSERT ON stores FOR EACH ROW EXECUTE FUNCTION refuse()`,
    ]
    const changed = await createTestDatabase()
    for (const change of changes) await change.execute(changed.db)
    await changed.close()
    const next = await createTestDatabase()
    try {
      await createStore(next.db, { storeHash: 'reuse-b', mode: 'test' })
      await sql`ALTER TABLE charges ADD CONSTRAINT no_big CHECK (amount < 100)`.execute(next.db)
      await sql`SET session_replication_role = replica`.execute(next.db)
    } finally {
      await next.close()
    }
    const loaded = embeddedDatabases.loaded
    const after = await createTestDatabase()
    assert.equal(embeddedDatabases.loaded, loaded + 1, 'a changed database is never handed on: a fresh copy is loaded')
    try {
      const { rows } = await sql<{ constraints: number; role: string }>`
        SELECT (SELECT count(*)::int FROM pg_constraint WHERE conname = 'no_big') AS constraints, current_setting('session_replication_role') AS role`.execute(after.db)
      assert.deepEqual(rows[0], { constraints: 0, role: 'origin' })
      await createStore(after.db, { storeHash: 'reuse-c', mode: 'test' })
    } finally {
      await after.close()
    }
  })
})
