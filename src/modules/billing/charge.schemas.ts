import { Type, type Static } from 'typebox'
import { Amount, Currency, Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.ts'

export const CHARGE_STATUSES = ['pending', 'succeeded', 'failed'] as const

/** One attempt to collect one period: it names the vault instrument by id only, never card data. */
export const Charge = Type.Object(
  {
    id: Id('ch'),
    object: Type.Literal('charge'),
    subscription_id: Id('sub'),
    amount: Amount,
    currency: Currency,
    status: StringEnum(CHARGE_STATUSES),
    attempt: Type.Integer({ minimum: 1, description: '1 for the renewal, 2.. for dunning retries of the same period' }),
    payment_instrument_id: Type.String(),
    platform_order_id: Nullable(Type.String({ description: 'The renewal order on the commerce platform this charge pays (live stores)' })),
    failure_code: Nullable(Type.String({ example: 'card_declined' })),
    failure_message: Nullable(Type.String()),
    next_retry_at: Nullable(Timestamp),
    period_start: Timestamp,
    period_end: Timestamp,
    created_at: Timestamp,
    settled_at: Nullable(Timestamp),
  },
  { $id: 'Charge', title: 'Charge', additionalProperties: false },
)
export type ChargeView = Static<typeof Charge>
