/**
 * RFC 4180 CSV read strictly, for asserting what an export wrote: rows end with CRLF, a quoted
 * field may hold commas, quotes (doubled) and line breaks; anything else (a bare quote inside an
 * unquoted field, a lone CR or LF outside quotes, no CRLF after the last row) throws, so a test
 * fails on a malformed file instead of reading it leniently.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let i = 0
  if (text.length === 0) return rows
  while (i < text.length) {
    let field = ''
    if (text[i] === '"') {
      i += 1
      for (;;) {
        if (i >= text.length) throw new Error('CSV: a quoted field is not closed')
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"'
            i += 2
            continue
          }
          i += 1
          break
        }
        field += text[i]
        i += 1
      }
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r' && text[i] !== '\n') {
        if (text[i] === '"') throw new Error(`CSV: a quote inside an unquoted field at ${i}`)
        field += text[i]
        i += 1
      }
    }
    row.push(field)
    if (text[i] === ',') {
      i += 1
      continue
    }
    if (text[i] === '\r' && text[i + 1] === '\n') {
      rows.push(row)
      row = []
      i += 2
      continue
    }
    throw new Error(`CSV: expected a comma or CRLF at ${i}, found ${JSON.stringify(text.slice(i, i + 10))}`)
  }
  return rows
}

/** The rows after the header as records by column name, checking each row has every column. */
export function csvRecords(text: string): { header: string[]; records: Record<string, string>[] } {
  const [header, ...rows] = parseCsv(text)
  if (!header) throw new Error('CSV: no header row')
  return {
    header,
    records: rows.map((row, index) => {
      if (row.length !== header.length) throw new Error(`CSV: row ${index + 2} has ${row.length} fields, the header ${header.length}`)
      return Object.fromEntries(header.map((name, column) => [name, row[column]!]))
    }),
  }
}
