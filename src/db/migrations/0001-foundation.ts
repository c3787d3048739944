import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('stores')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('store_hash', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('live', 'test')`))
    .addColumn('timezone', 'text', (c) => c.notNull().defaultTo('UTC'))
    .addColumn('currency', 'char(3)', (c) => c.notNull().defaultTo('USD'))
    .addColumn('dunning_retry_days', sql`integer[]`, (c) => c.notNull().defaultTo(sql`'{1,3,5,7}'`))
    .addColumn('renewal_reminder_days', 'integer', (c) => c.notNull().defaultTo(3))
    .addColumn('past_due_cancel_days', 'integer', (c) => c.notNull().defaultTo(30))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute()

  await db.schema
    .createTable('admin_api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('key_prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .execute()
  await db.schema.createIndex('admin_api_keys_store_idx').on('admin_api_keys').column('store_id').execute()

  await db.schema
    .createTable('products')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('platform_product_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('one_time_amount', 'integer', (c) => c.check(sql`one_time_amount >= 0`))
    .addColumn('one_time_currency', 'char(3)')
    .addCheckConstraint('products_one_time_price_check', sql`(one_time_amount is null) = (one_time_currency is null)`)
    .addColumn('active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('products_store_platform_product_key', ['store_id', 'platform_product_id'])
    .execute()

  await db.schema
    .createTable('plans')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    // restrict: a product cannot vanish from under its plans (nor, later, a plan from under its subscriptions)
    .addColumn('product_id', 'text', (c) => c.notNull().references('products.id').onDelete('restrict'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('amount', 'integer', (c) => c.notNull().check(sql`amount >= 0`))
    .addColumn('currency', 'char(3)', (c) => c.notNull())
    .addColumn('interval', 'text', (c) => c.notNull().check(sql`interval in ('day', 'week', 'month', 'year')`))
    .addColumn('interval_count', 'integer', (c) => c.notNull().check(sql`interval_count >= 1`))
    .addColumn('trial_days', 'integer', (c) => c.notNull().defaultTo(0).check(sql`trial_days >= 0`))
    .addColumn('prepaid_cycles', 'integer', (c) => c.check(sql`prepaid_cycles >= 2`))
    .addColumn('b2b', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute()
  await db.schema.createIndex('plans_store_product_idx').on('plans').columns(['store_id', 'product_id', 'id']).execute()
  await db.schema.createIndex('plans_store_id_idx').on('plans').columns(['store_id', 'id']).execute()
  await db.schema.createIndex('products_store_id_idx').on('products').columns(['store_id', 'id']).execute()

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('response_content_type', 'text')
    .addColumn('locked_until', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('idempotency_keys_pkey', ['scope', 'key'])
    .execute()
  await db.schema.createIndex('idempotency_keys_created_idx').on('idempotency_keys').column('created_at').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['idempotency_keys', 'plans', 'products', 'admin_api_keys', 'stores']) {
    await db.schema.dropTable(table).execute()
  }
}
