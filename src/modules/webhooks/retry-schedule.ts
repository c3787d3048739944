/**
 * When a failed delivery is tried again (docs/contract.md, Webhook delivery): the Standard Webhooks schedule, each
 * delay counted from the previous attempt, with jitter so endpoints that failed together do not all
 * come back at the same second; a receiver's Retry-After (429, 503) is honoured when it asks for more.
 */

import { parseDurations } from '../../lib/durations.ts'

const SECOND = 1_000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 14 * HOUR, 20 * HOUR, 24 * HOUR]
/** An endpoint failing without a single success for this long is disabled. */
export const DEFAULT_DISABLE_AFTER_MS = 5 * 24 * HOUR
const JITTER = 0.1
// A Retry-After beyond the schedule's longest wait is not believed: the schedule still ends.
const MAX_RETRY_AFTER_MS = 24 * HOUR

/** Parses "5s,5m,30m,2h" (or plain milliseconds) into delays; throws naming the bad item. */
export const parseRetrySchedule = parseDurations

export type AttemptResult =
  | { kind: 'delivered' }
  /** 410 Gone: the receiver asks never to be called again. */
  | { kind: 'gone' }
  | { kind: 'failed'; retryAfterMs?: number | undefined }

export function classifyAnswer(statusCode: number, retryAfter: string | undefined, now: Date): AttemptResult {
  if (statusCode >= 200 && statusCode < 300) return { kind: 'delivered' }
  if (statusCode === 410) return { kind: 'gone' }
  if (statusCode === 429 || statusCode === 503) return { kind: 'failed', retryAfterMs: parseRetryAfter(retryAfter, now) }
  // Redirects included: they are never followed, so they are failures.
  return { kind: 'failed' }
}

/** Retry-After as seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (!value) return undefined
  const trimmed = value.trim()
  const ms = /^\d+$/.test(trimmed) ? Number(trimmed) * SECOND : Date.parse(trimmed) - now.getTime()
  if (!Number.isFinite(ms) || ms < 0) return undefined
  return Math.min(ms, MAX_RETRY_AFTER_MS)
}

/**
 * The time of the next attempt after `failedAttempts` failures (the first attempt is not a retry),
 * or null when the schedule is used up and the delivery is marked failed.
 */
export function nextAttemptAt(failedAttempts: number, schedule: readonly number[], now: Date, retryAfterMs?: number, random: () => number = Math.random): Date | null {
  const base = schedule[failedAttempts - 1]
  if (base === undefined) return null
  const jittered = base * (1 - JITTER + 2 * JITTER * random())
  return new Date(now.getTime() + Math.max(jittered, retryAfterMs ?? 0))
}
