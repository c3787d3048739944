import { Type, type Static } from 'typebox'
import { Id, Nullable, PageQuery, Ref, StringEnum, Timestamp } from '../../http/schemas.ts'
import { EventActor } from '../events/index.ts'

export const BULK_ACTIONS = ['swap_plan', 'change_price', 'reschedule', 'pause', 'resume', 'cancel', 'apply_discount'] as const
/** The most subscriptions one operation takes: a larger set is split by its filter (a plan, a date range). */
export const MAX_BULK_TARGETS = 100_000
const MAX_IDS = 10_000

export const BulkFilter = Type.Object(
  {
    status: Type.Optional(StringEnum(['pending', 'active', 'paused', 'past_due', 'cancelled', 'expired'] as const)),
    plan_id: Type.Optional(Id('plan')),
    email: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The subscription list search' })),
    subscriber_id: Type.Optional(Id('cus')),
    next_charge_from: Type.Optional(Type.String({ format: 'date-time', description: 'Renewing at or after this time' })),
    next_charge_to: Type.Optional(Type.String({ format: 'date-time', description: 'Renewing before this time' })),
  },
  { additionalProperties: false, description: "The subscription list's filters (GET /subscriptions), and a range of next charges" },
)

export const BulkParams = Type.Object(
  {
    plan_id: Type.Optional(Id('plan', 'swap_plan: the plan to move to')),
    platform_variant_id: Type.Optional(Type.Union([Type.String({ pattern: '^[1-9][0-9]{0,9}$' }), Type.Integer({ minimum: 1 }), Type.Null()], { description: 'swap_plan: the variant to move to' })),
    amount: Type.Optional(Type.Integer({ minimum: 1, description: 'change_price: the new unit price, integer minor units' })),
    notice_days: Type.Optional(Type.Integer({ minimum: 0, maximum: 365, description: "change_price: days of notice (at least the store's price_change_notice_days)" })),
    next_charge_at: Type.Optional(Type.String({ format: 'date-time', description: 'reschedule: the new renewal time for every target' })),
    shift_days: Type.Optional(Type.Integer({ minimum: -365, maximum: 365, description: "reschedule: move each target's own next renewal by this many days on the store's calendar (a holiday's renewals to the next day: 1)" })),
    resume_at: Type.Optional(Nullable(Type.String({ format: 'date-time', description: 'pause: when to resume' }))),
    at_period_end: Type.Optional(Type.Boolean({ description: 'cancel: at the end of the paid period' })),
    reason: Type.Optional(Type.String({ maxLength: 500, description: 'cancel: why' })),
    code: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'apply_discount: the discount code' })),
  },
  { additionalProperties: false, description: "The single action's body: swap_plan {plan_id, platform_variant_id?}; change_price {amount, notice_days?}; reschedule {next_charge_at} or {shift_days}; pause {resume_at?}; resume {}; cancel {at_period_end?, reason?}; apply_discount {code}" },
)

export const BulkOperationBody = Type.Object(
  {
    action: StringEnum(BULK_ACTIONS),
    filter: Type.Optional(BulkFilter),
    subscription_ids: Type.Optional(Type.Array(Id('sub'), { minItems: 1, maxItems: MAX_IDS, uniqueItems: true })),
    params: Type.Optional(BulkParams),
    dry_run: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
)
export type BulkOperationInput = Static<typeof BulkOperationBody>

export const BulkOperation = Type.Object(
  {
    id: Id('bulk'),
    object: Type.Literal('bulk_operation'),
    action: StringEnum(BULK_ACTIONS),
    params: Type.Record(Type.String(), Type.Unknown()),
    filter: Nullable(Type.Record(Type.String(), Type.Unknown())),
    status: StringEnum(['running', 'completed'] as const),
    total: Type.Integer({ minimum: 0 }),
    done: Type.Integer({ minimum: 0, description: 'Targets whose action ran, succeeded or not' }),
    succeeded: Type.Integer({ minimum: 0 }),
    failed: Type.Integer({ minimum: 0 }),
    results_url: Type.String({ description: 'Each target\'s outcome: `GET` it, `?status=failed` for the refused ones' }),
    actor: Ref(EventActor),
    created_at: Timestamp,
    finished_at: Nullable(Timestamp),
  },
  { $id: 'BulkOperation', title: 'BulkOperation', additionalProperties: false },
)
export type BulkOperationView = Static<typeof BulkOperation>

export const BulkPreview = Type.Object(
  {
    object: Type.Literal('bulk_operation_preview'),
    action: StringEnum(BULK_ACTIONS),
    dry_run: Type.Literal(true),
    total: Type.Integer({ minimum: 0, description: 'The subscriptions it would act on' }),
    sample: Type.Array(Type.Object({ id: Id('sub'), status: Type.String(), plan_id: Type.String(), next_charge_at: Nullable(Timestamp), email: Type.String() }, { additionalProperties: false }), { description: 'The first 10 of them' }),
  },
  { $id: 'BulkPreview', title: 'BulkPreview', additionalProperties: false },
)
export type BulkPreviewView = Static<typeof BulkPreview>

export const BulkItem = Type.Object(
  {
    subscription_id: Id('sub'),
    status: StringEnum(['pending', 'succeeded', 'failed'] as const),
    code: Nullable(Type.String({ description: "The single action's problem code: `invalid_state` (its 409), `not_found`, `validation_failed`, ..." })),
    detail: Nullable(Type.String()),
    updated_at: Timestamp,
  },
  { $id: 'BulkItem', title: 'BulkItem', additionalProperties: false },
)
export type BulkItemView = Static<typeof BulkItem>

export const BulkItemsQuery = Type.Object({ ...PageQuery, status: Type.Optional(StringEnum(['pending', 'succeeded', 'failed'] as const)) }, { additionalProperties: false })
