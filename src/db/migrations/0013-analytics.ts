import { sql, type Kysely } from 'kysely'

/**
 * What the analytics summary (and later a daily time series) reads, so each figure is one indexed
 * aggregate over the store's rows (docs/contract.md, Analytics):
 *
 * - `subscription_history`: each subscription's successive states (status, unit amount, quantity,
 *   interval, currency) with the span of store time each held (`valid_from` inclusive, `valid_to`
 *   exclusive, null while current). MRR and the active count "at a moment" are the rows whose span
 *   covers it. A trigger on `subscriptions` writes it, so every write path (checkout, actions, due work,
 *   renewals, batched updates, and paths added later) is covered without each of them knowing. Times
 *   are the store's clock: `created_at` for the first row, then `cancelled_at` when the change cancels,
 *   otherwise `updated_at` (every write sets it to the store's time of the change; due work to its due
 *   time).
 * - indexes for revenue (succeeded charges and refunds by settlement time), dunning (failed charges
 *   by settlement time, and by subscription and period) and new subscriptions (by creation time).
 *
 * Subscriptions that exist before this migration get their history from what the row says: one
 * state from `created_at`; a cancelled one is active from `created_at` until `cancelled_at`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('subscription_history')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('subscription_id', 'text', (c) => c.notNull())
    .addColumn('store_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('quantity', 'integer', (c) => c.notNull())
    .addColumn('interval', 'text', (c) => c.notNull())
    .addColumn('interval_count', 'integer', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('valid_from', 'timestamptz', (c) => c.notNull())
    .addColumn('valid_to', 'timestamptz')
    .execute()
  // The state at a moment, per store: rows that began by then, narrowed by where they end.
  await sql`CREATE INDEX subscription_history_store_idx ON subscription_history (store_id, valid_from) INCLUDE (valid_to, status, currency)`.execute(db)
  // The trigger closes a subscription's open row.
  await sql`CREATE INDEX subscription_history_open_idx ON subscription_history (subscription_id) WHERE valid_to IS NULL`.execute(db)

  await sql`
    CREATE FUNCTION subscription_history_record() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      at timestamptz;
      closed timestamptz;
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
      INSERT INTO subscription_history (subscription_id, store_id, status, amount, quantity, interval, interval_count, currency, valid_from)
        VALUES (NEW.id, NEW.store_id, NEW.status, NEW.amount, NEW.quantity, NEW.interval, NEW.interval_count, NEW.currency, at);
      RETURN NULL;
    END
    $$`.execute(db)
  await sql`CREATE TRIGGER subscription_history_insert AFTER INSERT ON subscriptions FOR EACH ROW EXECUTE FUNCTION subscription_history_record()`.execute(db)
  // Renewals, reminders and dunning bookkeeping change none of these columns: they write no history.
  // Nothing after a final status (cancelled, expired) changes what the analytics count.
  await sql`
    CREATE TRIGGER subscription_history_update AFTER UPDATE ON subscriptions FOR EACH ROW
    WHEN (OLD.status NOT IN ('cancelled', 'expired') AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.amount IS DISTINCT FROM NEW.amount OR OLD.quantity IS DISTINCT FROM NEW.quantity
      OR OLD.interval IS DISTINCT FROM NEW.interval OR OLD.interval_count IS DISTINCT FROM NEW.interval_count OR OLD.currency IS DISTINCT FROM NEW.currency))
    EXECUTE FUNCTION subscription_history_record()`.execute(db)

  // Existing subscriptions: what their rows say.
  await sql`
    INSERT INTO subscription_history (subscription_id, store_id, status, amount, quantity, interval, interval_count, currency, valid_from, valid_to)
    SELECT id, store_id, CASE WHEN status = 'cancelled' AND cancelled_at IS NOT NULL THEN 'active' ELSE status END,
      amount, quantity, interval, interval_count, currency, created_at,
      CASE WHEN status = 'cancelled' AND cancelled_at IS NOT NULL THEN greatest(cancelled_at, created_at) END
    FROM subscriptions`.execute(db)
  await sql`
    INSERT INTO subscription_history (subscription_id, store_id, status, amount, quantity, interval, interval_count, currency, valid_from)
    SELECT id, store_id, status, amount, quantity, interval, interval_count, currency, greatest(cancelled_at, created_at)
    FROM subscriptions WHERE status = 'cancelled' AND cancelled_at IS NOT NULL`.execute(db)

  await sql`CREATE INDEX subscriptions_store_created_idx ON subscriptions (store_id, created_at)`.execute(db)
  await sql`CREATE INDEX charges_succeeded_settled_idx ON charges (store_id, settled_at) INCLUDE (amount, currency) WHERE status = 'succeeded'`.execute(db)
  await sql`CREATE INDEX charges_failed_settled_idx ON charges (store_id, settled_at) WHERE status = 'failed'`.execute(db)
  await sql`CREATE INDEX charges_failed_period_idx ON charges (subscription_id, period_start, settled_at) WHERE status = 'failed'`.execute(db)
  await sql`CREATE INDEX refunds_succeeded_settled_idx ON refunds (store_id, settled_at) INCLUDE (amount, currency) WHERE status = 'succeeded'`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const index of ['refunds_succeeded_settled_idx', 'charges_failed_period_idx', 'charges_failed_settled_idx', 'charges_succeeded_settled_idx', 'subscriptions_store_created_idx']) {
    await sql`DROP INDEX ${sql.raw(index)}`.execute(db)
  }
  await sql`DROP TRIGGER subscription_history_update ON subscriptions`.execute(db)
  await sql`DROP TRIGGER subscription_history_insert ON subscriptions`.execute(db)
  await sql`DROP FUNCTION subscription_history_record()`.execute(db)
  await db.schema.dropTable('subscription_history').execute()
}
