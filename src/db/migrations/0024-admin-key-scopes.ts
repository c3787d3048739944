import { sql, type Kysely } from 'kysely'

/**
 * Admin keys carry a scope (docs/contract.md, Admin key scopes): `full` (every key so far), `read_only`
 * (reads only) or `support` (subscription and charge actions besides reads; no keys, webhooks,
 * settings, platform connection or catalogue writes).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('admin_api_keys')
    .addColumn('scope', 'text', (c) => c.notNull().defaultTo('full').check(sql`scope in ('full', 'read_only', 'support')`))
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('admin_api_keys').dropColumn('scope').execute()
}
