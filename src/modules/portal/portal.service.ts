import type { Updateable } from 'kysely'
import type { Db, StoreRow, SubscribersTable } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { notFound } from '../../lib/errors.ts'
import { listPage, type Page, type PageRequest } from '../../lib/pagination.ts'
import { listChargesOfSubscription, presentCharge, type ChargeView } from '../billing/index.ts'
import type { CatalogService, PlanView } from '../catalog/index.ts'
import { storeNow } from '../stores/index.ts'
import { presentSubscriber, updateSubscriber, type Actor, type SubscriberView, type SubscriptionService } from '../subscriptions/index.ts'
import type { ProfileUpdateInput } from './portal.schemas.ts'

type SubscriberActor = Actor & { kind: 'subscriber' }

export type PortalService = ReturnType<typeof createPortalService>

/** What the portal adds to the subscription services: the subscriber's own profile, charges and swap choices. */
export function createPortalService({ db, clock, subscriptions, catalog }: { db: Db; clock: Clock; subscriptions: SubscriptionService; catalog: CatalogService }) {
  return {
    /** No event: the catalogue has none for subscribers, and subscriptions keep their own addresses. */
    async updateProfile(store: StoreRow, actor: SubscriberActor, input: ProfileUpdateInput): Promise<SubscriberView> {
      const changes: Updateable<SubscribersTable> = { updated_at: storeNow(store, clock) }
      if (input.name !== undefined) changes.name = input.name
      if (input.shipping_address !== undefined) changes.shipping_address = input.shipping_address ? JSON.stringify(input.shipping_address) : null
      const row = await updateSubscriber(db, store.id, actor.subscriberId, changes)
      if (!row) throw notFound('subscriber', actor.subscriberId)
      return presentSubscriber(row, store.store_hash)
    },

    async listCharges(store: StoreRow, actor: SubscriberActor, subscriptionId: string, page: PageRequest): Promise<Page<ChargeView>> {
      await subscriptions.get(store, subscriptionId, actor)
      return listPage(page, (bounds) => listChargesOfSubscription(db, store.id, subscriptionId, bounds), presentCharge)
    },

    /**
     * The plans `swap` accepts for this subscription (see requireSwapTarget), other than its own. Business
     * plans are the merchant's to grant: a consumer subscription is not offered them; a business one may
     * propose any plan as a change request.
     */
    async listSwapOptions(store: StoreRow, actor: SubscriberActor, subscriptionId: string, page: PageRequest): Promise<Page<PlanView>> {
      const subscription = await subscriptions.get(store, subscriptionId, actor)
      const current = await catalog.getPlan(store, subscription.plan_id)
      return catalog.listPlans(store, {
        ...page,
        active: true,
        currency: subscription.currency,
        exclude_id: subscription.plan_id,
        ...(current.b2b ? {} : { b2b: false }),
      })
    },
  }
}
