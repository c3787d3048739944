import { Readable, pipeline } from 'node:stream'
import { stringify } from 'csv-stringify'

/** One cell before it is written: null and undefined are an empty cell. */
export type CsvCell = string | number | boolean | null | undefined

/** A cell a spreadsheet would run as a formula (OWASP, CSV injection): =, +, -, @, tab, carriage return. */
const FORMULA_START = /^[=+\-@\t\r]/
/** A plain number ("-1500", "+44", "3.5"): a spreadsheet reads it as that number, so it stays as it is. */
const PLAIN_NUMBER = /^[+-]?\d+(\.\d+)?$/

/**
 * A text cell made safe to open in a spreadsheet: one that starts like a formula gets a leading `'`
 * (OWASP's advice), so Excel, LibreOffice and Google Sheets show it as text instead of running it.
 * Plain numbers are left alone: a negative amount stays a number. A cell that already starts with
 * `'` gets one more, so the guard is reversible: `unguardCsvCell` (drop one leading `'`) gives back
 * exactly what was written, which is how the `native` import reads its own export.
 */
export function guardCsvCell(text: string): string {
  if (text.startsWith("'") || (FORMULA_START.test(text) && !PLAIN_NUMBER.test(text))) return `'${text}`
  return text
}

/** The inverse of guardCsvCell, for reading a file this service wrote. */
export function unguardCsvCell(text: string): string {
  return text.startsWith("'") ? text.slice(1) : text
}

/**
 * A CSV document as a stream: a header row of `columns`, then one row per record as `records`
 * yields them (pulled only as fast as the reader takes the text, so a large export never sits in
 * memory). RFC 4180: CRLF between rows, a field quoted when it holds a comma, a quote or a line
 * break (CR or LF alone too, which csv-stringify would otherwise leave bare). Numbers as written,
 * booleans `true`/`false`, null an empty cell, every text cell through guardCsvCell.
 *
 * An error of `records` ends the stream with that error (the answer is cut short, never completed
 * as if the file were whole).
 */
export function csvStream(columns: readonly string[], records: AsyncIterable<Record<string, CsvCell>>): Readable {
  const output = stringify({
    header: true,
    columns: [...columns],
    record_delimiter: 'windows',
    quoted_match: /[\r\n]/,
    cast: {
      boolean: (value) => (value ? 'true' : 'false'),
      string: (value) => guardCsvCell(value),
    },
  })
  // pipeline destroys both streams when either fails or the reader goes away: the records stop being read.
  pipeline(Readable.from(records), output, () => {})
  return output
}
