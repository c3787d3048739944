import { sql, type Kysely } from 'kysely'

/**
 * Cancellation reasons and retention offers (docs/contract.md, Cancellation reasons and retention):
 * each store's reasons (`[{code, label}]`) and offers (`[{type, days?, code?}]`), the reason code a
 * cancellation gave, and one row per offer a subscriber took instead of cancelling (a "save"), which
 * the analytics count.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('stores')
    .addColumn('cancellation_reasons', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('retention_offers', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute()
  await db.schema.alterTable('subscriptions').addColumn('cancellation_reason_code', 'text').execute()

  await db.schema
    .createTable('retention_saves')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('subscription_id', 'text', (c) => c.notNull().references('subscriptions.id').onDelete('cascade'))
    .addColumn('offer_type', 'text', (c) => c.notNull().check(sql`offer_type in ('pause', 'skip', 'discount')`))
    // The offer as the store configured it when taken: {type, days} / {type} / {type, code}.
    .addColumn('offer', 'jsonb', (c) => c.notNull())
    // Who took it: 'subscriber' (the portal) or 'admin'.
    .addColumn('actor', 'text', (c) => c.notNull())
    // On the store's clock, like the event the action recorded.
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('retention_saves_store_time_idx').on('retention_saves').columns(['store_id', 'occurred_at']).execute()
  await db.schema.createIndex('retention_saves_subscription_idx').on('retention_saves').column('subscription_id').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('retention_saves').execute()
  await db.schema.alterTable('subscriptions').dropColumn('cancellation_reason_code').execute()
  await db.schema.alterTable('stores').dropColumn('retention_offers').dropColumn('cancellation_reasons').execute()
}
