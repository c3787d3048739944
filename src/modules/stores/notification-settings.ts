import { Type, type Static } from 'typebox'

/**
 * The subscriber emails a store can send, each on or off per store (store setting `notifications`).
 * A leaf file: the store schema reads it, and it reads nothing of the service.
 */
export const NOTIFICATION_TEMPLATES = [
  'subscription_created',
  'renewal_upcoming',
  'payment_failed',
  'past_due',
  'cancelled',
  'payment_instrument_expiring',
  'renewal_skipped',
  'price_change_notice',
] as const
export type NotificationTemplate = (typeof NOTIFICATION_TEMPLATES)[number]

const DESCRIPTIONS: Record<NotificationTemplate, string> = {
  subscription_created: 'When a checkout starts a subscription',
  renewal_upcoming: 'With `subscription.renewal_upcoming` (the store\'s `renewal_reminder_days` before a renewal): amount, date, links to skip or manage',
  payment_failed: 'With each `charge.failed`: a link that signs the subscriber in and opens the payment method change',
  past_due: 'With `subscription.past_due`, when dunning gave up',
  cancelled: 'With `subscription.cancelled`',
  payment_instrument_expiring: 'Once per card and renewal, when the card on file expires before the next renewal (cards of platform stores, whose expiry is known)',
  renewal_skipped: 'With `subscription.skipped` when a renewal was skipped because the platform said an item was out of stock (store setting `out_of_stock`): nothing was charged, and when the next renewal is',
  price_change_notice: 'With `subscription.price_change_scheduled`, the notice of a price change: the price now, the new price and the date of the renewal that first charges it',
}

/** The store's switches as the Store view shows them: every template, true (on) or false (off). */
export const NotificationSettings = Type.Object(
  Object.fromEntries(NOTIFICATION_TEMPLATES.map((template) => [template, Type.Boolean({ description: DESCRIPTIONS[template] })])) as Record<NotificationTemplate, ReturnType<typeof Type.Boolean>>,
  { additionalProperties: false, description: 'Subscriber emails, each on (true) or off (false); all are on for a new store' },
)
export type NotificationSettingsView = Static<typeof NotificationSettings>

/** A PATCH names only the switches it changes. */
export const NotificationSettingsPatch = Type.Partial(NotificationSettings, {
  additionalProperties: false,
  minProperties: 1,
  description: 'The switches to change; templates not named keep their setting',
})

/** The stored switches completed: a template not named is on. */
export function notificationSettingsOf(stored: Record<string, boolean> | null | undefined): NotificationSettingsView {
  return Object.fromEntries(NOTIFICATION_TEMPLATES.map((template) => [template, stored?.[template] !== false])) as NotificationSettingsView
}

export function isNotificationOn(stored: Record<string, boolean> | null | undefined, template: NotificationTemplate): boolean {
  return stored?.[template] !== false
}
