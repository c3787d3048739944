import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  // One-time sign-in tokens: only their hash is kept, so a database leak signs nobody in.
  await db.schema
    .createTable('magic_link_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('subscriber_id', 'text', (c) => c.notNull().references('subscribers.id').onDelete('cascade'))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute()
  await db.schema.createIndex('magic_link_tokens_expires_idx').on('magic_link_tokens').column('expires_at').execute()

  // Portal sessions signed out before they expire; a row can go once its token would have expired anyway.
  await db.schema
    .createTable('revoked_sessions')
    .addColumn('jti', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute()

  // Secrets the service makes for itself when configuration gives none, shared by every process.
  await db.schema
    .createTable('service_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute()

  // One row per attempt to collect one period (docs/contract.md, Resources); the billing engine writes them.
  await db.schema
    .createTable('charges')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('subscription_id', 'text', (c) => c.notNull().references('subscriptions.id').onDelete('restrict'))
    .addColumn('amount', 'integer', (c) => c.notNull().check(sql`amount >= 0`))
    .addColumn('currency', 'char(3)', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'succeeded', 'failed')`))
    .addColumn('attempt', 'integer', (c) => c.notNull().check(sql`attempt >= 1`))
    .addColumn('payment_instrument_id', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull().unique())
    .addColumn('failure_code', 'text')
    .addColumn('failure_message', 'text')
    .addColumn('next_retry_at', 'timestamptz')
    .addColumn('period_start', 'timestamptz', (c) => c.notNull())
    .addColumn('period_end', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('settled_at', 'timestamptz')
    .execute()
  await db.schema.createIndex('charges_subscription_idx').on('charges').columns(['subscription_id', 'id']).execute()
  // Exactly one succeeded charge per subscription and period, whatever retries or workers do.
  await sql`CREATE UNIQUE INDEX charges_one_success_per_period ON charges (subscription_id, period_start) WHERE status = 'succeeded'`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('charges').execute()
  await db.schema.dropTable('service_secrets').execute()
  await db.schema.dropTable('revoked_sessions').execute()
  await db.schema.dropTable('magic_link_tokens').execute()
}
