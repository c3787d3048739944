import type { Kysely } from 'kysely'

/**
 * The cutover switch (CONTRACT section 16): `stores.billing_enabled`. While false nothing bills,
 * retries or reminds for the store, as while its billing is stopped (`billing_stopped_at`), so a
 * merchant can import subscriptions and switch the old system off before this one takes over.
 * Existing stores keep billing (default true).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('stores').addColumn('billing_enabled', 'boolean', (c) => c.notNull().defaultTo(true)).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('stores').dropColumn('billing_enabled').execute()
}
