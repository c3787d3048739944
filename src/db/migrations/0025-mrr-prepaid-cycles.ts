import { sql, type Kysely } from 'kysely'

/**
 * MRR divides a prepaid charge by the cycles it pays for (CONTRACT section 12: "a prepaid charge of
 * 6120 covering 3 months is 2040 a month"). The subscription history keeps, per span, how many cycles
 * one charge of the subscription pays (`cycles`: its prepaid block, else 1); the trigger copies it and
 * writes a new span when it changes. Before, a 3-month block counted as monthly revenue three times over.
 */
const RECORD_WITH = (cyclesColumn: boolean) => sql`
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
      INSERT INTO subscription_history (subscription_id, store_id, status, amount, quantity, interval, interval_count, currency, valid_from, discount_type, discount_value${cyclesColumn ? sql`, cycles` : sql``})
        VALUES (NEW.id, NEW.store_id, NEW.status, NEW.amount, NEW.quantity, NEW.interval, NEW.interval_count, NEW.currency, at,
                CASE WHEN recurring THEN NEW.discount->>'type' END, CASE WHEN recurring THEN (NEW.discount->>'value')::bigint END${cyclesColumn ? sql`, coalesce(NEW.prepaid_cycles_total, 1)` : sql``});
      RETURN NULL;
    END
    $$`

const UPDATE_TRIGGER_WITH = (cyclesColumn: boolean) => sql`
    CREATE TRIGGER subscription_history_update AFTER UPDATE ON subscriptions FOR EACH ROW
    WHEN (OLD.status NOT IN ('cancelled', 'expired') AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.amount IS DISTINCT FROM NEW.amount OR OLD.quantity IS DISTINCT FROM NEW.quantity
      OR OLD.interval IS DISTINCT FROM NEW.interval OR OLD.interval_count IS DISTINCT FROM NEW.interval_count OR OLD.currency IS DISTINCT FROM NEW.currency
      OR OLD.discount IS DISTINCT FROM NEW.discount${cyclesColumn ? sql` OR OLD.prepaid_cycles_total IS DISTINCT FROM NEW.prepaid_cycles_total` : sql``}))
    EXECUTE FUNCTION subscription_history_record()`

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('subscription_history').addColumn('cycles', 'integer', (c) => c.notNull().defaultTo(1).check(sql`cycles >= 1`)).execute()
  await RECORD_WITH(true).execute(db)
  await sql`DROP TRIGGER subscription_history_update ON subscriptions`.execute(db)
  await UPDATE_TRIGGER_WITH(true).execute(db)
  // Every span of a prepaid subscription: its block (a plan's prepaid cycles do not change).
  await sql`
    UPDATE subscription_history h SET cycles = s.prepaid_cycles_total
      FROM subscriptions s
     WHERE h.subscription_id = s.id AND s.prepaid_cycles_total IS NOT NULL`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER subscription_history_update ON subscriptions`.execute(db)
  await RECORD_WITH(false).execute(db)
  await UPDATE_TRIGGER_WITH(false).execute(db)
  await db.schema.alterTable('subscription_history').dropColumn('cycles').execute()
}
