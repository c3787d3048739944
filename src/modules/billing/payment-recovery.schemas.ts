import { Type, type Static } from 'typebox'
import { Id, Nullable, Ref, StringEnum, Timestamp } from '../../http/schemas.ts'
import { SUBSCRIPTION_STATUSES } from '../subscriptions/index.ts'
import { Charge } from './charge.schemas.ts'

export const ATTENTION_REASONS = ['charge_requires_review', 'billing_issue', 'past_due', 'dunning'] as const
export const ATTENTION_ACTIONS = ['resolve_charge', 'retry_charge', 'payment_update_link'] as const

/** One subscription that needs a person now (docs/contract.md, Payment recovery). */
export const AttentionItem = Type.Object(
  {
    object: Type.Literal('attention_item'),
    subscription_id: Id('sub'),
    subscription_status: StringEnum(SUBSCRIPTION_STATUSES),
    subscriber: Type.Object(
      { id: Id('cus'), email: Type.String(), name: Nullable(Type.String()) },
      { additionalProperties: false },
    ),
    reason: StringEnum(ATTENTION_REASONS, {
      description:
        'Why, the first that applies: `charge_requires_review` (a charge of it waits for an admin to resolve it), `billing_issue` (its renewal was set aside, `billing_issue`), ' +
        '`past_due` (its dunning retries are used up: it waits for a new payment method or its cancellation), `dunning` (a renewal charge failed and is retried on the store\'s schedule)',
    }),
    since: { ...Timestamp, description: 'Since when it has needed a person: the review or billing issue began, else the first failed attempt of the unpaid period (in dunning and past due alike)' },
    message: Type.String({ description: 'What happened, in words: the gateway\'s failure message, the review\'s or the billing issue\'s' }),
    failed_attempts: Type.Integer({ minimum: 0, description: 'Failed payment attempts of the unpaid period (dunning); 0 when none failed' }),
    next_retry_at: Nullable(Timestamp, { description: 'In dunning, when the next retry runs; null otherwise' }),
    charge: Type.Optional(Ref(Charge)),
    actions: Type.Array(StringEnum(ATTENTION_ACTIONS), {
      description:
        'What the admin API can do about it now: `resolve_charge` (`POST /charges/{charge.id}/resolve`), `retry_charge` (`POST /subscriptions/{id}/retry-charge`), `payment_update_link` (`POST /subscriptions/{id}/payment-update-link`)',
    }),
  },
  { $id: 'AttentionItem', title: 'AttentionItem', additionalProperties: false, description: 'A subscription that needs a person now, with its latest charge (`charge`: the failed one in dunning or past due, the one under review), absent when it has none' },
)
export type AttentionItemView = Static<typeof AttentionItem>

export const AttentionList = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(Ref(AttentionItem), { description: 'One item per subscription, the one waiting longest first' }),
    has_more: Type.Boolean({ description: 'More subscriptions need attention than `limit` shows: the ones waiting longest are shown' }),
  },
  { additionalProperties: false },
)
export type AttentionListView = Static<typeof AttentionList>

export const AttentionQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 200, description: 'At most this many items (1-500, default 200)' })) },
  { additionalProperties: false },
)
