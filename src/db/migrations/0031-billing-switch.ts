import { sql, type Kysely } from 'kysely'

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
  // Without the column every store bills: a store mid-cutover (its old system still billing) would be
  // charged twice. Such stores are switched on first, by the merchant, or the down migration stops here.
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM stores WHERE NOT billing_enabled`.execute(db)
  if ((rows[0]?.n ?? 0) > 0) throw new Error(`${rows[0]!.n} store(s) have billing switched off (billing_enabled false): turn their billing on before migrating below 0031, or they would start billing at once`)
  await db.schema.alterTable('stores').dropColumn('billing_enabled').execute()
}
