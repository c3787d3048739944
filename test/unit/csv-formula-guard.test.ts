import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import fc from 'fast-check'
import { csvStream, guardCsvCell, unguardCsvCell } from '../../src/lib/csv.ts'
import { parseCsv } from '../helpers/csv.ts'

/**
 * The CSV writer of the exports (docs/contract.md, Exports): text a spreadsheet would run as a
 * formula is defused with a leading quote (OWASP), plain numbers are not, the guard is undone
 * exactly by dropping one leading quote, and every value survives a strict RFC 4180 reading.
 */
describe('CSV cells and the formula guard', () => {
  test('a cell starting with =, +, -, @, a tab or a CR gets a leading quote; plain numbers and other text do not', () => {
    for (const [cell, written] of [
      ['=1+1', "'=1+1"],
      ['=HYPERLINK("http://x","y")', `'=HYPERLINK("http://x","y")`],
      ['+1 555 0100', "'+1 555 0100"],
      ['-2+3', "'-2+3"],
      ['@SUM(A1)', "'@SUM(A1)"],
      ['\tcmd', "'\tcmd"],
      ['\rcmd', "'\rcmd"],
      ["'already", "''already"],
      ['-1500', '-1500'],
      ['+44', '+44'],
      ['3.5', '3.5'],
      ['-0.25', '-0.25'],
      ['Ada Lovelace', 'Ada Lovelace'],
      ['a=b', 'a=b'],
      ['', ''],
    ] as const) {
      assert.equal(guardCsvCell(cell), written, JSON.stringify(cell))
    }
  })

  test('reversible: dropping one leading quote gives back any text; nothing written starts a formula', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.constantFrom('', '=', '+', '-', '@', '\t', '\r', "'", "''", '-1'), (text, start) => {
        const value = start + text
        const written = guardCsvCell(value)
        assert.equal(unguardCsvCell(written), value)
        if (written !== value) assert.ok(written.startsWith("'"))
        else assert.ok(!/^[=+@\t\r']/.test(value) && (!value.startsWith('-') || /^-\d+(\.\d+)?$/.test(value)), JSON.stringify(value))
      }),
    )
  })

  test('a stream: header, CRLF rows, quotes where needed (a lone CR or LF too), numbers and booleans as written, null empty', async () => {
    async function* records() {
      yield { a: 'plain', b: -1500, c: true, d: null }
      yield { a: 'comma, "quote"', b: 0, c: false, d: undefined }
      yield { a: 'line\nbreak', b: 3, c: true, d: 'carriage\rreturn' }
      yield { a: '=cmd', b: 1, c: false, d: '-7' }
    }
    let text = ''
    for await (const chunk of csvStream(['a', 'b', 'c', 'd'], records())) text += chunk
    assert.equal(text, 'a,b,c,d\r\nplain,-1500,true,\r\n"comma, ""quote""",0,false,\r\n"line\nbreak",3,true,"carriage\rreturn"\r\n\'=cmd,1,false,-7\r\n')
    assert.deepEqual(parseCsv(text), [
      ['a', 'b', 'c', 'd'],
      ['plain', '-1500', 'true', ''],
      ['comma, "quote"', '0', 'false', ''],
      ['line\nbreak', '3', 'true', 'carriage\rreturn'],
      ["'=cmd", '1', 'false', '-7'],
    ])
  })

  test('a failure of the records ends the stream with it (the answer is cut short, not completed)', async () => {
    async function* records() {
      yield { a: 'first' }
      throw new Error('the database went away')
    }
    const stream = csvStream(['a'], records())
    await assert.rejects(async () => {
      for await (const _chunk of stream) {
        // read until it fails
      }
    }, /the database went away/)
  })
})
