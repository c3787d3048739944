import { sql, type Kysely } from 'kysely'

/**
 * Stores connect to BigCommerce: one connection per store holding its access token encrypted
 * (src/modules/platform/token-vault.ts); each store chooses its payment gateway (live stores always
 * the platform); a store whose app was uninstalled has its billing stopped, its data kept.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('stores')
    .addColumn('gateway', 'text', (c) => c.notNull().defaultTo('test').check(sql`gateway in ('test', 'platform')`))
    // Set when the store's app is uninstalled or its connection removed; renewals and due work skip the store.
    .addColumn('billing_stopped_at', 'timestamptz')
    .execute()
  await sql`UPDATE stores SET gateway = 'platform' WHERE mode = 'live'`.execute(db)
  await sql`ALTER TABLE stores ADD CONSTRAINT stores_live_gateway_check CHECK (mode = 'test' OR gateway = 'platform')`.execute(db)

  await db.schema
    .createTable('platform_connections')
    .addColumn('store_id', 'text', (c) => c.primaryKey().references('stores.id').onDelete('cascade'))
    .addColumn('source', 'text', (c) => c.notNull().check(sql`source in ('app', 'api_account')`))
    // base64(iv | ciphertext | tag) of AES-256-GCM, the store id as additional data; null once disconnected.
    .addColumn('access_token_ciphertext', 'text')
    // Which key encrypted it, so the key can rotate without reading every row at once.
    .addColumn('key_version', 'integer')
    // As the platform granted them, space-separated; null for a pasted API account token (no published way to ask).
    .addColumn('scopes', 'text')
    .addColumn('connected_at', 'timestamptz', (c) => c.notNull())
    .addColumn('uninstalled_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await sql`ALTER TABLE platform_connections ADD CONSTRAINT platform_connections_token_check
    CHECK ((access_token_ciphertext IS NULL) = (key_version IS NULL) AND (access_token_ciphertext IS NULL) = (uninstalled_at IS NOT NULL))`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('platform_connections').execute()
  await sql`ALTER TABLE stores DROP CONSTRAINT stores_live_gateway_check`.execute(db)
  await db.schema.alterTable('stores').dropColumn('billing_stopped_at').execute()
  await db.schema.alterTable('stores').dropColumn('gateway').execute()
}
