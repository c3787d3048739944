import { Type, type Static } from 'typebox'
import { Amount, Currency, Id, Nullable, Ref, StringEnum, Timestamp } from '../../http/schemas.ts'
import { EventActor } from '../events/index.ts'
import { PRICE_CHANGE_SCOPES, PRICE_CHANGE_STATUSES } from './price-changes.tables.ts'

export const PriceChangeBody = Type.Object(
  {
    amount: Type.Integer({ ...Amount, minimum: 1, description: "The plan's new price, integer minor units of its currency" }),
    applies_to: StringEnum(PRICE_CHANGE_SCOPES, {
      description:
        '`new_subscriptions`: only subscriptions started from now on pay it; `existing_too`: every subscription on the plan that is not cancelled or expired moves to it too, ' +
        'from its first renewal at least `notice_days` after the notice email (sent now)',
    }),
    notice_days: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 730,
        description: "Days of notice existing subscriptions get; at least the store's `price_change_notice_days` (its value when left out)",
      }),
    ),
  },
  { additionalProperties: false },
)
export type PriceChangeInput = Static<typeof PriceChangeBody>

export const PriceChange = Type.Object(
  {
    id: Id('pc'),
    object: Type.Literal('price_change'),
    plan_id: Id('plan'),
    amount: Amount,
    previous_amount: { ...Amount, description: "The plan's price before the change" },
    currency: Currency,
    applies_to: StringEnum(PRICE_CHANGE_SCOPES),
    notice_days: Type.Integer({ minimum: 0 }),
    status: StringEnum(PRICE_CHANGE_STATUSES, {
      description: '`scheduling`: the plan\'s subscriptions are being given the new price, a page at a time, in the background; `completed`: every one has been (or `applies_to` is `new_subscriptions`)',
    }),
    subscriptions: Type.Object(
      {
        total: Type.Integer({ minimum: 0, description: 'Subscriptions on the plan, not cancelled or expired, when the change was asked for (0 for `new_subscriptions`)' }),
        scheduled: Type.Integer({ minimum: 0, description: 'Given the new price from a renewal after the notice (`subscription.price_change_scheduled` and the notice email each)' }),
        unchanged: Type.Integer({ minimum: 0, description: 'Already at the new price, or already moving to it: nothing sent' }),
        failed: Type.Integer({ minimum: 0, description: 'Could not be changed (their own data): logged, the others went on' }),
      },
      { additionalProperties: false },
    ),
    actor: Ref(EventActor),
    created_at: Timestamp,
    completed_at: Nullable(Timestamp),
  },
  { $id: 'PriceChange', title: 'PriceChange', additionalProperties: false },
)
export type PriceChangeView = Static<typeof PriceChange>

