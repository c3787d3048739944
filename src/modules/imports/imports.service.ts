import type { Readable } from 'node:stream'
import { parse } from 'csv-parse'
import type { Insertable } from 'kysely'
import type { Db, StoreRow, SubscriptionsTable } from '../../db/database.ts'
import type { Actor } from '../../http/actors.ts'
import type { Clock } from '../../lib/clock.ts'
import { maskCardNumbers } from '../../lib/card-data.ts'
import { AppError, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { listPage, type Page, type PageRequest } from '../../lib/pagination.ts'
import { eventActor, type EventLog, type NewEvent } from '../events/index.ts'
import { storeNow } from '../stores/index.ts'
import { existingExternalIds, insertImportedSubscriptions, PAYMENT_METHOD_REQUIRED, presentSubscription, subscribersForImport, type WantedSubscriber } from '../subscriptions/index.ts'
import { createImportMatcher, type MatchedRow, type MatchingDeps } from './import-matching.ts'
import type { Cells, ImportCandidate, ParsedRow } from './import-row.ts'
import { nativeHeaderErrors, parseNativeRow } from './native-format.ts'
import { presentImport, type ImportView } from './import.presenter.ts'
import { RECHARGE_COLUMNS, parseRechargeRow, rechargeHeaderErrors } from './recharge-format.ts'
import { findImport, insertImport, listImports, recordProgress, type ImportProgress } from './imports.repository.ts'
import type { ImportFormat, ImportRowError } from './imports.tables.ts'

/** Rows matched and written together: one transaction, a handful of statements (and platform calls) per batch. */
export const IMPORT_BATCH_ROWS = 500
/** The largest file one import reads; larger ones are split (the import is idempotent, so parts may overlap). */
export const MAX_IMPORT_BYTES = 512 * 1024 * 1024
/** A row longer than this is not a subscription: the parser stops instead of buffering it. */
const MAX_ROW_BYTES = 64 * 1024

export interface ImportRequest {
  format: ImportFormat
  dryRun: boolean
  actor: Actor
  /** The upload's length, when the request said (the progress bar's 100 %). */
  bytesTotal: number | null
  /** Told after each batch (the CLI's progress bar); the import row says the same to the console. */
  onProgress?: ((view: ImportView) => void) | undefined
}

export type ImportsService = ReturnType<typeof createImportsService>

/** Known columns of the native format: the subscriptions export's (subscriptions/subscription-columns.ts). */
export type NativeColumns = readonly string[]

/**
 * Imports subscriptions from a CSV file (docs/contract.md, Import), streamed: the file is read as it
 * arrives, a batch of rows at a time, so memory stays bounded whatever its size. Each row is checked
 * on its own: a bad one is reported (row, column, code) and never stops the others. Rows are
 * idempotent by `external_id`: a row whose id the store already has is skipped. Nothing is charged:
 * each subscription keeps its next charge date, and renews then like any other (only while the
 * store's billing is on). A dry run reads, checks and matches everything and writes only its report.
 */
export function createImportsService({ db, clock, events, matching, nativeColumns }: { db: Db; clock: Clock; events: EventLog; matching: Omit<MatchingDeps, 'db'>; nativeColumns: NativeColumns }) {
  const known: Record<ImportFormat, ReadonlySet<string>> = { recharge: new Set(RECHARGE_COLUMNS), native: new Set(nativeColumns) }

  async function run(store: StoreRow, body: Readable, request: ImportRequest): Promise<ImportView> {
    const started = storeNow(store, clock)
    const record = await insertImport(db, { id: newId('imp'), store_id: store.id, format: request.format, dry_run: request.dryRun, bytes_total: request.bytesTotal, actor: eventActor(request.actor) as unknown as Record<string, unknown>, now: clock.now() })
    const progress: ImportProgress & { newErrors: ImportRowError[] } = { rows: 0, created: 0, skipped: 0, failed: 0, bytesRead: 0, newErrors: [] }
    const seen = new Set<string>()
    const match = createImportMatcher(store, { db, ...matching })
    let batch: ImportCandidate[] = []
    let headerOk = true
    let headerSeen = false

    body.on('data', (chunk: Buffer) => {
      progress.bytesRead += chunk.length
      if (progress.bytesRead > MAX_IMPORT_BYTES) body.destroy(new AppError('payload_too_large', `the file is over ${MAX_IMPORT_BYTES / 1024 / 1024} MB: split it (an import is idempotent, so the parts may overlap)`))
    })
    const parser = body.pipe(
      parse({
        bom: true,
        // The header names the columns; unknown ones are listed, never read.
        columns: (header: string[]) => {
          headerSeen = true
          // A header name is kept (ignored_columns) and shown: one that looks like a card number (a file with no header row) is masked.
          const names = header.map((name) => maskCardNumbers(name.trim().toLowerCase()))
          const problems = request.format === 'recharge' ? rechargeHeaderErrors(names) : nativeHeaderErrors(names)
          // Two columns of one name: which one a row means cannot be known (the last would silently win).
          for (const name of new Set(names.filter((name, index) => name !== '' && names.indexOf(name) !== index))) {
            problems.push({ row: 1, column: name, code: 'duplicate_column', detail: `the header names ${name} more than once` })
          }
          progress.ignoredColumns = names.filter((name) => name !== '' && !known[request.format].has(name))
          if (problems.length > 0) {
            headerOk = false
            progress.newErrors.push(...problems)
          }
          return names
        },
        relax_column_count: true,
        skip_empty_lines: true,
        max_record_size: MAX_ROW_BYTES,
      }),
    )
    body.on('error', (error) => parser.destroy(error))

    const flush = async (): Promise<void> => {
      const rows = batch
      batch = []
      await writeBatch(store, request, record.id, rows, progress, seen, match)
      // Read back only for a listener (the CLI's bar): the API's progress is the row itself.
      if (request.onProgress) request.onProgress(presentImport((await findImport(db, store.id, record.id))!))
    }

    try {
      for await (const cells of parser as AsyncIterable<Cells>) {
        if (!headerOk) break
        progress.rows++
        // The header is row 1, so the first data row is row 2, as a spreadsheet numbers it.
        const parsed: ParsedRow = request.format === 'recharge' ? parseRechargeRow(cells, progress.rows + 1, { timeZone: store.timezone, now: started }) : parseNativeRow(cells, progress.rows + 1, { timeZone: store.timezone, now: started })
        if ('errors' in parsed) {
          progress.failed++
          progress.newErrors.push(...parsed.errors)
          continue
        }
        batch.push(parsed.candidate)
        if (batch.length >= IMPORT_BATCH_ROWS) await flush()
      }
      if (!headerOk) {
        body.unpipe(parser)
        body.resume()
        const failed = await recordProgress(db, record.id, progress, clock.now(), { status: 'failed' })
        throw new AppError('validation_failed', `the file's header cannot be imported as ${request.format}: ${failed.errors.map((e) => e.detail).join('; ')}`, {
          errors: failed.errors.map((e) => ({ path: `/body/header/${e.column ?? ''}`, message: e.detail })),
        })
      }
      if (!headerSeen) {
        await recordProgress(db, record.id, { ...progress, newErrors: [{ row: 1, code: 'empty_file', detail: 'the file is empty: it needs a header row naming the columns' }] }, clock.now(), { status: 'failed' })
        throw new AppError('validation_failed', 'the file is empty: it needs a header row naming the columns, then a row per subscription', { errors: [{ path: '/body', message: 'is empty' }] })
      }
      if (batch.length > 0) await flush()
      return presentImport(await recordProgress(db, record.id, progress, clock.now(), { status: 'completed' }))
    } catch (error) {
      if (error instanceof AppError && error.code === 'validation_failed' && (!headerOk || !headerSeen)) throw error
      // The file stopped being readable: the rows read before it are still imported (a batch not yet
      // written is written now), so the report says exactly what was; running the file again does the rest.
      const reached = progress.rows + 1
      let written = true
      if (batch.length > 0) {
        try {
          await flush()
        } catch {
          written = false
          progress.failed += batch.length
          progress.newErrors.push(...batch.map((candidate) => ({ row: candidate.row, code: 'not_imported', detail: 'not imported: the import stopped before this row was written' })))
          batch = []
        }
      }
      progress.newErrors.push({ row: reached, code: 'import_stopped', detail: `the import stopped here: ${describe(error)}; ${written ? 'the rows before it were imported' : 'rows before it not yet written are listed as not_imported'}, and running the same file again imports the rest` })
      return presentImport(await recordProgress(db, record.id, progress, clock.now(), { status: 'failed' }))
    }
  }

  /**
   * One batch: rows the file repeats are refused, rows the store already has are skipped, the rest
   * matched; then (unless a dry run) their subscribers and subscriptions are written with their events
   * and the import's progress, in one transaction.
   */
  async function writeBatch(store: StoreRow, request: ImportRequest, importId: string, rows: ImportCandidate[], progress: ImportProgress & { newErrors: ImportRowError[] }, seen: Set<string>, match: ReturnType<typeof createImportMatcher>): Promise<void> {
    const fresh: ImportCandidate[] = []
    for (const candidate of rows) {
      if (seen.has(candidate.externalId)) {
        progress.failed++
        progress.newErrors.push({ row: candidate.row, column: request.format === 'recharge' ? 'subscription_id' : 'external_id', code: 'duplicate_external_id', detail: `${candidate.externalId} is on an earlier row of this file` })
        continue
      }
      seen.add(candidate.externalId)
      fresh.push(candidate)
    }
    const existing = await existingExternalIds(db, store.id, fresh.map((c) => c.externalId))
    const toMatch = fresh.filter((candidate) => !existing.has(candidate.externalId))
    progress.skipped += fresh.length - toMatch.length
    const matched: MatchedRow[] = []
    for (const outcome of await match(toMatch)) {
      if ('errors' in outcome) {
        progress.failed++
        progress.newErrors.push(...outcome.errors)
      } else matched.push(outcome.matched)
    }
    const now = clock.now()
    if (request.dryRun) {
      progress.created += matched.length
      await recordProgress(db, importId, progress, now)
      progress.newErrors = []
      return
    }
    await db.transaction().execute(async (trx) => {
      const at = storeNow(store, clock)
      const wanted = new Map<string, WantedSubscriber>()
      for (const { candidate, platformCustomerId } of matched) {
        if (!wanted.has(candidate.email)) wanted.set(candidate.email, { email: candidate.email, name: candidate.name, platformCustomerId, shippingAddress: candidate.shippingAddress })
      }
      const subscribers = await subscribersForImport(trx, store.id, [...wanted.values()], () => newId('cus'), at)
      const inserts: Insertable<SubscriptionsTable>[] = []
      for (const row of matched) {
        const subscriber = subscribers.get(row.candidate.email)
        // The email's subscriber is another platform customer's (an earlier row of this batch named another
        // customer for the same email): never re-pointed, as a checkout never does.
        const otherCustomer = subscriber && !('conflict' in subscriber) && row.platformCustomerId !== null && subscriber.platform_customer_id !== null && subscriber.platform_customer_id !== row.platformCustomerId
        if (!subscriber || 'conflict' in subscriber || otherCustomer) {
          progress.failed++
          progress.newErrors.push({ row: row.candidate.row, column: 'email', code: 'customer_conflict', detail: `${row.candidate.email} is the email of a subscriber of another BigCommerce customer: an import never moves a subscriber to someone else's cards` })
          continue
        }
        inserts.push(subscriptionRow(store, row, subscriber.id, at))
      }
      const inserted = await insertImportedSubscriptions(trx, inserts)
      // A row another import inserted meanwhile (same external id) was left out: it exists, so it is skipped.
      progress.skipped += inserts.length - inserted.length
      progress.created += inserted.length
      const toRecord: NewEvent[] = inserted.map((row) => ({ storeId: store.id, eventType: 'subscription.imported', occurredAt: at, data: presentSubscription(row, store.store_hash), actor: request.actor }))
      await events.recordOfNewEntities(trx, toRecord)
      await recordProgress(trx, importId, progress, now)
    })
    progress.newErrors = []
  }

  return {
    run,
    async get(store: StoreRow, id: string): Promise<ImportView> {
      const row = await findImport(db, store.id, id)
      if (!row) throw notFound('import', id)
      return presentImport(row)
    },
    list(store: StoreRow, page: PageRequest): Promise<Page<ImportView>> {
      return listPage(page, (bounds) => listImports(db, store.id, bounds), presentImport)
    },
  }
}

/** The subscription a matched row becomes: its own dates, price and quantity; a billing issue when it has no usable card. */
function subscriptionRow(store: StoreRow, { candidate, plan, platformVariantId, amount, currency, platformCustomerId, card }: MatchedRow, subscriberId: string, at: Date): Insertable<SubscriptionsTable> {
  const stored = card.token !== null ? card.stored : null
  return {
    id: newId('sub'),
    store_id: store.id,
    subscriber_id: subscriberId,
    external_id: candidate.externalId,
    plan_id: plan.id,
    product_id: plan.product_id,
    platform_order_id: '',
    status: candidate.status,
    quantity: candidate.quantity,
    amount,
    currency,
    interval: candidate.interval,
    interval_count: candidate.intervalCount,
    payment_instrument_id: card.token ?? '',
    payment_instrument_brand: stored?.brand ?? null,
    payment_instrument_last4: stored?.last_4 ?? null,
    payment_instrument_expiry_month: stored?.expiry_month ?? null,
    payment_instrument_expiry_year: stored?.expiry_year ?? null,
    shipping_address: candidate.shippingAddress ? JSON.stringify(candidate.shippingAddress) : null,
    billing_address: candidate.billingAddress ? JSON.stringify(candidate.billingAddress) : null,
    platform_customer_id: platformCustomerId,
    platform_variant_id: platformVariantId,
    start_at: at,
    billing_anchor_at: candidate.schedule.billing_anchor_at,
    period_index: candidate.schedule.period_index,
    current_period_start: candidate.schedule.current_period_start,
    current_period_end: candidate.schedule.current_period_end,
    next_charge_at: candidate.schedule.next_charge_at,
    prepaid_cycles_total: candidate.prepaidCycles,
    prepaid_cycles_remaining: candidate.schedule.prepaid_cycles_remaining,
    paused_at: candidate.status === 'paused' ? (candidate.pausedAt ?? at) : null,
    resume_at: candidate.resumeAt,
    skip_next: candidate.skipNext,
    // A skip carried over was asked for (an out-of-stock skip is decided at the renewal, never carried).
    skip_reason: candidate.skipNext ? 'requested' : null,
    cancel_at_period_end: candidate.cancelAtPeriodEnd,
    billing_issue: card.token === null ? JSON.stringify({ code: PAYMENT_METHOD_REQUIRED, message: `Imported without a usable card (${card.why}): the subscriber was emailed a link to add one.`, since: at.toISOString() }) : null,
    created_at: at,
    updated_at: at,
  }
}

function describe(error: unknown): string {
  if (error instanceof AppError) return error.message
  if (error && typeof error === 'object' && 'code' in error && typeof (error as { code: unknown }).code === 'string' && String((error as { code: string }).code).startsWith('CSV_')) {
    return `the file is not valid CSV (${(error as unknown as Error).message})`
  }
  return error instanceof Error ? error.message : String(error)
}
