import { sql, type Kysely } from 'kysely'

/**
 * Price changes with notice (CONTRACT section 16, last bullet):
 * - `subscriptions.scheduled_amount` and `scheduled_amount_from`: the price a subscription moves to,
 *   and the renewal that first charges it (the first renewal whose period starts at or after it);
 *   both set or both null.
 * - `stores.price_change_notice_days`: the least notice a price change of existing subscriptions may give.
 * - `price_changes`: each change asked for, with the progress of scheduling it on the plan's
 *   subscriptions (a job goes through them in pages, keyset on the subscription id).
 * - `subscriptions_plan_idx` becomes (plan_id, id): a page of one plan's subscriptions in id order is
 *   read from the index instead of sorting every subscription of the plan for each page.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('subscriptions')
    .addColumn('scheduled_amount', 'integer', (c) => c.check(sql`scheduled_amount > 0`))
    .addColumn('scheduled_amount_from', 'timestamptz')
    .execute()
  await sql`ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_scheduled_price_check
            CHECK ((scheduled_amount IS NULL) = (scheduled_amount_from IS NULL))`.execute(db)
  await db.schema
    .alterTable('stores')
    .addColumn('price_change_notice_days', 'integer', (c) => c.notNull().defaultTo(30).check(sql`price_change_notice_days BETWEEN 0 AND 365`))
    .execute()
  await db.schema
    .createTable('price_changes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id'))
    .addColumn('plan_id', 'text', (c) => c.notNull().references('plans.id'))
    .addColumn('amount', 'integer', (c) => c.notNull().check(sql`amount > 0`))
    .addColumn('previous_amount', 'integer', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('applies_to', 'text', (c) => c.notNull().check(sql`applies_to IN ('new_subscriptions', 'existing_too')`))
    .addColumn('notice_days', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status IN ('scheduling', 'completed')`))
    .addColumn('total', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('scheduled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('unchanged', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('after_subscription_id', 'text')
    .addColumn('actor', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('completed_at', 'timestamptz')
    .execute()
  await db.schema.createIndex('price_changes_plan_idx').on('price_changes').columns(['plan_id', 'id']).execute()
  await db.schema.createIndex('subscriptions_plan_id_idx').on('subscriptions').columns(['plan_id', 'id']).execute()
  await db.schema.dropIndex('subscriptions_plan_idx').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // A scheduled price not yet charged would be forgotten: its subscribers were told of a change that
  // then never comes. Refused while any is waiting; apply or clear them first.
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM subscriptions WHERE scheduled_amount IS NOT NULL AND status NOT IN ('cancelled', 'expired')`.execute(db)
  if ((rows[0]?.n ?? 0) > 0) throw new Error(`${rows[0]!.n} subscription(s) have a scheduled price change their subscribers were told of: let it apply (or clear it) before migrating below 0033`)
  await db.schema.createIndex('subscriptions_plan_idx').on('subscriptions').column('plan_id').execute()
  await db.schema.dropIndex('subscriptions_plan_id_idx').execute()
  await db.schema.dropTable('price_changes').execute()
  await db.schema.alterTable('stores').dropColumn('price_change_notice_days').execute()
  await sql`ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_scheduled_price_check`.execute(db)
  await db.schema.alterTable('subscriptions').dropColumn('scheduled_amount_from').dropColumn('scheduled_amount').execute()
}
