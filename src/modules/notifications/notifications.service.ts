import type { Db, StoreRow } from '../../db/database.ts'
import { listPage, type Page, type PageRequest } from '../../lib/pagination.ts'
import { toRfc3339, toRfc3339OrNull } from '../../lib/time.ts'
import type { NotificationTemplate } from '../stores/index.ts'
import type { NotificationView } from './notification.schemas.ts'
import { listNotifications } from './notifications.repository.ts'
import type { NotificationStatus, NotificationsTable } from './notifications.tables.ts'
import type { Selectable } from 'kysely'

export function presentNotification(row: Selectable<NotificationsTable>): NotificationView {
  return {
    id: row.id,
    object: 'notification',
    template: row.template as NotificationTemplate,
    recipient: row.recipient,
    subscription_id: row.subscription_id,
    status: row.status,
    attempts: row.attempts,
    error: row.error,
    sent_at: toRfc3339OrNull(row.sent_at),
    created_at: toRfc3339(row.created_at),
  }
}

export type NotificationsService = ReturnType<typeof createNotificationsService>

/** The store's log of subscriber emails, as the admin API reads it. */
export function createNotificationsService({ db }: { db: Db }) {
  return {
    list(store: StoreRow, query: PageRequest & { subscription_id?: string | undefined; template?: string | undefined; status?: NotificationStatus | undefined }): Promise<Page<NotificationView>> {
      return listPage(query, (bounds) => listNotifications(db, store.id, { ...bounds, subscriptionId: query.subscription_id, template: query.template, status: query.status }), presentNotification)
    },
  }
}
