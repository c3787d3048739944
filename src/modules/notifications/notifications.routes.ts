import { adminStore } from '../../http/admin-auth.ts'
import { PageOf, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { Notification, NotificationListQuery } from './notification.schemas.ts'
import type { NotificationsService } from './notifications.service.ts'

/** The store's log of subscriber emails, newest first. */
export async function notificationAdminRoutes(app: App, notifications: NotificationsService): Promise<void> {
  app.get('/notifications', {
    schema: {
      operationId: 'listNotifications',
      summary: 'Subscriber emails, newest first',
      description: 'Every subscriber email the store sent or is sending, one row per email however many attempts it took. Filter by subscription, template or status. Templates switched off in the store setting `notifications` send nothing and are not listed.',
      tags: ['Notifications'],
      querystring: NotificationListQuery,
      response: { 200: PageOf(Ref(Notification), 'A page of notifications, newest first'), ...problemResponses(400) },
    },
  }, async (request) => notifications.list(adminStore(request), request.query))
}
