import type { Db, StoreRow } from '../../db/database.ts'
import { enqueue } from '../../jobs/job-kinds.ts'
import type { Clock } from '../../lib/clock.ts'
import { AppError, notFound } from '../../lib/errors.ts'
import { waitInWords } from '../../lib/durations.ts'
import { newId } from '../../lib/ids.ts'
import { lastEventAt, type EventLog } from '../events/index.ts'
import { storeNow } from '../stores/index.ts'
import { findSubscriber, lockForActor, presentSubscription, type Actor } from '../subscriptions/index.ts'
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

/**
 * At most one payment update link per subscription in this long, on the store's clock (docs/contract.md,
 * Payment recovery): a double click, or an admin who asks again before the first email could arrive,
 * must not fill the subscriber's inbox with sign-in links.
 */
export const PAYMENT_UPDATE_LINK_INTERVAL_MS = 10 * 60_000

/** The store's log of subscriber emails, as the admin API reads it, and the emails an admin asks for. */
export function createNotificationsService({ db, clock, events }: { db: Db; clock: Clock; events: EventLog }) {
  return {
    /**
     * Emails the subscriber a single-use sign-in link that opens the portal's payment method change
     * for this subscription (docs/contract.md, Payment recovery). Queued with its log row and the
     * event `subscription.payment_update_link_sent` (naming who asked) in one transaction, and sent
     * by the worker like every email; answers the log row (`pending`, 0 attempts). At most one per
     * subscription every PAYMENT_UPDATE_LINK_INTERVAL_MS of the store's clock: sooner is 429.
     */
    async requestPaymentUpdate(store: StoreRow, subscriptionId: string, actor: Actor): Promise<NotificationView> {
      return db.transaction().execute(async (trx) => {
        // The row lock orders requests for one subscription: the second reads the first's event once
        // it committed, so two requests at once send one link (and the event's sequence stays gapless).
        const subscription = await lockForActor(trx, store, subscriptionId, actor)
        if (subscription.status === 'cancelled' || subscription.status === 'expired') {
          throw new AppError('invalid_state', `cannot send a payment update link: the subscription is ${subscription.status}, so nothing more is charged`)
        }
        const at = storeNow(store, clock)
        const last = await lastEventAt(trx, store.id, subscriptionId, 'subscription.payment_update_link_sent')
        // A link recorded "later" than this process's now (another process's clock ahead, a clock stepped
        // back) waits a whole interval from now: letting it through sent one link per millisecond of skew.
        const wait = last === undefined ? 0 : last.getTime() > at.getTime() ? PAYMENT_UPDATE_LINK_INTERVAL_MS : last.getTime() + PAYMENT_UPDATE_LINK_INTERVAL_MS - at.getTime()
        if (wait > 0) {
          // The wait is on the store's clock. A test store's clock stands still between advances, so no
          // amount of real waiting opens the window: the client must move the clock (Retry-After still
          // says how far, in seconds, so that it stays a valid header for clients that read it).
          const opensAt = new Date(at.getTime() + wait)
          const how = store.test_clock_now !== null
            ? `this test store's clock stands still, so waiting does not help: advance its test clock (POST /api/v1/admin/test-clock/advance) to ${toRfc3339(opensAt)} or later`
            : `try again in ${waitInWords(wait)}`
          throw new AppError(
            'rate_limited',
            `a payment update link was sent for this subscription at ${last!.toISOString()}; at most one is sent every ${waitInWords(PAYMENT_UPDATE_LINK_INTERVAL_MS)}: ${how}`,
            { headers: { 'retry-after': String(Math.ceil(wait / 1_000)) } },
          )
        }
        const subscriber = await findSubscriber(trx, store.id, subscription.subscriber_id)
        if (!subscriber) throw notFound('subscriber', subscription.subscriber_id)
        const id = newId('ntf')
        // Every link is an email of its own (a replay of the same Idempotency-Key answers the first).
        const dedupeKey = `payment_update_link:${id}`
        const row = await insertQueuedNotification(trx, { id, storeId: store.id, template: 'payment_update_link', recipient: subscriber.email, subscriptionId, dedupeKey, at })
        await enqueue(trx, SendNotification, { template: 'payment_update_link', store_id: store.id, subscription_id: subscriptionId, dedupe_key: dedupeKey, occurred_at: at.toISOString(), facts: {} }, { dedupeKey: `notification:${dedupeKey}`, storeId: store.id })
        // The subscription as the API shows it: the link and its token exist only in the email, made when it is sent.
        await events.record(trx, { storeId: store.id, eventType: 'subscription.payment_update_link_sent', occurredAt: at, data: presentSubscription(subscription, store.store_hash), actor })
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
