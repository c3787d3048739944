import assert from 'node:assert/strict'
import { test } from 'node:test'

// The subscriber's browser is in London; the store is in New York.
process.env.TZ = 'Europe/London'
const { formatDate, formatDateTime, storeZoneNote, useStoreZone } = await import('../../src/web/portal/format.ts')

test("the portal writes dates on the store's calendar and times with the store's zone, the subscriber's own time in brackets", () => {
  useStoreZone('America/New_York')
  // 02:00 on Mar 27 in London is still Mar 26 in New York: the renewal "of Mar 26", as the store's emails say it.
  assert.match(formatDate('2027-03-27T02:00:00Z'), /^Mar 26, 2027$/)
  assert.match(formatDateTime('2027-03-26T14:00:00Z'), /^Mar 26, 2027, 10:00\s?AM EDT \(2:00\s?PM GMT your time\)$/)
  // Another day in the subscriber's zone: the day is said too.
  assert.match(formatDateTime('2027-01-15T03:30:00Z'), /^Jan 14, 2027, 10:30\s?PM EST \(Jan 15, 3:30\s?AM GMT your time\)$/)
  assert.equal(storeZoneNote(), "Dates and times are the store's (America/New York)")
})

test('when the subscriber is in the store\'s zone there is nothing in brackets and no note', () => {
  useStoreZone('Europe/London')
  assert.match(formatDateTime('2027-03-26T14:00:00Z'), /^Mar 26, 2027, 2:00\s?PM GMT$/)
  assert.equal(storeZoneNote(), null)
})
