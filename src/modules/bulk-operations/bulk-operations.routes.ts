import { adminActor } from '../../http/actors.ts'
import { adminStore } from '../../http/admin-auth.ts'
import { IdParams, PageOf, PageQuery, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { Type } from 'typebox'
import { BulkItem, BulkItemsQuery, BulkOperation, BulkOperationBody, BulkPreview } from './bulk-operation.schemas.ts'
import type { BulkOperationsService } from './bulk-operations.service.ts'

const tags = ['Bulk operations']

/** One action over many subscriptions, run by the worker with progress and per-subscription results. */
export async function bulkOperationAdminRoutes(app: App, bulk: BulkOperationsService): Promise<void> {
  app.post('/bulk-operations', {
    schema: {
      operationId: 'createBulkOperation',
      summary: 'Run one action over many subscriptions',
      description:
        'The subscriptions are those `filter` selects (the subscription list\'s filters, and `next_charge_from`/`next_charge_to`), or `subscription_ids` (up to 10,000): at most 100,000 (else 400: narrow the filter). ' +
        '`action` is `swap_plan`, `change_price`, `reschedule`, `pause`, `resume`, `cancel` or `apply_discount`, and `params` the single action\'s body (`reschedule` also takes `shift_days`: each renewal moved by that many days on the store\'s calendar). ' +
        'With `dry_run: true`: 200 with how many subscriptions it would act on and the first 10; nothing is written. ' +
        'Otherwise 202 with the operation: its targets are fixed now, and the worker runs the single action on each (the same service, events and 409 rules as `POST /subscriptions/{id}/{action}`, as the caller), a page at a time; ' +
        '`GET /bulk-operations/{id}` shows `done` of `total` meanwhile, `results_url` each target\'s outcome (a refusal with its problem code). One refusal never stops the others.',
      tags,
      body: BulkOperationBody,
      response: { 200: Ref(BulkPreview), 202: Ref(BulkOperation), ...problemResponses(400) },
    },
  }, async (request, reply) => {
    const { store, actor } = adminActor(request)
    const made = await bulk.create(store, request.body, actor)
    return 'preview' in made ? reply.code(200).send(made.preview) : reply.code(202).send(made.operation)
  })

  app.get('/bulk-operations', {
    schema: {
      operationId: 'listBulkOperations',
      summary: 'Bulk operations, newest first',
      tags,
      querystring: Type.Object(PageQuery, { additionalProperties: false }),
      response: { 200: PageOf(Ref(BulkOperation), 'A page of bulk operations, newest first'), ...problemResponses(400) },
    },
  }, async (request) => bulk.list(adminStore(request), request.query))

  app.get('/bulk-operations/:id', {
    schema: {
      operationId: 'getBulkOperation',
      summary: 'A bulk operation and its progress',
      tags,
      params: IdParams('bulk'),
      response: { 200: Ref(BulkOperation), ...problemResponses(404) },
    },
  }, async (request) => bulk.get(adminStore(request), request.params.id))

  app.get('/bulk-operations/:id/results', {
    schema: {
      operationId: 'listBulkOperationResults',
      summary: "Each target's outcome, in subscription id order",
      tags,
      params: IdParams('bulk'),
      querystring: BulkItemsQuery,
      response: { 200: PageOf(Ref(BulkItem), "A page of the operation's targets"), ...problemResponses(400, 404) },
    },
  }, async (request) => bulk.results(adminStore(request), request.params.id, request.query))
}
