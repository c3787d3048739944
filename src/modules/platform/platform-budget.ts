import { AsyncLocalStorage } from 'node:async_hooks'
import type { Db } from '../../db/database.ts'
import { systemClock, type Clock } from '../../lib/clock.ts'
import type { PlatformAnswer } from './platform-client.ts'
import { recordBareRateLimit, recordRateHeaders, returnPlatformCalls, type RateHeaders } from './platform-budget.repository.ts'

/**
 * Feeds each store's platform budget (platform_budgets) from the rate-limit headers of the answers
 * this process gets, and counts the calls a piece of work makes (a renewal's), so the claim knows
 * what a renewal costs.
 *
 * Writes are few: an answer is written when the store's window is tight (half its quota or less
 * left), on a 429, or when a new window begins; a store far from its limit costs one write a window.
 * While one write for a store is in flight, later answers replace each other and only the newest is
 * written next, so a burst of answers is one or two statements, not one each.
 */

export interface PlatformBudgetLog {
  warn(details: object, message: string): void
}

export interface PlatformBudget {
  /** Called with every answer of a store's REST host (the payments host has a limit of its own). */
  observe(storeHash: string, answer: Pick<PlatformAnswer, 'statusCode' | 'headers'>): void
  /** Runs `work`, answering how many platform requests it sent (429s and their retries included). */
  counted<T>(work: () => Promise<T>): Promise<{ result: T; calls: number }>
  /** Counts one request sent, for the `counted` work it belongs to (the client calls it). */
  countCall(): void
  /** A claimed renewal ended: it gives back the `reserved` calls its claim spent, having made `made`. */
  returned(storeId: string, reserved: number, made: number): void
  /** Resolves once the writes started so far are done (tests, shutdown). */
  settled(): Promise<void>
}

/** A bare 429 (no headers: the platform under load) holds the store back this long. */
const BARE_429_PAUSE_MS = 1_000
/** Answers a second apart in resets mean a new window, not the same one seen twice. */
const SAME_WINDOW_MS = 2_000

function header(headers: PlatformAnswer['headers'], name: string): number | undefined {
  const raw = headers[name]
  const value = Array.isArray(raw) ? raw[0] : raw
  if (value === undefined || value.trim() === '') return undefined
  const number = Number(value)
  return Number.isFinite(number) && number >= 0 ? Math.floor(number) : undefined
}

/** The four rate-limit headers (§0 "Rate limits"), or undefined when any is missing or not a number. */
export function rateHeadersOf(headers: PlatformAnswer['headers']): RateHeaders | undefined {
  const quota = header(headers, 'x-rate-limit-requests-quota')
  const left = header(headers, 'x-rate-limit-requests-left')
  const resetMs = header(headers, 'x-rate-limit-time-reset-ms')
  const windowMs = header(headers, 'x-rate-limit-time-window-ms')
  if (quota === undefined || left === undefined || resetMs === undefined || windowMs === undefined) return undefined
  // Bounded so a lying header cannot overflow a column or park a store for hours (a row past
  // believing counts as a fresh window anyway).
  const window = Math.min(Math.max(windowMs, 1), 600_000)
  // A reset never further off than the window: a lying header cannot park a store past it.
  return { quota: Math.min(quota, 1_000_000), left: Math.min(left, 1_000_000), resetMs: Math.min(resetMs, window), windowMs: window }
}

export function createPlatformBudget({ db, clock = systemClock, log }: { db: Db; clock?: Clock; log?: PlatformBudgetLog }): PlatformBudget {
  const calls = new AsyncLocalStorage<{ calls: number }>()
  // Per store hash: the window last written (its reset time), what waits to be written, whether a write runs.
  const lastReset = new Map<string, number>()
  const waiting = new Map<string, { headers: RateHeaders | undefined; at: Date }>()
  const writing = new Map<string, Promise<void>>()
  // Per store id: what ended renewals give back, summed until written (one statement for a burst of them).
  const returns = new Map<string, { reserved: number; made: number }>()

  async function write(storeHash: string): Promise<void> {
    for (let next = waiting.get(storeHash); next; next = waiting.get(storeHash)) {
      waiting.delete(storeHash)
      try {
        // The reset counts from when the answer came, not from when this write runs.
        if (next.headers) await recordRateHeaders(db, storeHash, next.headers, Math.max(0, clock.now().getTime() - next.at.getTime()))
        else await recordBareRateLimit(db, storeHash, BARE_429_PAUSE_MS)
      } catch (error) {
        // The budget is a forecast: billing goes on without this write, and the next answer writes again.
        log?.warn({ storeHash, err: error }, 'the platform budget could not be recorded')
      }
    }
    writing.delete(storeHash)
  }

  async function giveBack(storeId: string): Promise<void> {
    const key = `return:${storeId}`
    for (let next = returns.get(storeId); next; next = returns.get(storeId)) {
      returns.delete(storeId)
      try {
        await returnPlatformCalls(db, storeId, next.reserved, next.made)
      } catch (error) {
        // Lost, the reservation holds the store back until its window after next, no longer.
        log?.warn({ storeId, err: error }, 'calls reserved on the platform budget could not be given back')
      }
    }
    writing.delete(key)
  }

  return {
    observe(storeHash, answer) {
      const headers = rateHeadersOf(answer.headers)
      const limited = answer.statusCode === 429
      if (!headers && !limited) return
      const at = clock.now()
      if (headers) {
        const resetsAt = at.getTime() + headers.resetMs
        const known = lastReset.get(storeHash)
        const newWindow = known === undefined || Math.abs(resetsAt - known) > SAME_WINDOW_MS
        if (!newWindow && !limited && headers.left > headers.quota / 2) return
        lastReset.set(storeHash, resetsAt)
      }
      waiting.set(storeHash, { headers, at })
      if (!writing.has(storeHash)) writing.set(storeHash, write(storeHash))
    },
    async counted(work) {
      const counter = { calls: 0 }
      const result = await calls.run(counter, work)
      return { result, calls: counter.calls }
    },
    returned(storeId, reserved, made) {
      const sum = returns.get(storeId) ?? { reserved: 0, made: 0 }
      returns.set(storeId, { reserved: sum.reserved + reserved, made: sum.made + made })
      const key = `return:${storeId}`
      if (!writing.has(key)) writing.set(key, giveBack(storeId))
    },
    countCall() {
      const counter = calls.getStore()
      if (counter) counter.calls++
    },
    async settled() {
      while (writing.size > 0) await Promise.all(writing.values())
    },
  }
}
