import type { StoreRow } from '../../db/database.ts'
import type { MerchantActor } from '../../http/actors.ts'
import type { ChargesService } from '../billing/index.ts'
import type { NotificationsService } from '../notifications/index.ts'
import type { SubscriptionService } from '../subscriptions/index.ts'
import { RECENT_CHARGES, RECENT_NOTIFICATIONS, SUBSCRIPTIONS_SHOWN, type SubscriberDetailView } from './customer.schemas.ts'

export type CustomersService = ReturnType<typeof createCustomersService>

/** One subscriber as the merchant looks them up: read from the modules that hold each part, never written. */
export function createCustomersService({ subscriptions, charges, notifications }: { subscriptions: SubscriptionService; charges: ChargesService; notifications: NotificationsService }) {
  return {
    /** 404 when the store has no such subscriber; every part is the store's own (each read is by store). */
    async get(store: StoreRow, id: string, actor: MerchantActor): Promise<SubscriberDetailView> {
      const profile = await subscriptions.getSubscriberProfile(store, id)
      const [ownSubscriptions, recentCharges, emails] = await Promise.all([
        subscriptions.list(store, { limit: SUBSCRIPTIONS_SHOWN, subscriber_id: id }, actor),
        charges.list(store, { limit: RECENT_CHARGES, subscriber_id: id }),
        notifications.list(store, { limit: RECENT_NOTIFICATIONS, subscriber_id: id }),
      ])
      return {
        ...profile.subscriber,
        subscriptions: ownSubscriptions,
        shipping_addresses: profile.shipping_addresses,
        payment_instruments: profile.payment_instruments,
        charges: recentCharges,
        notifications: emails,
      }
    },
  }
}
