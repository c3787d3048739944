import { sql, type Kysely } from 'kysely'

/**
 * Search and the subscriber page (docs/contract.md, the section of that name) without reading a store's every row:
 *
 * - Part of an email or name (`ILIKE '%text%'`): trigram GIN indexes of pg_trgm. The embedded
 *   database loads pg_trgm (src/db/connect.ts); on PostgreSQL it is a contrib extension that every
 *   packaged server and managed service offers, and a trusted one (a database owner may create it).
 *   A server without it still migrates, without these two indexes: a search then reads the store's
 *   subscribers in full (docs/contract.md, Search and the subscriber page). Once the extension is installed, the two
 *   statements below can be run by hand.
 * - An order id: the first order of a subscription, and a charge's renewal order, by store.
 * - A subscriber's emails on their page: the notifications of one recipient, newest first.
 *
 * Down drops the indexes; the extension stays (other objects may use it, and it holds no data).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ available: boolean }>`SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') AS available`.execute(db)
  if (rows[0]?.available) {
    await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`.execute(db)
    await sql`CREATE INDEX subscribers_email_trgm_idx ON subscribers USING gin (email gin_trgm_ops)`.execute(db)
    await sql`CREATE INDEX subscribers_name_trgm_idx ON subscribers USING gin (name gin_trgm_ops)`.execute(db)
  }
  await sql`CREATE INDEX subscriptions_store_order_idx ON subscriptions (store_id, platform_order_id)`.execute(db)
  await sql`CREATE INDEX charges_store_order_idx ON charges (store_id, platform_order_id) WHERE platform_order_id IS NOT NULL`.execute(db)
  await sql`CREATE INDEX notifications_store_recipient_idx ON notifications (store_id, recipient, id)`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const index of ['notifications_store_recipient_idx', 'charges_store_order_idx', 'subscriptions_store_order_idx', 'subscribers_name_trgm_idx', 'subscribers_email_trgm_idx']) {
    await sql`DROP INDEX IF EXISTS ${sql.ref(index)}`.execute(db)
  }
}
