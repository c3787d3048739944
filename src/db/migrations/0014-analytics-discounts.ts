import { sql, type Kysely } from 'kysely'

/**
 * MRR counts "after recurring discounts" (docs/contract.md, Analytics): the subscription history
 * keeps the discount a subscription carried in each span, when it recurs (`repeating` while it has
 * cycles left, `forever`; a `once` discount changes one charge, not the recurring revenue). The
 * trigger copies it from the subscription's `discount` terms and writes a new span when they change.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('subscription_history')
    .addColumn('discount_type', 'text')
    .addColumn('discount_value', 'bigint')
    .execute()

  await sql`
    CREATE OR REPLACE FUNCTION subscription_history_record() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      at timestamptz;
      closed timestamptz;
      recurring boolean := NEW.discount IS NOT NULL AND NEW.discount->>'duration' IN ('repeating', 'forever');
    BEGIN
      IF TG_OP = 'INSERT' THEN
        at := NEW.created_at;
      ELSE
        at := CASE WHEN NEW.status = 'cancelled' AND NEW.cancelled_at IS NOT NULL THEN NEW.cancelled_at ELSE NEW.updated_at END;
        -- Never a span that ends before it begins (a due time earlier than the last change).
        UPDATE subscription_history SET valid_to = greatest(at, valid_from)
          WHERE subscription_id = NEW.id AND valid_to IS NULL
          RETURNING valid_to INTO closed;
        at := coalesce(closed, at);
      END IF;
      INSERT INTO subscription_history (subscription_id, store_id, status, amount, quantity, interval, interval_count, currency, valid_from, discount_type, discount_value)
        VALUES (NEW.id, NEW.store_id, NEW.status, NEW.amount, NEW.quantity, NEW.interval, NEW.interval_count, NEW.currency, at,
                CASE WHEN recurring THEN NEW.discount->>'type' END, CASE WHEN recurring THEN (NEW.discount->>'value')::bigint END);
      RETURN NULL;
    END
    $$`.execute(db)
  await sql`DROP TRIGGER subscription_history_update ON subscriptions`.execute(db)
  await sql`
    CREATE TRIGGER subscription_history_update AFTER UPDATE ON subscriptions FOR EACH ROW
    WHEN (OLD.status NOT IN ('cancelled', 'expired') AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.amount IS DISTINCT FROM NEW.amount OR OLD.quantity IS DISTINCT FROM NEW.quantity
      OR OLD.interval IS DISTINCT FROM NEW.interval OR OLD.interval_count IS DISTINCT FROM NEW.interval_count OR OLD.currency IS DISTINCT FROM NEW.currency
      OR OLD.discount IS DISTINCT FROM NEW.discount))
    EXECUTE FUNCTION subscription_history_record()`.execute(db)

  // Open spans take the discount their subscription carries now.
  await sql`
    UPDATE subscription_history h SET discount_type = s.discount->>'type', discount_value = (s.discount->>'value')::bigint
      FROM subscriptions s
     WHERE h.subscription_id = s.id AND h.valid_to IS NULL AND s.discount IS NOT NULL AND s.discount->>'duration' IN ('repeating', 'forever')`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Back to 0013's function and trigger, then without the columns.
  await sql`DROP TRIGGER subscription_history_update ON subscriptions`.execute(db)
  await sql`
    CREATE OR REPLACE FUNCTION subscription_history_record() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      at timestamptz;
      closed timestamptz;
    BEGIN
      IF TG_OP = 'INSERT' THEN
        at := NEW.created_at;
      ELSE
        at := CASE WHEN NEW.status = 'cancelled' AND NEW.cancelled_at IS NOT NULL THEN NEW.cancelled_at ELSE NEW.updated_at END;
        UPDATE subscription_history SET valid_to = greatest(at, valid_from)
          WHERE subscription_id = NEW.id AND valid_to IS NULL
          RETURNING valid_to INTO closed;
        at := coalesce(closed, at);
      END IF;
      INSERT INTO subscription_history (subscription_id, store_id, status, amount, quantity, interval, interval_count, currency, valid_from)
        VALUES (NEW.id, NEW.store_id, NEW.status, NEW.amount, NEW.quantity, NEW.interval, NEW.interval_count, NEW.currency, at);
      RETURN NULL;
    END
    $$`.execute(db)
  await sql`
    CREATE TRIGGER subscription_history_update AFTER UPDATE ON subscriptions FOR EACH ROW
    WHEN (OLD.status NOT IN ('cancelled', 'expired') AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.amount IS DISTINCT FROM NEW.amount OR OLD.quantity IS DISTINCT FROM NEW.quantity
      OR OLD.interval IS DISTINCT FROM NEW.interval OR OLD.interval_count IS DISTINCT FROM NEW.interval_count OR OLD.currency IS DISTINCT FROM NEW.currency))
    EXECUTE FUNCTION subscription_history_record()`.execute(db)
  await db.schema.alterTable('subscription_history').dropColumn('discount_value').dropColumn('discount_type').execute()
}
