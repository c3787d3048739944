import { invalidField } from './errors.ts'

export interface PageRequest {
  limit: number
  cursor?: string | undefined
}

export interface Page<T> {
  data: T[]
  next_cursor: string | null
}

/**
 * Cursors are opaque to clients: base64url of the last row's sort key. Lists sort by id, and ids
 * are time-sortable, so "newest first" is "id descending" and a keyset page never skips or repeats rows.
 */
export function encodeCursor(lastId: string): string {
  return Buffer.from(`v1:${lastId}`).toString('base64url')
}

export function decodeCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8')
  if (!text.startsWith('v1:') || text.length < 5 || !/^[a-z]+_[0-9A-Z]+$/.test(text.slice(3))) {
    throw invalidField('/query/cursor', 'is not a cursor this API issued')
  }
  return text.slice(3)
}

/** Builds a page from rows fetched with `limit + 1`, so the extra row tells whether more exist. */
export function toPage<Row extends { id: string }, T>(rows: Row[], limit: number, present: (row: Row) => T): Page<T> {
  const more = rows.length > limit
  const kept = more ? rows.slice(0, limit) : rows
  const last = kept.at(-1)
  return { data: kept.map(present), next_cursor: more && last ? encodeCursor(last.id) : null }
}

/** The bounds of one keyset page: at most `limit` rows (fetch one more to learn whether more exist) after `afterId`. */
export interface PageBounds {
  limit: number
  afterId: string | undefined
}

/**
 * One page of a list: decodes the cursor, lets `fetch` read the rows within the bounds (newest first,
 * `limit + 1` of them), and shapes the page. Every list route pages through here.
 */
export async function listPage<Row extends { id: string }, T>(page: PageRequest, fetch: (bounds: PageBounds) => Promise<Row[]>, present: (row: Row) => T): Promise<Page<T>> {
  const rows = await fetch({ limit: page.limit, afterId: page.cursor ? decodeCursor(page.cursor) : undefined })
  return toPage(rows, page.limit, present)
}
