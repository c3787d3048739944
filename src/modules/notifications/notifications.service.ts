import type { Db, StoreRow } from '../../db/database.ts'
import { enqueue } from '../../jobs/job-kinds.ts'
import type { Clock } from '../../lib/clock.ts'
import { AppError, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { storeNow } from '../stores/index.ts'
import { findSubscriber, findSubscription } from '../subscriptions/index.ts'
import type { EmailTemplate } from './email-templates.ts'
import { SendNotification } from './notifications.jobs.ts'
import { listPage, type Page, type PageRequest } from '../../lib/pagination.ts'
import { toRfc3339, toRfc3339OrNull } from '../../lib/time.ts'
import type { NotificationView } from './notification.schemas.ts'
import { insertQueuedNotification, listNotifications } from './notifications.repository.ts'
import type { NotificationStatus, NotificationsTable } from './notifications.tables.ts'
import type { Selectable } from 'kysely'

export function presentNotification(row: Selectable<NotificationsTable>): NotificationView {
  return {
    id: row.id,
    object: 'notification',
    template: row.template as EmailTemplate,
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

/** The store's log of subscriber emails, as the admin API reads it, and the emails an admin asks for. */
export function createNotificationsService({ db, clock }: { db: Db; clock: Clock }) {
  return {
    /**
     * Emails the subscriber a single-use sign-in link that opens the portal's payment method change
     * for this subscription (docs/contract.md, Payment recovery). Queued with its log row in one
     * transaction and sent by the worker like every email; answers the log row (`pending`, 0 attempts).
     */
    async requestPaymentUpdate(store: StoreRow, subscriptionId: string): Promise<NotificationView> {
      const subscription = await findSubscription(db, store.id, subscriptionId)
      if (!subscription) throw notFound('subscription', subscriptionId)
      if (subscription.status === 'cancelled' || subscription.status === 'expired') {
        throw new AppError('invalid_state', `cannot send a payment update link: the subscription is ${subscription.status}, so nothing more is charged`)
      }
      const subscriber = await findSubscriber(db, store.id, subscription.subscriber_id)
      if (!subscriber) throw notFound('subscriber', subscription.subscriber_id)
      const id = newId('ntf')
      // Every request is an email of its own (a replay of the same Idempotency-Key answers the first).
      const dedupeKey = `payment_update_link:${id}`
      const at = storeNow(store, clock)
      return db.transaction().execute(async (trx) => {
        const row = await insertQueuedNotification(trx, { id, storeId: store.id, template: 'payment_update_link', recipient: subscriber.email, subscriptionId, dedupeKey, at })
        await enqueue(trx, SendNotification, { template: 'payment_update_link', store_id: store.id, subscription_id: subscriptionId, dedupe_key: dedupeKey, occurred_at: at.toISOString(), facts: {} }, { dedupeKey: `notification:${dedupeKey}` })
        return presentNotification(row)
      })
    },

    async list(
      store: StoreRow,
      query: PageRequest & { subscription_id?: string | undefined; subscriber_id?: string | undefined; template?: string | undefined; status?: NotificationStatus | undefined },
    ): Promise<Page<NotificationView>> {
      // A subscriber's: the emails sent to their address. An id that is no subscriber of the store finds none.
      let recipient: string | undefined
      if (query.subscriber_id !== undefined) {
        const subscriber = await findSubscriber(db, store.id, query.subscriber_id)
        if (!subscriber) return { data: [], next_cursor: null }
        recipient = subscriber.email
      }
      return listPage(query, (bounds) => listNotifications(db, store.id, { ...bounds, subscriptionId: query.subscription_id, recipient, template: query.template, status: query.status }), presentNotification)
    },
  }
}
