import { sql, type Kysely } from 'kysely'

/**
 * Console sessions are kept server-side (docs/contract.md, console sessions): a session is good only
 * while its row says so, so signing out, uninstalling the app and disconnecting the store end it on
 * every process within the authentication cache's bound. `load_key` is the platform load payload that
 * opened it (its `jti`): a payload opens one session, never more.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('console_sessions')
    .addColumn('jti', 'text', (c) => c.primaryKey())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('load_key', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('ended_at', 'timestamptz')
    .addColumn('ended_reason', 'text', (c) => c.check(sql`ended_reason in ('signed_out', 'disconnected')`))
    .execute()
  await db.schema.createIndex('console_sessions_open_by_store').on('console_sessions').column('store_id').where(sql.ref('ended_at'), 'is', null).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('console_sessions').execute()
}
