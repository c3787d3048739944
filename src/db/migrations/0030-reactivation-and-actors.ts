import { sql, type Kysely } from 'kysely'

/**
 * Reactivation and who did what (CONTRACT section 17):
 *
 * - `stores.portal_reactivation`: whether subscribers may reactivate a cancelled subscription in the
 *   portal (off by default; the admin API always may).
 * - `refunds.requested_by`: who asked for a refund (an admin key or the console), so its
 *   `charge.refunded` event names them even when the refund is carried out later by the refund pass;
 *   null for automatic refunds and for refunds made before.
 * - The subscription history records a move out of `cancelled` (a reactivation): before, a change to
 *   a cancelled row was never recorded, so a reactivated subscription stayed cancelled in the history
 *   and MRR left it out.
 */
const UPDATE_TRIGGER_WHEN = (fromFinal: boolean) => sql`
    CREATE TRIGGER subscription_history_update AFTER UPDATE ON subscriptions FOR EACH ROW
    WHEN (${fromFinal ? sql`(OLD.status NOT IN ('cancelled', 'expired') OR NEW.status NOT IN ('cancelled', 'expired'))` : sql`OLD.status NOT IN ('cancelled', 'expired')`}
      AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.amount IS DISTINCT FROM NEW.amount OR OLD.quantity IS DISTINCT FROM NEW.quantity
      OR OLD.interval IS DISTINCT FROM NEW.interval OR OLD.interval_count IS DISTINCT FROM NEW.interval_count OR OLD.currency IS DISTINCT FROM NEW.currency
      OR OLD.discount IS DISTINCT FROM NEW.discount OR OLD.prepaid_cycles_total IS DISTINCT FROM NEW.prepaid_cycles_total))
    EXECUTE FUNCTION subscription_history_record()`

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('stores').addColumn('portal_reactivation', 'boolean', (c) => c.notNull().defaultTo(false)).execute()
  await db.schema.alterTable('refunds').addColumn('requested_by', 'jsonb').execute()
  await sql`DROP TRIGGER subscription_history_update ON subscriptions`.execute(db)
  await UPDATE_TRIGGER_WHEN(true).execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER subscription_history_update ON subscriptions`.execute(db)
  await UPDATE_TRIGGER_WHEN(false).execute(db)
  await db.schema.alterTable('refunds').dropColumn('requested_by').execute()
  await db.schema.alterTable('stores').dropColumn('portal_reactivation').execute()
}
