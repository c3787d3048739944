import type { Executor } from '../../db/database.ts'
import type { NotificationStatus } from './notifications.tables.ts'

/** The notifications table: one row per subscriber email (by its key), however many attempts it took. */

export function findNotificationByKey(db: Executor, dedupeKey: string) {
  return db.selectFrom('notifications').select(['id', 'status']).where('dedupe_key', '=', dedupeKey).executeTakeFirst()
}

/**
 * The log row of an email queued at an admin's request, before its first attempt (`attempts` 0): the
 * request answers with it, and the send job's first attempt finds it by its key.
 */
export function insertQueuedNotification(db: Executor, row: { id: string; storeId: string; template: string; recipient: string; subscriptionId: string; dedupeKey: string; at: Date }) {
  return db
    .insertInto('notifications')
    .values({ id: row.id, store_id: row.storeId, template: row.template, recipient: row.recipient, subscription_id: row.subscriptionId, status: 'pending', attempts: 0, dedupe_key: row.dedupeKey, created_at: row.at, updated_at: row.at })
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** Records an attempt: the row is made pending on the first, and counts every later one. */
export async function recordAttempt(db: Executor, row: { id: string; storeId: string; template: string; recipient: string; subscriptionId: string; dedupeKey: string; at: Date }): Promise<void> {
  await db
    .insertInto('notifications')
    .values({
      id: row.id,
      store_id: row.storeId,
      template: row.template,
      recipient: row.recipient,
      subscription_id: row.subscriptionId,
      status: 'pending',
      attempts: 1,
      dedupe_key: row.dedupeKey,
      created_at: row.at,
      updated_at: row.at,
    })
    .onConflict((oc) => oc.column('dedupe_key').doUpdateSet((eb) => ({ attempts: eb('notifications.attempts', '+', 1), recipient: row.recipient, updated_at: row.at })))
    .execute()
}

export async function recordOutcome(db: Executor, id: string, outcome: { status: Exclude<NotificationStatus, 'pending'>; error: string | null; at: Date }): Promise<void> {
  await db
    .updateTable('notifications')
    .set({ status: outcome.status, error: outcome.error, updated_at: outcome.at, ...(outcome.status === 'sent' ? { sent_at: outcome.at } : {}) })
    .where('id', '=', id)
    .execute()
}

/** Which of these keys are already in the log (sent or tried). */
export async function loggedKeys(db: Executor, keys: readonly string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set()
  const rows = await db.selectFrom('notifications').select('dedupe_key').where('dedupe_key', 'in', [...keys]).execute()
  return new Set(rows.map((row) => row.dedupe_key))
}

export function listNotifications(
  db: Executor,
  storeId: string,
  filter: { limit: number; afterId?: string | undefined; subscriptionId?: string | undefined; recipient?: string | undefined; template?: string | undefined; status?: NotificationStatus | undefined },
) {
  let query = db.selectFrom('notifications').selectAll().where('store_id', '=', storeId)
  // notifications_store_recipient_idx (migration 0028): one subscriber's emails without reading the store's.
  if (filter.recipient !== undefined) query = query.where('recipient', '=', filter.recipient)
  if (filter.subscriptionId) query = query.where('subscription_id', '=', filter.subscriptionId)
  if (filter.template) query = query.where('template', '=', filter.template)
  if (filter.status) query = query.where('status', '=', filter.status)
  if (filter.afterId) query = query.where('id', '<', filter.afterId)
  return query.orderBy('id', 'desc').limit(filter.limit + 1).execute()
}
