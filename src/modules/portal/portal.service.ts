import type { StoreRow } from '../../db/database.ts'
import type { SubscriberActor } from '../../http/actors.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Page, PageRequest } from '../../lib/pagination.ts'
import { toRfc3339 } from '../../lib/time.ts'
import type { ChargesService, ChargeView } from '../billing/index.ts'
import type { CatalogService, PlanView } from '../catalog/index.ts'
import { presentInstrument, type PaymentInstrumentListView, type StoredCard, type StoredInstruments } from '../platform/index.ts'
import { storeNow } from '../stores/index.ts'
import type { SubscriberView, SubscriptionService } from '../subscriptions/index.ts'
import type { PortalStoreView, ProfileUpdateInput, SubscriptionVariantListView } from './portal.schemas.ts'

export type PortalService = ReturnType<typeof createPortalService>

/**
 * What the portal adds to the subscription services: the subscriber's own profile, their store as the
 * pages show it, their stored cards, charges and swap choices. Every answer is the signed-in
 * subscriber's own: nothing of another subscriber or store is found.
 */
export function createPortalService({ clock, subscriptions, charges, catalog, instruments }: {
  clock: Clock
  subscriptions: SubscriptionService
  charges: ChargesService
  catalog: CatalogService
  instruments: StoredInstruments
}) {
  return {
    profile: (store: StoreRow, actor: SubscriberActor): Promise<SubscriberView> => subscriptions.getSubscriber(store, actor.subscriberId),

    updateProfile: (store: StoreRow, actor: SubscriberActor, input: ProfileUpdateInput): Promise<SubscriberView> => subscriptions.updateSubscriber(store, actor.subscriberId, input),

    /** `now` is the store's clock (its test clock on a test store), so a date picker's tomorrow is the store's. */
    store(store: StoreRow): PortalStoreView {
      return {
        object: 'portal_store',
        store_hash: store.store_hash,
        name: store.name,
        timezone: store.timezone,
        now: toRfc3339(storeNow(store, clock)),
        past_due_cancel_days: store.past_due_cancel_days,
        cancellation_reasons: store.cancellation_reasons,
        reactivation: store.portal_reactivation,
      }
    },

    /** The subscriber's own platform customer's stored cards; a gift's recipient never sees the buyer's. */
    async paymentInstruments(store: StoreRow, actor: SubscriberActor): Promise<PaymentInstrumentListView> {
      if (store.gateway !== 'platform') return { gateway: 'test', data: [] }
      const customerId = await subscriptions.platformCustomerOf(store, actor.subscriberId)
      if (customerId === null) return { gateway: 'platform', data: [] }
      const cards = (await instruments.list(store, customerId)).filter((instrument): instrument is StoredCard => instrument.type === 'stored_card')
      return { gateway: 'platform', data: cards.map(presentInstrument) }
    },

    async listCharges(store: StoreRow, actor: SubscriberActor, subscriptionId: string, page: PageRequest): Promise<Page<ChargeView>> {
      await subscriptions.get(store, subscriptionId, actor)
      return charges.listOfSubscription(store, subscriptionId, page)
    },

    /**
     * The variants of the subscription's product a swap on the current plan may change to, read live
     * from the platform (see SubscriptionService.variantChoices); 503 when the platform cannot say.
     */
    async listVariants(store: StoreRow, actor: SubscriberActor, subscriptionId: string): Promise<SubscriptionVariantListView> {
      return { object: 'list', data: await subscriptions.variantChoices(store, subscriptionId, actor) }
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
