import { adminActor } from '../../http/actors.ts'
import { adminStore } from '../../http/admin-auth.ts'
import { IdParams, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { Charge } from './charge.schemas.ts'
import { AttentionList, AttentionQuery } from './payment-recovery.schemas.ts'
import type { PaymentRecovery } from './payment-recovery.service.ts'

/** Payment recovery (docs/contract.md, Payment recovery): retry a failed renewal now, and what needs a person. */
export async function paymentRecoveryRoutes(app: App, recovery: PaymentRecovery): Promise<void> {
  // Here rather than among the subscriptions module's actions: it answers with the charge, and billing depends on subscriptions, not the reverse.
  app.post('/subscriptions/:id/retry-charge', {
    schema: {
      operationId: 'retrySubscriptionCharge',
      summary: 'Retry the failed renewal now',
      description:
        'For a subscription in dunning (its renewal charge failed and a retry is to come) or `past_due`: the next retry of the unpaid period runs now, with the subscription\'s current payment instrument, ' +
        'through the renewal engine (records `subscription.retry_requested` naming who asked, then the same claim, idempotency key, lease, events and settlement as a scheduled retry: `subscription.charged`, then `charge.succeeded` or `charge.failed`). ' +
        'A success recovers the subscription as a scheduled retry would (`past_due` becomes `active` with `subscription.activated`; the paid period becomes current, the next renewal follows it). ' +
        "A failure counts as one of the dunning attempts: the next retry is the store's schedule's next (`charge.next_retry_at`), or none after the last (`past_due`). " +
        'The request waits up to 10 s for the outcome: 200 with the charge once it is settled (`status` `succeeded` or `failed`), else 202 with the charge while it is still `pending` (the worker finishes it). ' +
        'Two requests at once make one attempt: the second is 409, or answers the same charge. ' +
        '409 `invalid_state` when there is nothing to retry now: an active subscription not in dunning, a cancelled, expired, paused or pending one, a charge in flight or under review, ' +
        "a renewal waiting for an item to come back in stock, a subscription set to cancel at the end of its period, or the store's billing stopped. " +
        "409 `billing_disabled` while the store's billing is switched off (`billing_enabled` false, the cutover switch); nothing is recorded then.",
      tags: ['Subscriptions'],
      params: IdParams('sub'),
      response: { 200: Ref(Charge), 202: Ref(Charge), ...problemResponses(404, 409, 503) },
    },
  }, async (request, reply) => {
    const { store, actor } = adminActor(request)
    const { charge, settled } = await recovery.retryCharge(store, request.params.id, actor)
    return reply.code(settled ? 200 : 202).send(charge)
  })

  app.get('/attention', {
    schema: {
      operationId: 'listAttention',
      summary: 'What needs a person now',
      description:
        "The store's subscriptions that need an admin now, one item per subscription, the one waiting longest first, read from their current state: " +
        'a charge under review (`charge_requires_review`), a renewal set aside (`billing_issue`), `past_due`, or in dunning (a renewal charge failed and is retried on the schedule: `charge` is the latest failed attempt, `next_retry_at` the next). ' +
        'A cancelled or expired subscription appears only while a charge of it waits for review; one that recovered, or whose renewal waits for stock, does not. Each item lists the `actions` the admin API takes for it now.',
      tags: ['Billing'],
      querystring: AttentionQuery,
      response: { 200: AttentionList, ...problemResponses(400) },
    },
  }, async (request) => recovery.attention(adminStore(request), { limit: request.query.limit }))
}
