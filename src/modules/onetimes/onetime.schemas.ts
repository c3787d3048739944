import { Type, type Static } from 'typebox'
import { Amount, Currency, Id, Nullable, PageOf, PageQuery, Ref, StringEnum, Timestamp } from '../../http/schemas.ts'

export const ONETIME_STATUSES = ['pending', 'charged', 'removed'] as const

/** A product bought once with a subscription's next renewal. */
export const Onetime = Type.Object(
  {
    id: Id('ot'),
    object: Type.Literal('onetime'),
    subscription_id: Id('sub'),
    product_id: Id('prod'),
    quantity: Type.Integer({ minimum: 1, maximum: 100 }),
    unit_amount: Amount,
    currency: Currency,
    status: StringEnum(ONETIME_STATUSES, { description: 'pending: waits for the next renewal; charged: paid by `charge_id`; removed: taken off before it was charged' }),
    charge_id: Nullable(Id('ch'), { description: 'The renewal charge that paid it' }),
    renewal_at: Type.Optional(
      Nullable(Timestamp, {
        description:
          'While pending: when the renewal that will charge it is due, the next renewal that is actually charged (a skipped renewal is passed over, a paused subscription charges at its resume), ' +
          'the `next_charge_at` of `GET .../subscriptions/{id}/upcoming`; null when no renewal is coming (paused without a date, set to cancel, past due, a charge in progress) and once charged or removed. ' +
          'Absent in events recorded before this field existed',
      }),
    ),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Onetime', title: 'Onetime', additionalProperties: false },
)
export type OnetimeView = Static<typeof Onetime>

export const CreateOnetimeBody = Type.Object(
  {
    product_id: Id('prod'),
    quantity: Type.Integer({ minimum: 1, maximum: 100 }),
  },
  { additionalProperties: false },
)
export type CreateOnetimeInput = Static<typeof CreateOnetimeBody>

export const OnetimeListQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(StringEnum(ONETIME_STATUSES)) },
  { additionalProperties: false },
)

export const OnetimePage = PageOf(Ref(Onetime), "A page of the subscription's add-ons, newest first")
