import { sql, type Kysely } from 'kysely'

/**
 * Bulk operations (CONTRACT section 16): one action over many subscriptions, run by the worker a page
 * at a time. The operation's targets are fixed when it is created (`bulk_operation_items`, one row per
 * subscription, `pending` until its action ran), so a filter matching other subscriptions later (a swap
 * moves them out of `plan_id=...`) neither skips nor repeats any; each item keeps its own outcome.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('bulk_operations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id'))
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('params', 'jsonb', (c) => c.notNull())
    .addColumn('filter', 'jsonb')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status IN ('running', 'completed')`))
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('succeeded', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('actor', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('finished_at', 'timestamptz')
    .execute()
  await db.schema.createIndex('bulk_operations_store_idx').on('bulk_operations').columns(['store_id', 'id']).execute()
  await db.schema
    .createTable('bulk_operation_items')
    .addColumn('operation_id', 'text', (c) => c.notNull().references('bulk_operations.id').onDelete('cascade'))
    .addColumn('subscription_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status IN ('pending', 'succeeded', 'failed')`))
    // Its next renewal when it was chosen: a reschedule moves only that renewal (not one made meanwhile).
    .addColumn('next_charge_at', 'timestamptz')
    .addColumn('code', 'text')
    .addColumn('detail', 'text')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('bulk_operation_items_pkey', ['operation_id', 'subscription_id'])
    .execute()
  // The next page of pending items, and the results filtered by outcome, in id order.
  await db.schema.createIndex('bulk_operation_items_status_idx').on('bulk_operation_items').columns(['operation_id', 'status', 'subscription_id']).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('bulk_operation_items').execute()
  await db.schema.dropTable('bulk_operations').execute()
}
