import { adminActor } from '../../http/actors.ts'
import { adminStore } from '../../http/admin-auth.ts'
import { IdParams, PageOf, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { Notification, NotificationListQuery } from './notification.schemas.ts'
import type { NotificationsService } from './notifications.service.ts'

/** The store's log of subscriber emails, newest first; and the payment update link an admin sends. */
export async function notificationAdminRoutes(app: App, notifications: NotificationsService): Promise<void> {
  app.get('/notifications', {
    schema: {
      operationId: 'listNotifications',
      summary: 'Subscriber emails, newest first',
      description: 'Every subscriber email the store sent or is sending, one row per email however many attempts it took. Filter by subscription, subscriber (the emails sent to their address), template or status. Templates switched off in the store setting `notifications` send nothing and are not listed.',
      tags: ['Notifications'],
      querystring: NotificationListQuery,
      response: { 200: PageOf(Ref(Notification), 'A page of notifications, newest first'), ...problemResponses(400) },
    },
  }, async (request) => notifications.list(adminStore(request), request.query))

  app.post('/subscriptions/:id/payment-update-link', {
    schema: {
      operationId: 'sendPaymentUpdateLink',
      summary: 'Email the subscriber a link to update their payment method',
      description:
        "Queues a `payment_update_link` email to the subscriber with a single-use sign-in link (valid 72 hours, like every email's links) that opens the portal's payment method change for this subscription " +
        '(`{PORTAL_URL}/login?token=...&store=...&subscription={id}&action=payment-instrument`): once signed in, the subscriber chooses the card the subscription pays with; a subscription in dunning or past due retries at once with it. ' +
        "202 with the email's log row (`status: pending`, `attempts: 0`), as `GET /notifications` lists it from then on; the worker sends it, with retries, like every subscriber email. It is sent whatever the store's `notifications` switches say (an admin asked for it). " +
        'Records the event `subscription.payment_update_link_sent` (the subscription, and `actor`: who asked) with the email; neither the link nor its token is in the event. ' +
        "At most one link per subscription every 10 minutes, counted on the store's clock (a test store's test clock): sooner is 429 `rate_limited` with `Retry-After` (seconds) and no email. " +
        'Each link sent is an email of its own (an `Idempotency-Key` replay answers the first). 409 `invalid_state` for a cancelled or expired subscription.',
      tags: ['Subscriptions'],
      params: IdParams('sub'),
      response: { 202: Ref(Notification), ...problemResponses(404, 409, 429) },
    },
  }, async (request, reply) => {
    const { store, actor } = adminActor(request)
    return reply.code(202).send(await notifications.requestPaymentUpdate(store, request.params.id, actor))
  })
}
