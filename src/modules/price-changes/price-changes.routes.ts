import { adminActor } from '../../http/actors.ts'
import { IdParams, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { PriceChange, PriceChangeBody } from './price-change.schemas.ts'
import type { PriceChangeService } from './price-changes.service.ts'

/** A plan's price changes with notice (docs/contract.md, Price changes with notice). Registered under the admin prefix. */
export async function priceChangeAdminRoutes(app: App, priceChanges: PriceChangeService): Promise<void> {
  app.post('/plans/:id/price-change', {
    schema: {
      operationId: 'changePlanPrice',
      summary: "Change a plan's price, for new subscriptions or for existing ones too with notice",
      description:
        "The plan's `amount` is the new one at once: subscriptions started from now on pay it. With `applies_to` `existing_too`, every subscription on the plan that is not cancelled or expired " +
        'gets `scheduled_price`: it keeps its price until its first renewal at least `notice_days` after the notice (the email `price_change_notice`, queued with `subscription.price_change_scheduled`), ' +
        'and from that renewal on pays the new one (`subscription.price_changed`). Subscriptions are given it in the background, 1,000 per transaction: the answer is 202 with the change `scheduling` ' +
        '(read its progress with `GET /price-changes/{id}`), or 200 `completed` when nothing is left to do (`new_subscriptions`, or no subscription on the plan). ' +
        "`notice_days` below the store's `price_change_notice_days` is 400 `validation_failed` at `/body/notice_days`; the new price at the largest quantity on the plan over 10^11 minor units is 400 `amount_too_large`. " +
        '409 `invalid_state` for an archived plan; 409 `conflict` while an earlier change of the plan is still `scheduling`.',
      tags: ['Catalogue'],
      params: IdParams('plan'),
      body: PriceChangeBody,
      response: { 200: Ref(PriceChange), 202: Ref(PriceChange), ...problemResponses(404, 409) },
    },
  }, async (request, reply) => {
    const { store, actor } = adminActor(request)
    const change = await priceChanges.create(store, request.params.id, actor, request.body)
    return reply.code(change.status === 'scheduling' ? 202 : 200).send(change)
  })

  app.get('/price-changes/:id', {
    schema: {
      operationId: 'getPriceChange',
      summary: 'Read a price change and how far it has been scheduled',
      tags: ['Catalogue'],
      params: IdParams('pc'),
      response: { 200: Ref(PriceChange), ...problemResponses(404) },
    },
  }, async (request) => {
    const { store } = adminActor(request)
    return priceChanges.get(store, request.params.id)
  })
}
