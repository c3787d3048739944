import { Type, type Static } from 'typebox'
import { Id, Nullable, PageOf, Ref } from '../../http/schemas.ts'
import { Charge } from '../billing/index.ts'
import { Notification } from '../notifications/index.ts'
import { ShippingAddress, Subscriber, Subscription } from '../subscriptions/index.ts'

/** How many of a subscriber's charges and emails their page shows; the rest page on in their own lists. */
export const RECENT_CHARGES = 10
export const RECENT_NOTIFICATIONS = 10
/** A page of subscriptions: the most a list answers at once. */
export const SUBSCRIPTIONS_SHOWN = 100

const SubscriptionIds = Type.Array(Id('sub'), { description: 'The subscriptions that use it, newest first' })

export const SubscriberShippingAddress = Type.Object(
  { address: Type.Object(ShippingAddress.properties, { additionalProperties: false }), subscription_ids: SubscriptionIds },
  { $id: 'SubscriberShippingAddress', title: 'SubscriberShippingAddress', additionalProperties: false },
)

export const SubscriberPaymentInstrument = Type.Object(
  {
    id: Type.String({ description: "The platform vault's instrument id (never a card number)" }),
    brand: Nullable(Type.String(), { description: 'As the platform listed it; null on the test gateway' }),
    last4: Nullable(Type.String({ pattern: '^[0-9]{4}$' })),
    expiry_month: Nullable(Type.Integer({ minimum: 1, maximum: 12 })),
    expiry_year: Nullable(Type.Integer()),
    subscription_ids: SubscriptionIds,
  },
  { $id: 'SubscriberPaymentInstrument', title: 'SubscriberPaymentInstrument', additionalProperties: false },
)

export const SubscriberDetail = Type.Object(
  {
    ...Subscriber.properties,
    subscriptions: PageOf(
      Ref(Subscription),
      `Every subscription, in any state, newest first (${SUBSCRIPTIONS_SHOWN} at most); \`next_cursor\` pages on in GET /api/v1/admin/subscriptions?subscriber_id=`,
    ),
    shipping_addresses: Type.Array(Ref(SubscriberShippingAddress), { description: 'Where their subscriptions ship, each address once, the most recently used first (50 at most)' }),
    payment_instruments: Type.Array(Ref(SubscriberPaymentInstrument), {
      description: 'What pays their subscriptions, as stored (brand, last 4, expiry; never card data), each once, the most recently used first (50 at most)',
    }),
    charges: PageOf(Ref(Charge), `The ${RECENT_CHARGES} latest charge attempts of their subscriptions; \`next_cursor\` pages on in GET /api/v1/admin/charges?subscriber_id=`),
    notifications: PageOf(Ref(Notification), `The ${RECENT_NOTIFICATIONS} latest emails sent to their address; \`next_cursor\` pages on in GET /api/v1/admin/notifications?subscriber_id=`),
  },
  { $id: 'SubscriberDetail', title: 'SubscriberDetail', additionalProperties: false },
)
export type SubscriberDetailView = Static<typeof SubscriberDetail>
