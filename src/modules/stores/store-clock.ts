import type { StoreRow } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'

/** A store's "now": real time, or where a test-mode store's test clock stands. Domain code asks this, never Date.now(). */
export function storeNow(store: Pick<StoreRow, 'test_clock_now'>, clock: Clock): Date {
  return store.test_clock_now ?? clock.now()
}
