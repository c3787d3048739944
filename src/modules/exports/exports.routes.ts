import type { FastifyReply } from 'fastify'
import { adminActor } from '../../http/actors.ts'
import { problemResponses } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { ChargeExportQuery, csvResponse, SubscriberExportQuery, SubscriptionExportQuery } from './exports.schemas.ts'
import type { ExportFile, ExportsService } from './exports.service.ts'

const GUARD =
  'Text cells that a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return) are written with a leading `\'`, and so is a cell that starts with `\'` ' +
  '(drop one leading `\'` to get the value back); plain numbers, negative ones included, are written as they are. '
const STREAMED = 'Every matching row, newest first, written as it is read (500 rows a read): the answer is streamed, never held whole. Every admin key scope may export, as it may read the list. '

/** A CSV file as the answer: UTF-8, downloaded under its name, never cached (it holds subscribers' details). */
function sendCsv(reply: FastifyReply, file: ExportFile) {
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${file.filename}"`)
    .header('cache-control', 'no-store')
    .send(file.body)
}

/** The merchant's CSV exports: each list's filters, every page of it (docs/contract.md, Exports). */
export async function exportAdminRoutes(app: App, exports: ExportsService): Promise<void> {
  app.get('/exports/subscriptions', {
    schema: {
      operationId: 'exportSubscriptions',
      summary: 'Every subscription the list would show, as CSV (the native import format)',
      description:
        'The filters of `GET /api/v1/admin/subscriptions` (`status`, `email`, `plan_id`, `q`, `subscriber_id`), without paging. ' + STREAMED +
        'The columns, in this order, are the `native` format `POST /api/v1/admin/imports?format=native` reads (docs/contract.md, Exports). ' + GUARD,
      tags: ['Exports'],
      querystring: SubscriptionExportQuery,
      response: { 200: csvResponse('The subscriptions as CSV: `subscriptions-{store hash}-{date}.csv`'), ...problemResponses(400) },
    },
  }, async (request, reply) => {
    const { store, actor } = adminActor(request)
    return sendCsv(reply, await exports.subscriptions(store, request.query, actor))
  })

  app.get('/exports/charges', {
    schema: {
      operationId: 'exportCharges',
      summary: 'Every charge attempt the list would show, as CSV',
      description: 'The filters of `GET /api/v1/admin/charges` (`subscription_id`, `subscriber_id`, `status`), without paging. ' + STREAMED + GUARD,
      tags: ['Exports'],
      querystring: ChargeExportQuery,
      response: { 200: csvResponse('The charge attempts as CSV: `charges-{store hash}-{date}.csv`'), ...problemResponses(400) },
    },
  }, async (request, reply) => sendCsv(reply, await exports.charges(adminActor(request).store, request.query)))

  app.get('/exports/subscribers', {
    schema: {
      operationId: 'exportSubscribers',
      summary: 'Every subscriber, with how many subscriptions each has, as CSV',
      description: 'Filtered by `email` (exactly) or `q` (part of the email or name, or a subscriber id), as the subscription list searches subscribers. ' + STREAMED + GUARD,
      tags: ['Exports'],
      querystring: SubscriberExportQuery,
      response: { 200: csvResponse('The subscribers as CSV: `subscribers-{store hash}-{date}.csv`'), ...problemResponses(400) },
    },
  }, async (request, reply) => sendCsv(reply, await exports.subscribers(adminActor(request).store, request.query)))
}
