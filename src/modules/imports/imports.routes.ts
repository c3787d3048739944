import type { Readable } from 'node:stream'
import { Type } from 'typebox'
import { adminActor } from '../../http/actors.ts'
import { adminStore } from '../../http/admin-auth.ts'
import { IdParams, PageOf, PageQuery, problemResponses, Ref, StringEnum } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { AppError } from '../../lib/errors.ts'
import { Import, IMPORT_FORMATS } from './imports.schemas.ts'
import { MAX_IMPORT_BYTES, type ImportsService } from './imports.service.ts'

const CSV_TYPES = ['text/csv', 'application/csv']

// The upload is read as it arrives (imports.service.ts); the parser hands the stream on untouched.
const uploads = new WeakMap<object, Readable>()

/** Imports from CSV files (docs/contract.md, Import): upload, then read the report; the console polls it for progress. */
export async function importAdminRoutes(app: App, imports: ImportsService): Promise<void> {
  app.addContentTypeParser(CSV_TYPES, (request, payload, done) => {
    uploads.set(request, payload)
    // No body object: the request guards have nothing to walk, and the rows are checked one by one.
    done(null, undefined)
  })

  app.post('/imports', {
    config: { idempotentReplay: false },
    schema: {
      operationId: 'createImport',
      summary: 'Import subscriptions from a CSV file',
      description:
        'The body is the file (`Content-Type: text/csv`), read as it arrives, so its size is bounded only by 512 MB. `format=recharge` reads the columns of Recharge\'s migration template and purchase-items export; `format=native` reads this service\'s own subscriptions export (`GET /exports/subscriptions`). ' +
        'Each row is checked on its own: a bad row is reported in `errors` (its row, column and a code) and never stops the others. Rows are idempotent by `external_id` (Recharge `subscription_id`): a row the store already has is skipped, so the same file again changes nothing. ' +
        'Products are matched to the catalogue by BigCommerce product id, else exact title; variants by id, else by title among the product\'s variants; the plan is the product\'s plan with the row\'s cadence; on a store charging through BigCommerce, subscribers to customers by `platform_customer_id`, else email, and cards to that customer\'s stored cards. ' +
        'A row without a usable card imports with `billing_issue` `payment_method_required` and its subscriber is emailed a link to add one. Nothing is charged by the import: each subscription renews at its `next_charge_at`, and only while the store\'s `billing_enabled` is on. ' +
        'Each subscription created records `subscription.imported`. With `dry_run=true` everything is read, checked and matched, and nothing but the report is written. ' +
        'Answers the import when the file is read (201); `GET /imports/{id}` shows its progress meanwhile. A file that stops being readable (bad CSV, a broken upload, BigCommerce unavailable) ends `failed` with the rows before it imported. 400 for a header this format cannot read.',
      tags: ['Imports'],
      querystring: Type.Object(
        {
          format: StringEnum(IMPORT_FORMATS, { description: 'The columns the file has' }),
          dry_run: Type.Boolean({ default: false, description: 'Check and match every row, write nothing' }),
        },
        { additionalProperties: false },
      ),
      consumes: CSV_TYPES,
      response: { 201: Ref(Import), ...problemResponses(400, 413, 415) },
    },
  }, async (request, reply) => {
    const { store, actor } = adminActor(request)
    const body = uploads.get(request)
    if (!body) throw new AppError('unsupported_media_type', 'send the file as the body with Content-Type: text/csv')
    const length = Number(request.headers['content-length'])
    // A file announced over the limit is refused before a byte of it is read.
    if (Number.isFinite(length) && length > MAX_IMPORT_BYTES) throw new AppError('payload_too_large', `the file is over ${MAX_IMPORT_BYTES / 1024 / 1024} MB: split it (an import is idempotent, so the parts may overlap)`)
    const view = await imports.run(store, body, { format: request.query.format, dryRun: request.query.dry_run, actor, bytesTotal: Number.isSafeInteger(length) && length > 0 ? length : null })
    return reply.code(201).send(view)
  })

  app.get('/imports', {
    schema: {
      operationId: 'listImports',
      summary: 'Imports, newest first',
      tags: ['Imports'],
      querystring: Type.Object(PageQuery, { additionalProperties: false }),
      response: { 200: PageOf(Ref(Import), 'A page of imports, newest first'), ...problemResponses(400) },
    },
  }, async (request) => imports.list(adminStore(request), request.query))

  app.get('/imports/:id', {
    schema: {
      operationId: 'getImport',
      summary: 'One import: its progress while it runs, its report once done',
      tags: ['Imports'],
      params: IdParams('imp'),
      response: { 200: Ref(Import), ...problemResponses(404) },
    },
  }, async (request) => imports.get(adminStore(request), request.params.id))
}
