import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import fc from 'fast-check'
import { retryDelayMs } from '../../src/jobs/retry-schedule.ts'

const HOUR_MS = 3_600_000
const middle = () => 0.5

describe('job retry delay', () => {
  test('doubles with every attempt from 2 s (no jitter at random() = 0.5)', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5, 10].map((attempt) => retryDelayMs(attempt, middle)),
      [2_000, 4_000, 8_000, 16_000, 32_000, 1_024_000],
    )
  })

  test('attempt 0 (or below) waits as long as the first retry', () => {
    assert.equal(retryDelayMs(0, middle), 2_000)
    assert.equal(retryDelayMs(-3, middle), 2_000)
  })

  test('is capped at an hour however many attempts failed', () => {
    assert.equal(retryDelayMs(11, middle), 2_048_000)
    for (const attempt of [12, 13, 20, 100, 5_000]) assert.equal(retryDelayMs(attempt, middle), HOUR_MS, `attempt ${attempt}`)
  })

  test('jitter stays within +-20% of the base delay, reaching both ends', () => {
    assert.equal(retryDelayMs(3, () => 0), 6_400)
    assert.equal(retryDelayMs(3, () => 0.999_999_9), 9_600)
    assert.equal(retryDelayMs(50, () => 0), 0.8 * HOUR_MS)
    assert.equal(retryDelayMs(50, () => 0.999_999_9), 1.2 * HOUR_MS)
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 64 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (attempt, random) => {
        const base = Math.min(2 ** Math.max(attempt, 1) * 1000, HOUR_MS)
        const delay = retryDelayMs(attempt, () => random)
        return Number.isInteger(delay) && delay >= 0.8 * base && delay <= 1.2 * base
      }),
    )
  })

  test('jitter spreads retries that failed together', () => {
    const delays = new Set([0, 0.25, 0.5, 0.75].map((r) => retryDelayMs(5, () => r)))
    assert.equal(delays.size, 4)
  })

  test('grows monotonically in the attempt for a fixed random()', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (attempt, random) => {
        return retryDelayMs(attempt + 1, () => random) >= retryDelayMs(attempt, () => random)
      }),
    )
  })
})
