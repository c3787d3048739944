import { sql, type Kysely } from 'kysely'

/**
 * Subscriber emails (docs/contract.md, Subscriber emails): each store's switches per template, the
 * card's expiry beside its brand and last 4 (to warn before a renewal the card cannot pay), and the
 * log of every email, one row per notification, unique by what it is about so a retry never adds one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // `{template: boolean}`; a template not named is on.
  await db.schema.alterTable('stores').addColumn('notifications', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`)).execute()
  // As the platform listed the card when it was set, like its brand and last 4; null for the test gateway.
  await db.schema
    .alterTable('subscriptions')
    .addColumn('payment_instrument_expiry_month', 'integer')
    .addColumn('payment_instrument_expiry_year', 'integer')
    .execute()

  await db.schema
    .createTable('notifications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('template', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('subscription_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'sent', 'failed')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    // What the email is about (the event, or the instrument and renewal): one email per key.
    .addColumn('dedupe_key', 'text', (c) => c.notNull().unique())
    .addColumn('sent_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('notifications_store_idx').on('notifications').columns(['store_id', 'id']).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('notifications').execute()
  await db.schema.alterTable('subscriptions').dropColumn('payment_instrument_expiry_year').dropColumn('payment_instrument_expiry_month').execute()
  await db.schema.alterTable('stores').dropColumn('notifications').execute()
}
