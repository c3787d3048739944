import type { Db } from '../../db/database.ts'
import { adminStore } from '../../http/admin-auth.ts'
import { PageOf, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { listPage } from '../../lib/pagination.ts'
import { toRfc3339, toRfc3339OrNull } from '../../lib/time.ts'
import { Notification, NotificationListQuery, type NotificationView } from './notification.schemas.ts'
import type { NotificationTemplate } from './notification-settings.ts'
import type { NotificationsTable } from './notifications.tables.ts'
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

/** The store's log of subscriber emails, newest first. */
export async function notificationAdminRoutes(app: App, { db }: { db: Db }): Promise<void> {
  app.get('/notifications', {
    schema: {
      operationId: 'listNotifications',
      summary: 'Subscriber emails, newest first',
      description: 'Every subscriber email the store sent or is sending, one row per email however many attempts it took. Filter by subscription, template or status. Templates switched off in the store setting `notifications` send nothing and are not listed.',
      tags: ['Notifications'],
      querystring: NotificationListQuery,
      response: { 200: PageOf(Ref(Notification), 'A page of notifications, newest first'), ...problemResponses(400) },
    },
  }, async (request) => {
    const store = adminStore(request)
    const { limit, cursor, subscription_id: subscriptionId, template, status } = request.query
    let query = db.selectFrom('notifications').selectAll().where('store_id', '=', store.id)
    if (subscriptionId) query = query.where('subscription_id', '=', subscriptionId)
    if (template) query = query.where('template', '=', template)
    if (status) query = query.where('status', '=', status)
    return listPage({ limit, cursor }, ({ afterId }) => (afterId ? query.where('id', '<', afterId) : query).orderBy('id', 'desc').limit(limit + 1).execute(), presentNotification)
  })
}
