import { Type } from 'typebox'
import { MAX_RENEWAL_AMOUNT } from '../../lib/money.ts'
import { adminStore } from '../../http/admin-auth.ts'
import { Id, IdParams, PageOf, PageQuery, problemResponses, Ref, StringEnum } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { Charge, CHARGE_STATUSES } from './charge.schemas.ts'
import type { ChargesService } from './charges.service.ts'
import type { RenewalEngine } from './renewal-engine.ts'

const RefundBody = Type.Object(
  {
    amount: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_RENEWAL_AMOUNT, description: 'Integer minor units; default: all that is left' })),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  },
  { additionalProperties: false },
)

const ResolveBody = Type.Object(
  { outcome: StringEnum(['succeeded', 'failed'] as const, { description: 'What the gateway says happened, learned by other means (its dashboard, the bank)' }) },
  { additionalProperties: false },
)

const ChargeListQuery = Type.Object(
  {
    ...PageQuery,
    subscription_id: Type.Optional(Id('sub')),
    status: Type.Optional(StringEnum(CHARGE_STATUSES)),
  },
  { additionalProperties: false },
)

/** The merchant's view of charge attempts: every renewal and dunning retry, newest first. */
export async function chargeAdminRoutes(app: App, { charges, renewals }: { charges: ChargesService; renewals: RenewalEngine }): Promise<void> {
  app.get('/charges', {
    schema: {
      operationId: 'listCharges',
      summary: 'Charge attempts, newest first',
      description: 'Filter by subscription or status. Each attempt is one row: a renewal is attempt 1, dunning retries of the same period count up from 2.',
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
    const result = await renewals.refund(adminStore(request), request.params.id, request.body)
    reply.code(result.completed ? 200 : 202)
    return result.charge
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
  }, async (request) => renewals.resolve(adminStore(request), request.params.id, request.body.outcome))
}
