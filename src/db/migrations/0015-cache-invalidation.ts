import { sql, type Kysely } from 'kysely'

/**
 * Dropped again by 0018: the cache no longer listens (src/modules/stores/auth-cache.ts).
 *
 * Every process cached what authenticates a request (a change feed that LISTENed, and auth-cache.ts):
 * store rows, admin keys by hash, sessions known not to be revoked. These triggers tell every
 * listening process, at commit, which row changed, as `table:key` on the `cache_invalidation`
 * channel: a store's id, a key's hash (revoked, moved or deleted; `last_used_at` is not a change),
 * a revoked session's `jti`; a TRUNCATE, an empty key (every row). A transaction that rolls back
 * tells nobody.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION notify_cache_invalidation() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      key text;
    BEGIN
      -- One branch per table: a record's fields are resolved when the statement runs. A TRUNCATE
      -- (statement level, no row) names no key: every row of the table.
      IF TG_LEVEL = 'STATEMENT' THEN
        key := '';
      ELSIF TG_TABLE_NAME = 'stores' THEN
        key := OLD.id;
      ELSIF TG_TABLE_NAME = 'admin_api_keys' THEN
        key := OLD.key_hash;
      ELSE
        key := NEW.jti;
      END IF;
      PERFORM pg_notify('cache_invalidation', TG_TABLE_NAME || ':' || key);
      RETURN NULL;
    END;
    $$
  `.execute(db)
  await sql`CREATE TRIGGER stores_cache_invalidation AFTER UPDATE OR DELETE ON stores FOR EACH ROW EXECUTE FUNCTION notify_cache_invalidation()`.execute(db)
  await sql`CREATE TRIGGER admin_api_keys_cache_invalidation AFTER UPDATE OF revoked_at, key_hash, store_id OR DELETE ON admin_api_keys FOR EACH ROW EXECUTE FUNCTION notify_cache_invalidation()`.execute(db)
  await sql`CREATE TRIGGER revoked_sessions_cache_invalidation AFTER INSERT ON revoked_sessions FOR EACH ROW EXECUTE FUNCTION notify_cache_invalidation()`.execute(db)
  for (const table of ['stores', 'admin_api_keys', 'revoked_sessions']) {
    await sql`CREATE TRIGGER ${sql.raw(`${table}_cache_truncate`)} AFTER TRUNCATE ON ${sql.table(table)} FOR EACH STATEMENT EXECUTE FUNCTION notify_cache_invalidation()`.execute(db)
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['stores', 'admin_api_keys', 'revoked_sessions']) {
    await sql`DROP TRIGGER ${sql.raw(`${table}_cache_truncate`)} ON ${sql.table(table)}`.execute(db)
  }
  await sql`DROP TRIGGER revoked_sessions_cache_invalidation ON revoked_sessions`.execute(db)
  await sql`DROP TRIGGER admin_api_keys_cache_invalidation ON admin_api_keys`.execute(db)
  await sql`DROP TRIGGER stores_cache_invalidation ON stores`.execute(db)
  await sql`DROP FUNCTION notify_cache_invalidation()`.execute(db)
}
