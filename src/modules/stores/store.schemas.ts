import { Type, type Static } from 'typebox'
import { Currency, Id, StringEnum, Timestamp } from '../../http/schemas.ts'
import { MAX_AMOUNT } from '../../lib/money.ts'
import { OUT_OF_STOCK_POLICIES, RENEWAL_SHIPPING } from './stores.tables.ts'
import { CancellationReasons, RetentionOffers } from './retention-settings.ts'
import { NotificationSettings, NotificationSettingsPatch } from './notification-settings.ts'

export const StoreMode = StringEnum(['live', 'test'] as const, { description: 'Test-mode stores charge through the test gateway and may use the test clock' })

export const StoreGateway = StringEnum(['test', 'platform'] as const, {
  description: 'Which gateway charges renewals: `test` (the built-in test gateway) or `platform` (BigCommerce, through the store\'s platform connection). Live stores always use `platform`',
})

const RetryDays = Type.Array(Type.Integer({ minimum: 1, maximum: 60 }), {
  minItems: 1,
  maxItems: 10,
  description: 'Days after the first failed charge on which dunning retries, ascending',
})

export const RenewalShipping = StringEnum(RENEWAL_SHIPPING, {
  description:
    "How a renewal's shipping is chosen: `checkout_rate` (the rate and method the subscription's checkout paid), `requote` (the same method quoted again at renewal; " +
    'the kept rate until the platform quotes it), `flat` (`renewal_shipping_amount`) or `free`. A subscription without a shipping address never pays shipping',
})

const ShippingAmount = Type.Integer({ minimum: 0, maximum: MAX_AMOUNT, description: "Integer minor units of the store currency: the `flat` policy's rate" })
const TestTaxRate = Type.Integer({
  minimum: 0,
  maximum: 10_000,
  description: 'Tax the test gateway adds to renewals, in basis points of the discounted subtotal (825 = 8.25%), rounded half up; shipping is not taxed. Platform stores are taxed by the platform',
})

export const OutOfStockPolicy = StringEnum(OUT_OF_STOCK_POLICIES, {
  description:
    'What a platform renewal does when the platform says an item is out of stock: `skip` (the renewal is skipped with `skip_reason` `out_of_stock` and the subscriber told; the next one goes ahead), ' +
    '`retry` (tried again daily for up to `out_of_stock_retry_days`, then skipped) or `charge_anyway`. Nothing is charged for an out-of-stock item unless the policy says so',
})
const OutOfStockRetryDays = Type.Integer({ minimum: 1, maximum: 30, description: 'Days the `retry` policy tries an out-of-stock renewal again, once a day, before skipping it' })

const PortalReactivation = Type.Boolean({
  description: 'Whether subscribers may reactivate their cancelled subscriptions in the portal (`POST /api/v1/portal/subscriptions/{id}/reactivate`; 403 `forbidden` while off). Off by default; the admin API may always reactivate',
})

const BillingEnabled = Type.Boolean({
  description:
    'The cutover switch: while false nothing bills, retries or reminds for the store (no renewal, dunning retry, renewal reminder, card-expiry email or other due lifecycle work; ' +
    'order now, retry now and reactivation from now are 409 `billing_disabled`). Turn it off before importing, switch the old system off, then turn it on: what fell due meanwhile runs once each, oldest first. On by default',
})

const PriceChangeNoticeDays = Type.Integer({
  minimum: 0,
  maximum: 365,
  description:
    'The least notice, in days, a price change of existing subscriptions may give (`POST /plans/{id}/price-change` `notice_days`): subscriptions keep their price until their first renewal at least this long after the notice email. 30 by default',
})

export const Store = Type.Object(
  {
    id: Id('store'),
    object: Type.Literal('store'),
    store_hash: Type.String({ description: "The commerce platform's store hash" }),
    name: Type.String(),
    mode: StoreMode,
    timezone: Type.String({ description: 'IANA time zone; renewal dates follow its calendar', example: 'America/New_York' }),
    currency: Currency,
    dunning_retry_days: RetryDays,
    renewal_reminder_days: Type.Integer({ minimum: 0, maximum: 30, description: 'Days before a renewal that subscription.renewal_upcoming is sent; 0 sends none' }),
    past_due_cancel_days: Type.Integer({ minimum: 1, maximum: 365, description: 'Days in past_due before a subscription is cancelled' }),
    gateway: StoreGateway,
    renewal_shipping: RenewalShipping,
    renewal_shipping_amount: Type.Union([ShippingAmount, Type.Null()]),
    test_tax_rate_bps: TestTaxRate,
    out_of_stock: OutOfStockPolicy,
    out_of_stock_retry_days: OutOfStockRetryDays,
    billing_stopped_at: Type.Union([Timestamp, Type.Null()], {
      description: 'Set while billing is stopped because the BigCommerce app was uninstalled or the platform connection removed: no renewal, retry or due work runs until the store is connected again; its data is kept',
    }),
    billing_enabled: BillingEnabled,
    notifications: NotificationSettings,
    cancellation_reasons: CancellationReasons,
    retention_offers: RetentionOffers,
    portal_reactivation: PortalReactivation,
    price_change_notice_days: PriceChangeNoticeDays,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Store', title: 'Store', additionalProperties: false },
)
export type StoreView = Static<typeof Store>

/** `store.updated`'s data: the store after the change, and what changed. */
export const StoreChange = Type.Object(
  {
    ...Store.properties,
    changes: Type.Record(
      Type.String(),
      Type.Object(
        { from: Type.Unknown({ description: 'The value before, as the Store view showed it' }), to: Type.Unknown({ description: 'The value after' }) },
        { additionalProperties: false },
      ),
      { description: 'Each setting whose value changed, by its Store field name (`billing_enabled`, `notifications`, ...), with its value before and after; a list or an object (notifications) whole' },
    ),
  },
  {
    $id: 'StoreChange',
    title: 'StoreChange',
    description: 'The store as `GET /store` shows it after a settings change, with the settings that changed (the data of `store.updated`)',
    additionalProperties: false,
  },
)

export const UpdateStoreBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    currency: Type.Optional(Currency),
    dunning_retry_days: Type.Optional(RetryDays),
    renewal_reminder_days: Type.Optional(Type.Integer({ minimum: 0, maximum: 30 })),
    past_due_cancel_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 365 })),
    gateway: Type.Optional(StoreGateway),
    renewal_shipping: Type.Optional(RenewalShipping),
    renewal_shipping_amount: Type.Optional(Type.Union([ShippingAmount, Type.Null()], { description: 'Required (here or already set) when `renewal_shipping` is `flat`' })),
    test_tax_rate_bps: Type.Optional(TestTaxRate),
    out_of_stock: Type.Optional(OutOfStockPolicy),
    out_of_stock_retry_days: Type.Optional(OutOfStockRetryDays),
    cancellation_reasons: Type.Optional(CancellationReasons),
    retention_offers: Type.Optional(RetentionOffers),
    portal_reactivation: Type.Optional(PortalReactivation),
    billing_enabled: Type.Optional(BillingEnabled),
    price_change_notice_days: Type.Optional(PriceChangeNoticeDays),
    notifications: Type.Optional(NotificationSettingsPatch),
  },
  { additionalProperties: false, minProperties: 1 },
)
export type UpdateStoreInput = Static<typeof UpdateStoreBody>

export const StorefrontStore = Type.Object(
  {
    object: Type.Literal('storefront_store'),
    store_hash: Type.String(),
    name: Type.String({ description: "The store's name, as the portal and widgets show it" }),
  },
  { $id: 'StorefrontStore', title: 'StorefrontStore', additionalProperties: false },
)
