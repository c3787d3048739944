import type { Kysely } from 'kysely'

/**
 * What a renewal's platform order and payment need beyond what checkout kept before: the platform
 * customer who owns the stored card, the billing address the order requires, the product variant,
 * and what the subscriber may see of the card (brand, last 4). Order webhooks from the platform are
 * deduplicated by the payload's `hash`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // The subscriber's own customer on the platform; their stored cards are the portal's choices.
  await db.schema.alterTable('subscribers').addColumn('platform_customer_id', 'text').execute()
  await db.schema
    .alterTable('subscriptions')
    // The customer who pays (a gift's buyer until the recipient sets their own card); owns the instrument.
    .addColumn('platform_customer_id', 'text')
    .addColumn('billing_address', 'jsonb')
    .addColumn('platform_variant_id', 'text')
    // As the platform listed the instrument when it was set; never more of the card than this.
    .addColumn('payment_instrument_brand', 'text')
    .addColumn('payment_instrument_last4', 'text')
    .execute()

  await db.schema
    .createTable('platform_webhook_receipts')
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    // The platform's payload hash: the same event delivered twice carries the same one.
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('platform_webhook_receipts_pkey', ['store_id', 'hash'])
    .execute()

  // When the order webhooks were registered on the platform (null: not yet, or failed and to retry).
  await db.schema.alterTable('platform_connections').addColumn('hooks_registered_at', 'timestamptz').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('platform_connections').dropColumn('hooks_registered_at').execute()
  await db.schema.dropTable('platform_webhook_receipts').execute()
  for (const column of ['payment_instrument_last4', 'payment_instrument_brand', 'platform_variant_id', 'billing_address', 'platform_customer_id']) {
    await db.schema.alterTable('subscriptions').dropColumn(column).execute()
  }
  await db.schema.alterTable('subscribers').dropColumn('platform_customer_id').execute()
}
