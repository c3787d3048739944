import { Type } from 'typebox'
import { MAX_CHARGE_AMOUNT } from '../../lib/money.ts'
import { adminStore } from '../../http/admin-auth.ts'
import { adminActor } from '../../http/actors.ts'
import { IdParams, PageOf, problemResponses, Ref, StringEnum } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { Charge, ChargeListQuery, UpcomingRenewal } from './charge.schemas.ts'
import type { ChargesService } from './charges.service.ts'
import type { RenewalEngine } from './renewal-engine.ts'
import type { UpcomingRenewals } from './upcoming-renewal.ts'

const RefundBody = Type.Object(
  {
    amount: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CHARGE_AMOUNT, description: 'Integer minor units, shipping and tax included; default: all that is left' })),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  },
  { additionalProperties: false },
)

const ResolveBody = Type.Object(
  { outcome: StringEnum(['succeeded', 'failed'] as const, { description: 'What the gateway says happened, learned by other means (its dashboard, the bank)' }) },
  { additionalProperties: false },
)

/** What GET .../subscriptions/{id}/upcoming says, for the admin and the portal route alike. */
export const UPCOMING_RENEWAL_DESCRIPTION =
  "The subscription's next renewal charge as it stands now, with the charge's own names: the subscription's line (price x quantity) and each pending one-time add-on as `line_items`, " +
  'the discount as the renewal applies it, and `amount` = `subtotal` - `discount_amount` + `shipping_amount` + `tax_amount`. ' +
  'It is priced by the same function the renewal engine charges with, from the same inputs, so the charge made at `next_charge_at` equals it unless the subscription, its discount or its add-ons change meanwhile. ' +
  '`shipping_amount` and `tax_amount` are 0 for now: renewals priced by the store itself (its tax and shipping) are a later issue. ' +
  '`next_charge_at` is the next charge: after a skipped renewal the one after it, in dunning the next retry, for a pending subscription its first charge, for a subscription paused with `resume_at` the charge at or after its resumption. ' +
  '409 `invalid_state` when there is no next renewal to show (`detail` says why): cancelled or expired, set to cancel at the end of its period, paused without `resume_at`, past due (the next attempt waits for a new payment instrument), ' +
  "a gifted prepaid block that ends, a renewal charge already in progress (its amounts are on that charge), billing waiting for an admin (`billing_issue`), or the store's billing stopped."

/** The merchant's view of charge attempts: every renewal and dunning retry, newest first; and the next renewal of a subscription. */
export async function chargeAdminRoutes(app: App, { charges, renewals, upcoming }: { charges: ChargesService; renewals: RenewalEngine; upcoming: UpcomingRenewals }): Promise<void> {
  // Here rather than among the subscriptions module's routes: billing prices it, and billing depends on subscriptions, not the reverse.
  app.get('/subscriptions/:id/upcoming', {
    schema: {
      operationId: 'getUpcomingRenewal',
      summary: "A subscription's next renewal charge, as it stands",
      description: UPCOMING_RENEWAL_DESCRIPTION,
      tags: ['Subscriptions'],
      params: IdParams('sub'),
      response: { 200: Ref(UpcomingRenewal), ...problemResponses(404, 409) },
    },
  }, async (request) => upcoming.get(adminStore(request), request.params.id, adminActor(request).actor))

  app.get('/charges', {
    schema: {
      operationId: 'listCharges',
      summary: 'Charge attempts, newest first',
      description: 'Filter by subscription, subscriber or status. Each attempt is one row: a renewal is attempt 1, dunning retries of the same period count up from 2.',
      tags: ['Billing'],
      querystring: ChargeListQuery,
      response: { 200: PageOf(Ref(Charge), 'A page of charge attempts, newest first'), ...problemResponses(400) },
    },
  }, async (request) => charges.list(adminStore(request), request.query))

  app.get('/charges/:id', {
    schema: {
      operationId: 'getCharge',
      summary: 'One charge attempt',
      tags: ['Billing'],
      params: IdParams('ch'),
      response: { 200: Ref(Charge), ...problemResponses(404) },
    },
  }, async (request) => charges.get(adminStore(request), request.params.id))

  app.post('/charges/:id/refund', {
    schema: {
      operationId: 'refundCharge',
      summary: 'Refund all or part of a succeeded charge',
      description: 'Refunds through the gateway the charge went through; never more than is left (refunds still awaiting the gateway count as taken). 200 when the money went back (`amount_refunded` grew, event `charge.refunded`); 202 when the gateway has not answered yet: the refund is retried under the same key and `charge.refunded` follows. A failed, pending or fully refunded charge is 409; an amount over what is left is 400; a refund the gateway refuses is 402 `refund_failed` and moves nothing.',
      tags: ['Billing'],
      params: IdParams('ch'),
      body: RefundBody,
      response: { 200: Ref(Charge), 202: Ref(Charge), ...problemResponses(400, 402, 404, 409) },
    },
  }, async (request, reply) => {
    const store = adminStore(request)
    const result = await renewals.refund(store, request.params.id, request.body, adminActor(request).actor)
    reply.code(result.completed ? 200 : 202)
    // Read again for the merchant's view: the charge with its refunds (this one's reason included).
    return charges.get(store, result.charge.id)
  })

  app.post('/charges/:id/resolve', {
    schema: {
      operationId: 'resolveCharge',
      summary: 'Settle a charge that requires review',
      description: 'For a charge whose outcome stayed unknown (or could not be recorded): settles the period as if the gateway had answered so. `succeeded` pays the period (or refunds it at once if the subscription was cancelled meanwhile); `failed` continues dunning. Any other status is 409.',
      tags: ['Billing'],
      params: IdParams('ch'),
      body: ResolveBody,
      response: { 200: Ref(Charge), ...problemResponses(400, 404, 409) },
    },
  }, async (request) => {
    const store = adminStore(request)
    const resolved = await renewals.resolve(store, request.params.id, request.body.outcome, adminActor(request).actor)
    return charges.get(store, resolved.id)
  })
}
