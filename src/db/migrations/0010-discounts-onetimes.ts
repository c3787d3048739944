import { sql, type Kysely } from 'kysely'

/**
 * Discounts and one-time add-ons (docs/contract.md, Discounts and add-ons): each store's discount
 * codes (unique per store whatever their case), the discount a subscription carries (its terms as
 * they were when applied, and the charges it still covers), add-ons waiting for the next renewal,
 * and what a charge is made of (`subtotal`, `discount_amount`, `line_items`; `amount` stays what is
 * collected: subtotal less discount).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('discounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull().check(sql`type in ('percentage', 'fixed_amount')`))
    .addColumn('value', 'bigint', (c) => c.notNull().check(sql`value > 0`))
    .addColumn('currency', 'char(3)')
    .addColumn('duration', 'text', (c) => c.notNull().check(sql`duration in ('once', 'repeating', 'forever')`))
    .addColumn('duration_in_cycles', 'integer')
    .addColumn('applies_to_plan_ids', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('max_redemptions', 'integer')
    .addColumn('times_redeemed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('starts_at', 'timestamptz')
    .addColumn('ends_at', 'timestamptz')
    .addColumn('active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addCheckConstraint('discounts_percentage_check', sql`type <> 'percentage' OR (value <= 100 AND currency IS NULL)`)
    .addCheckConstraint('discounts_fixed_currency_check', sql`type <> 'fixed_amount' OR currency IS NOT NULL`)
    .addCheckConstraint('discounts_cycles_check', sql`(duration = 'repeating') = (duration_in_cycles IS NOT NULL AND duration_in_cycles >= 1)`)
    // Redemptions never pass the limit: the counter only moves under this check.
    .addCheckConstraint('discounts_redemptions_check', sql`times_redeemed >= 0 AND (max_redemptions IS NULL OR times_redeemed <= max_redemptions)`)
    .execute()
  await sql`CREATE UNIQUE INDEX discounts_store_code_idx ON discounts (store_id, lower(code))`.execute(db)

  // The discount a subscription carries: its id, its terms as applied ({id, code, type, value,
  // currency, duration}) and the charges it still covers (null: forever while discount_id is set).
  await db.schema
    .alterTable('subscriptions')
    .addColumn('discount_id', 'text')
    .addColumn('discount', 'jsonb')
    .addColumn('discount_cycles_remaining', 'integer', (c) => c.check(sql`discount_cycles_remaining >= 1`))
    .execute()

  await db.schema
    .createTable('onetimes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('subscription_id', 'text', (c) => c.notNull().references('subscriptions.id').onDelete('cascade'))
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('quantity', 'integer', (c) => c.notNull().check(sql`quantity between 1 and 100`))
    .addColumn('unit_amount', 'bigint', (c) => c.notNull().check(sql`unit_amount >= 0`))
    .addColumn('currency', 'char(3)', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'charged', 'removed')`))
    .addColumn('charge_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('onetimes_subscription_idx').on('onetimes').columns(['subscription_id', 'status']).execute()

  // What a charge is made of. Existing charges were the plan's price x quantity, undiscounted.
  await db.schema
    .alterTable('charges')
    .addColumn('subtotal', 'bigint')
    .addColumn('discount_amount', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('discount_id', 'text')
    .addColumn('line_items', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute()
  await sql`UPDATE charges SET subtotal = amount`.execute(db)
  // A writer that does not know the breakdown (older code, fixtures) wrote an undiscounted charge.
  await sql`
    CREATE FUNCTION charges_default_subtotal() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.subtotal IS NULL THEN NEW.subtotal := NEW.amount + coalesce(NEW.discount_amount, 0); END IF;
      RETURN NEW;
    END $$`.execute(db)
  await sql`CREATE TRIGGER charges_default_subtotal BEFORE INSERT ON charges FOR EACH ROW EXECUTE FUNCTION charges_default_subtotal()`.execute(db)
  await sql`ALTER TABLE charges ALTER COLUMN subtotal SET NOT NULL`.execute(db)
  await sql`ALTER TABLE charges ADD CONSTRAINT charges_discount_check CHECK (discount_amount >= 0 AND discount_amount <= subtotal AND amount = subtotal - discount_amount)`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE charges DROP CONSTRAINT charges_discount_check`.execute(db)
  await sql`DROP TRIGGER charges_default_subtotal ON charges`.execute(db)
  await sql`DROP FUNCTION charges_default_subtotal()`.execute(db)
  await db.schema.alterTable('charges').dropColumn('line_items').dropColumn('discount_id').dropColumn('discount_amount').dropColumn('subtotal').execute()
  await db.schema.dropTable('onetimes').execute()
  await db.schema.alterTable('subscriptions').dropColumn('discount_cycles_remaining').dropColumn('discount').dropColumn('discount_id').execute()
  await db.schema.dropTable('discounts').execute()
}
