import type { ChargeRow, Db, StoreRow } from '../../db/database.ts'
import type { Actor } from '../../http/actors.ts'
import { toRfc3339, toRfc3339OrNull } from '../../lib/time.ts'
import { assertCanRetryNow, findSubscriptionsWithSubscriber, listSubscriptionsNeedingAttention, type AttentionRow, type SubscriptionService } from '../subscriptions/index.ts'
import { findChargesByIds, listChargesUnderReview } from './attention.repository.ts'
import { presentCharge } from './charge.presenter.ts'
import type { ChargeView } from './charge.schemas.ts'
import type { ChargesService } from './charges.service.ts'
import type { AttentionItemView, AttentionListView } from './payment-recovery.schemas.ts'
import { FAILURE_TEXT } from './renewal-plan.ts'

export type PaymentRecovery = ReturnType<typeof createPaymentRecovery>

const DEFAULT_ATTENTION_LIMIT = 200

/**
 * Payment recovery (docs/contract.md, Payment recovery): a failed renewal retried now through the
 * renewal engine, and the attention list, what needs a person now, read from current state.
 */
export function createPaymentRecovery({ db, charges, subscriptions }: { db: Db; charges: ChargesService; subscriptions: Pick<SubscriptionService, 'retryCharge'> }) {
  function itemOf(store: StoreRow, s: AttentionRow, charge: ChargeRow | undefined, underReview: boolean): AttentionItemView {
    const retriable = (() => {
      try {
        assertCanRetryNow(store, s)
        return true
      } catch {
        return false
      }
    })()
    let reason: AttentionItemView['reason']
    let since: Date | string
    let message: string
    if (underReview && charge) {
      reason = 'charge_requires_review'
      since = charge.review?.since ?? charge.created_at
      message = charge.review?.message ?? 'The outcome of this charge is unknown.'
    } else if (s.billing_issue) {
      reason = 'billing_issue'
      since = s.billing_issue.since
      message = s.billing_issue.message
    } else {
      reason = s.status === 'past_due' ? 'past_due' : 'dunning'
      // A past due subscription has waited since its first failed attempt, like one still in dunning.
      since = s.dunning_started_at ?? s.past_due_at ?? s.updated_at
      message = charge?.failure_message ?? (charge?.failure_code && charge.failure_code in FAILURE_TEXT ? FAILURE_TEXT[charge.failure_code as keyof typeof FAILURE_TEXT] : 'The renewal charge failed.')
    }
    const actions: AttentionItemView['actions'] = []
    if (reason === 'charge_requires_review') actions.push('resolve_charge')
    if (retriable) actions.push('retry_charge')
    if (reason === 'dunning' || reason === 'past_due') actions.push('payment_update_link')
    return {
      object: 'attention_item',
      subscription_id: s.id,
      subscription_status: s.status,
      subscriber: { id: s.subscriber_id, email: s.subscriber_email, name: s.subscriber_name },
      reason,
      since: typeof since === 'string' ? since : toRfc3339(since),
      message,
      failed_attempts: s.dunning_attempts,
      next_retry_at: reason === 'dunning' ? toRfc3339OrNull(s.next_charge_at) : null,
      ...(charge ? { charge: presentCharge(charge, []) } : {}),
      actions,
    }
  }

  return {
    /** Retry now: the charge of the attempt, settled or (`settled: false`) still pending. */
    async retryCharge(store: StoreRow, id: string, actor: Actor): Promise<{ charge: ChargeView; settled: boolean }> {
      const { chargeId, settled } = await subscriptions.retryCharge(store, id, actor)
      return { charge: await charges.get(store, chargeId), settled }
    },

    /** One item per subscription that needs a person, the one waiting longest first. */
    async attention(store: StoreRow, { limit = DEFAULT_ATTENTION_LIMIT }: { limit?: number | undefined } = {}): Promise<AttentionListView> {
      const [flagged, review] = await Promise.all([listSubscriptionsNeedingAttention(db, store.id, limit + 1), listChargesUnderReview(db, store.id, limit + 1)])
      // A subscription waits for one charge at a time; should two be under review, the older is shown.
      const reviewOf = new Map<string, ChargeRow>()
      for (const charge of review) if (!reviewOf.has(charge.subscription_id)) reviewOf.set(charge.subscription_id, charge)
      const listed = new Set(flagged.map((s) => s.id))
      const others = await findSubscriptionsWithSubscriber(db, store.id, [...reviewOf.keys()].filter((id) => !listed.has(id)))
      const rows = [...flagged, ...others]
      const latest = await findChargesByIds(db, store.id, rows.filter((s) => !reviewOf.has(s.id) && s.latest_charge_id).map((s) => s.latest_charge_id!))
      const latestById = new Map(latest.map((charge) => [charge.id, charge]))
      const items = rows
        .map((s) => itemOf(store, s, reviewOf.get(s.id) ?? (s.latest_charge_id ? latestById.get(s.latest_charge_id) : undefined), reviewOf.has(s.id)))
        .sort((a, b) => Date.parse(a.since) - Date.parse(b.since) || (a.subscription_id < b.subscription_id ? -1 : 1))
      return { object: 'list', data: items.slice(0, limit), has_more: items.length > limit || flagged.length > limit || review.length > limit }
    },
  }
}
