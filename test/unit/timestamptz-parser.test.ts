/**
 * The fast timestamptz path (src/db/timestamptz-parser.ts) gives the same instant as the driver's
 * own parser for every shape PostgreSQL writes, and leaves the shapes it does not know to it.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import { parseTimestamptz } from '../../src/db/timestamptz-parser.ts'

const driver = pg.types.getTypeParser(1184, 'text') as (text: string) => unknown

test('the same instant as the driver parser, fast path or not', () => {
  const samples = [
    '2026-11-24 14:45:19.255+00', '2026-11-24 14:45:19.255123+00', '2026-11-24 14:45:19.2+00', '2026-11-24 14:45:19+00',
    '1970-01-01 00:00:00+00', '2028-02-29 23:59:59.999999+00', '0001-01-01 00:00:00+00',
    // Not the fast shape: another offset, minutes in the offset, BC, a five-digit year, infinity.
    '2026-11-24 15:45:19.255+01', '2026-11-24 20:15:19+05:30', '2026-11-24 14:45:19-03', '0044-03-15 12:00:00+00 BC',
    '12026-11-24 14:45:19+00', 'infinity', '-infinity',
  ]
  for (const text of samples) {
    const ours = parseTimestamptz(text, driver)
    const theirs = driver(text)
    if (theirs instanceof Date) {
      assert.ok(ours instanceof Date, text)
      assert.equal((ours as Date).getTime(), theirs.getTime(), text)
    } else {
      assert.deepEqual(ours, theirs, text)
    }
  }
})

test('random instants agree to the millisecond', () => {
  for (let i = 0; i < 10_000; i++) {
    const at = new Date(Math.floor(Math.random() * 4_102_444_800_000))
    const micros = String(Math.floor(Math.random() * 1_000_000)).padStart(6, '0')
    const text = `${at.toISOString().slice(0, 19).replace('T', ' ')}.${micros}+00`
    assert.equal((parseTimestamptz(text, driver) as Date).getTime(), (driver(text) as Date).getTime(), text)
  }
})
