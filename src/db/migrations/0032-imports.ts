import { sql, type Kysely } from 'kysely'

/**
 * Imports (CONTRACT section 16): subscriptions brought in from another system keep that system's id
 * (`external_id`), unique per store, so running the same file again never creates one twice; and the
 * log of imports, whose row the import updates as it goes (the console's progress bar reads it).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('subscriptions').addColumn('external_id', 'text').execute()
  await sql`CREATE UNIQUE INDEX subscriptions_external_id_idx ON subscriptions (store_id, external_id) WHERE external_id IS NOT NULL`.execute(db)
  await db.schema
    .createTable('imports')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id'))
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('dry_run', 'boolean', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('rows', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('skipped', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('errors', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('ignored_columns', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('bytes_read', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('bytes_total', 'integer')
    .addColumn('actor', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('finished_at', 'timestamptz')
    .execute()
  await db.schema.createIndex('imports_store_id_idx').on('imports').columns(['store_id', 'id']).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('imports').execute()
  await sql`DROP INDEX subscriptions_external_id_idx`.execute(db)
  await db.schema.alterTable('subscriptions').dropColumn('external_id').execute()
}
