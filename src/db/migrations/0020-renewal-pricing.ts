import { sql, type Kysely } from 'kysely'

/**
 * Renewals priced as the store prices them (docs/contract.md, "Renewal pricing"): a charge carries its
 * shipping and tax beside its subtotal and discount, and `amount` is their sum; a store says how a
 * renewal's shipping is chosen and, in test mode, what tax rate its test gateway applies; a
 * subscription keeps the shipping method and rate its checkout paid. A platform renewal's order is made
 * from a platform checkout, whose cart the charge keeps.
 *
 * Existing charges had neither shipping nor tax (both 0), so the sum holds for them as it stands.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('stores')
    .addColumn('renewal_shipping', 'text', (c) => c.notNull().defaultTo('checkout_rate').check(sql`renewal_shipping in ('checkout_rate', 'requote', 'flat', 'free')`))
    .addColumn('renewal_shipping_amount', 'bigint', (c) => c.check(sql`renewal_shipping_amount >= 0`))
    .addColumn('test_tax_rate_bps', 'integer', (c) => c.notNull().defaultTo(0).check(sql`test_tax_rate_bps between 0 and 10000`))
    .execute()
  // A flat rate without an amount would ship for nothing while the merchant thinks it charges.
  await sql`ALTER TABLE stores ADD CONSTRAINT stores_flat_shipping_check CHECK (renewal_shipping <> 'flat' OR renewal_shipping_amount IS NOT NULL)`.execute(db)

  await db.schema
    .alterTable('subscriptions')
    .addColumn('shipping_method', 'text')
    .addColumn('shipping_amount', 'bigint', (c) => c.check(sql`shipping_amount >= 0`))
    .execute()

  await db.schema
    .alterTable('charges')
    .addColumn('shipping_amount', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`shipping_amount >= 0`))
    .addColumn('tax_amount', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`tax_amount >= 0`))
    .addColumn('shipping_method', 'text')
    // The platform cart (its id is also its checkout's) this charge's renewal order is made from.
    .addColumn('platform_cart_id', 'text')
    .execute()
  await sql`ALTER TABLE charges DROP CONSTRAINT charges_discount_check`.execute(db)
  await sql`ALTER TABLE charges ADD CONSTRAINT charges_breakdown_check CHECK (discount_amount >= 0 AND discount_amount <= subtotal AND amount = subtotal - discount_amount + shipping_amount + tax_amount)`.execute(db)
  // A writer that does not know the breakdown (fixtures) wrote a charge of its subtotal less the discount.
  await sql`
    CREATE OR REPLACE FUNCTION charges_default_subtotal() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.subtotal IS NULL THEN
        NEW.subtotal := NEW.amount + coalesce(NEW.discount_amount, 0) - coalesce(NEW.shipping_amount, 0) - coalesce(NEW.tax_amount, 0);
      END IF;
      RETURN NEW;
    END $$`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION charges_default_subtotal() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.subtotal IS NULL THEN NEW.subtotal := NEW.amount + coalesce(NEW.discount_amount, 0); END IF;
      RETURN NEW;
    END $$`.execute(db)
  await sql`ALTER TABLE charges DROP CONSTRAINT charges_breakdown_check`.execute(db)
  await db.schema.alterTable('charges').dropColumn('platform_cart_id').dropColumn('shipping_method').dropColumn('tax_amount').dropColumn('shipping_amount').execute()
  // NOT VALID: charges that carried shipping or tax would break the old rule; new rows still keep it.
  await sql`ALTER TABLE charges ADD CONSTRAINT charges_discount_check CHECK (discount_amount >= 0 AND discount_amount <= subtotal AND amount = subtotal - discount_amount) NOT VALID`.execute(db)
  await db.schema.alterTable('subscriptions').dropColumn('shipping_amount').dropColumn('shipping_method').execute()
  await sql`ALTER TABLE stores DROP CONSTRAINT stores_flat_shipping_check`.execute(db)
  await db.schema.alterTable('stores').dropColumn('test_tax_rate_bps').dropColumn('renewal_shipping_amount').dropColumn('renewal_shipping').execute()
}
