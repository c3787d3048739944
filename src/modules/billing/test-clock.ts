import type { Db, StoreRow } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { invalidField, notFound } from '../../lib/errors.ts'
import { toRfc3339 } from '../../lib/time.ts'
import { setTestClock, storeNow } from '../stores/index.ts'
import type { DueCounts } from '../subscriptions/index.ts'
import type { RenewalEngine } from './renewal-engine.ts'

export interface ProcessedCounts {
  activations: number
  renewals: number
  retries: number
  reminders: number
  resumptions: number
  cancellations: number
  expirations: number
}

export interface TestClockView {
  object: 'test_clock'
  now: string
  /** True while the store follows real time (the clock was never advanced). */
  follows_real_time: boolean
}

export interface AdvanceResult {
  now: string
  processed: ProcessedCounts
}

// Bounds the work one call can ask for: a test that needs more advances again.
const MAX_ADVANCE_MS = 10 * 366 * 24 * 3_600_000

function requireTestMode(store: StoreRow): void {
  // Live stores have no test clock at all: the route does not exist for them.
  if (store.mode !== 'test') throw notFound('test clock', store.store_hash)
}

export function createTestClock({ db, clock, renewals, processDueWork, onStoreChanged }: {
  db: Db
  clock: Clock
  renewals: RenewalEngine
  /** The subscriptions module's due lifecycle work, for one store; `catchUpFrom`: where its clock stood before the move. */
  processDueWork: (options: { storeId: string; catchUpFrom?: Date }) => Promise<DueCounts>
  /** Told once the store's clock has moved, so caches of its row forget it. */
  onStoreChanged?: (storeId: string) => void
}) {
  return {
    read(store: StoreRow): TestClockView {
      requireTestMode(store)
      return { object: 'test_clock', now: toRfc3339(storeNow(store, clock)), follows_real_time: store.test_clock_now === null }
    },

    /**
     * Moves the store's clock to `to` and runs everything that fell due meanwhile before answering.
     * Each piece runs at its own due time, in due order (its events carry that time), and work that
     * becomes due because of earlier work (a cancellation at the end of a period that an activation
     * opened) is found by the next pass. The time jumped over is replayed from where the clock stood
     * (`catchUpFrom`): a reminder is sent for a renewal the jump passes, but not for one that was
     * already due before it (billing was off: it is charged without an announcement).
     */
    async advance(store: StoreRow, to: string): Promise<AdvanceResult> {
      requireTestMode(store)
      const target = new Date(to)
      const current = storeNow(store, clock)
      if (target.getTime() < current.getTime()) throw invalidField('/body/to', `must not be before the store's current time ${toRfc3339(current)}`)
      if (target.getTime() - current.getTime() > MAX_ADVANCE_MS) throw invalidField('/body/to', 'may be at most 10 years ahead; advance in steps')
      await setTestClock(db, store.id, target)
      onStoreChanged?.(store.id)

      const processed: ProcessedCounts = { activations: 0, renewals: 0, retries: 0, reminders: 0, resumptions: 0, cancellations: 0, expirations: 0 }
      // Each pass runs lifecycle work before renewals: a renewal only ever creates work due after it
      // (a retry, the next period's reminder), which the next pass finds in its turn.
      for (;;) {
        const due = await processDueWork({ storeId: store.id, catchUpFrom: current })
        const renewed = await renewals.runDue({ storeId: store.id })
        processed.activations += due.activations
        processed.resumptions += due.resumptions
        processed.cancellations += due.cancellations
        processed.reminders += due.reminders
        processed.renewals += renewed.renewals
        processed.retries += renewed.retries
        processed.expirations += renewed.expirations
        const lifecycle = due.activations + due.resumptions + due.cancellations + due.reminders + due.prepaidCycles
        if (lifecycle === 0 && renewed.claimed === 0) break
      }
      return { now: toRfc3339(target), processed }
    },
  }
}

export type TestClock = ReturnType<typeof createTestClock>
