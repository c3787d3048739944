import type { Readable } from 'node:stream'
import { DateTime } from 'luxon'
import type { StoreRow } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { csvStream, type CsvCell } from '../../lib/csv.ts'
import type { Page } from '../../lib/pagination.ts'
import type { ChargesService } from '../billing/index.ts'
import { storeNow } from '../stores/index.ts'
import { NATIVE_COLUMNS, nativeRecord, type Actor, type SubscriberListFilter, type SubscriptionListFilter, type SubscriptionService } from '../subscriptions/index.ts'
import { CHARGE_COLUMNS, chargeRecord, SUBSCRIBER_COLUMNS, subscriberRecord } from './export-columns.ts'

/** Rows read a statement at a time: enough to keep round trips few, few enough that a page is small in memory. */
export const EXPORT_PAGE_SIZE = 500

/** A CSV file being written: its name and its text as a stream. */
export interface ExportFile {
  filename: string
  body: Readable
}

export type ChargeExportFilter = Omit<Parameters<ChargesService['list']>[1], 'limit' | 'cursor'>

export type ExportsService = ReturnType<typeof createExportsService>

export interface ExportsServiceDeps {
  clock: Clock
  subscriptions: Pick<SubscriptionService, 'listRows' | 'listSubscribers'>
  charges: Pick<ChargesService, 'list'>
  /** Rows per read. */
  pageSize?: number
}

/**
 * The CSV exports (docs/contract.md, Exports): each reads its list through the module that owns it,
 * with the list's own filters and order (newest first), a keyset page at a time as the answer is
 * written, never the whole table at once. Each page is read as it stands when it is read (no
 * transaction is held open while a slow client downloads): a row changed meanwhile appears once, as
 * its page found it.
 */
export function createExportsService({ clock, subscriptions, charges, pageSize = EXPORT_PAGE_SIZE }: ExportsServiceDeps) {
  /** `subscriptions-{store hash}-{the store's date}.csv`: the date on the store's clock, in its time zone. */
  function filename(kind: string, store: StoreRow): string {
    const date = DateTime.fromJSDate(storeNow(store, clock), { zone: store.timezone }).toISODate() ?? storeNow(store, clock).toISOString().slice(0, 10)
    return `${kind}-${store.store_hash}-${date}.csv`
  }

  /**
   * Reads the first page before answering, so a failure there is an ordinary error answer; later
   * pages are read as the stream is drained. A failure after the first page cuts the answer short.
   */
  async function exportOf<T>(kind: string, store: StoreRow, columns: readonly string[], read: (cursor: string | undefined) => Promise<Page<T>>, toRecord: (item: T) => Record<string, CsvCell>): Promise<ExportFile> {
    const first = await read(undefined)
    async function* records(): AsyncGenerator<Record<string, CsvCell>> {
      let page = first
      for (;;) {
        for (const item of page.data) yield toRecord(item)
        if (!page.next_cursor) return
        page = await read(page.next_cursor)
      }
    }
    return { filename: filename(kind, store), body: csvStream(columns, records()) }
  }

  return {
    /** The `native` import format (subscriptions/subscription-columns.ts), filtered as GET /subscriptions. */
    subscriptions(store: StoreRow, filter: Omit<SubscriptionListFilter, 'limit' | 'cursor'>, actor: Actor): Promise<ExportFile> {
      return exportOf('subscriptions', store, NATIVE_COLUMNS, (cursor) => subscriptions.listRows(store, { ...filter, limit: pageSize, cursor }, actor), nativeRecord)
    },

    /** Charge attempts, filtered as GET /charges. */
    charges(store: StoreRow, filter: ChargeExportFilter): Promise<ExportFile> {
      return exportOf('charges', store, CHARGE_COLUMNS, (cursor) => charges.list(store, { ...filter, limit: pageSize, cursor }), chargeRecord)
    },

    /** Subscribers with how many subscriptions each has. */
    subscribers(store: StoreRow, filter: Omit<SubscriberListFilter, 'limit' | 'cursor'>): Promise<ExportFile> {
      return exportOf('subscribers', store, SUBSCRIBER_COLUMNS, (cursor) => subscriptions.listSubscribers(store, { ...filter, limit: pageSize, cursor }), subscriberRecord)
    },
  }
}
