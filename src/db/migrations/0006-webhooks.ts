import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_subscriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('event_types', sql`text[]`, (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('enabled', 'disabled')`))
    .addColumn('disabled_reason', 'text')
    // The HMAC keys must be readable to sign; they never leave the service after creation or rotation.
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', 'timestamptz')
    // Start of the current run of failures without a success: five days of it disables the endpoint.
    .addColumn('failing_since', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('webhook_subscriptions_store_idx').on('webhook_subscriptions').columns(['store_id', 'id']).execute()

  // Events not yet fanned out to endpoints: the dispatcher's work list, drained in event order.
  await db.schema.alterTable('events').addColumn('fanned_out', 'boolean', (c) => c.notNull().defaultTo(false)).execute()
  await sql`CREATE INDEX events_pending_fanout_idx ON events (position) WHERE NOT fanned_out`.execute(db)

  // One delivery per (endpoint, event); its attempts are kept apart.
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('webhook_subscription_id', 'text', (c) => c.notNull().references('webhook_subscriptions.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('event_type', 'text', (c) => c.notNull())
    // One entity's events reach an endpoint in order: a delivery waits while an earlier one of the
    // same entity to the same endpoint is pending.
    .addColumn('entity_id', 'text', (c) => c.notNull())
    .addColumn('event_position', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'succeeded', 'failed')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz')
    .addColumn('locked_until', 'timestamptz')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('delivered_at', 'timestamptz')
    .addUniqueConstraint('webhook_deliveries_endpoint_event_key', ['webhook_subscription_id', 'event_id'])
    .execute()
  await sql`CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`.execute(db)
  await sql`CREATE INDEX webhook_deliveries_entity_order_idx ON webhook_deliveries (webhook_subscription_id, entity_id, event_position) WHERE status = 'pending'`.execute(db)
  await db.schema.createIndex('webhook_deliveries_endpoint_idx').on('webhook_deliveries').columns(['webhook_subscription_id', 'id']).execute()

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('attempted_at', 'timestamptz', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('response_body', 'text')
    .execute()
  await db.schema.createIndex('webhook_attempts_delivery_idx').on('webhook_attempts').columns(['delivery_id', 'id']).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_attempts').execute()
  await db.schema.dropTable('webhook_deliveries').execute()
  await sql`DROP INDEX events_pending_fanout_idx`.execute(db)
  await db.schema.alterTable('events').dropColumn('fanned_out').execute()
  await db.schema.dropTable('webhook_subscriptions').execute()
}
