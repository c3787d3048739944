import assert from 'node:assert/strict'
import { test } from 'node:test'
import { waitInWords } from '../../src/lib/durations.ts'

test('a wait is said in the unit a person would use, rounded up: never "741 s"', () => {
  assert.equal(waitInWords(741_000), '13 minutes')
  assert.equal(waitInWords(45_000), '45 seconds')
  assert.equal(waitInWords(1_000), '1 second')
  assert.equal(waitInWords(200), '1 second')
  assert.equal(waitInWords(60_000), '1 minute')
  assert.equal(waitInWords(90_000), '90 seconds')
  assert.equal(waitInWords(150_000), '3 minutes')
  assert.equal(waitInWords(3_600_000), '1 hour')
  assert.equal(waitInWords(5_400_000), '90 minutes')
  assert.equal(waitInWords(3 * 3_600_000 + 1), '4 hours')
  assert.equal(waitInWords(2 * 86_400_000), '2 days')
})
