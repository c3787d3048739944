/**
 * A store change this process commits inside a transaction is seen by its next read
 * (docs/contract.md, "Sign-out and caches"), even while other reads of the store race the
 * transaction: on PostgreSQL they run on other pooled connections and read the row as it was until
 * the commit. The platform connection's connect and disconnect write the store (billing resumed or
 * stopped) in a transaction and tell the cache once it has committed. Runs on both databases.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, test } from 'node:test'
import type { DatabaseHandle } from '../../src/db/connect.ts'
import { systemClock } from '../../src/lib/clock.ts'
import { createPlatformConnections, createTokenVault } from '../../src/modules/platform/index.ts'
import { createAuthCache, createStore } from '../../src/modules/stores/index.ts'
import { createTestDatabase } from '../helpers/database.ts'

let database: DatabaseHandle
before(async () => {
  database = await createTestDatabase()
})
after(() => database?.close())

test('a store change committed by this process in a transaction is seen by its next read, with reads racing the transaction', async () => {
  const cache = createAuthCache({ db: database.db })
  const key = randomBytes(32)
  const connections = createPlatformConnections({ db: database.db, vault: createTokenVault(async () => key), clock: systemClock, onStoreChanged: cache.forgetStore })
  const store = await createStore(database.db, { storeHash: `own-writes-${process.pid}` })
  const stale: string[] = []
  for (let round = 0; round < 20; round++) {
    const stopping = round % 2 === 0
    // Requests of this process authenticating for the store while the change is under way.
    let racing = true
    const racers = Array.from({ length: 3 }, async () => {
      while (racing) {
        await cache.store(store.id)
        await new Promise((resolve) => setImmediate(resolve))
      }
    })
    if (stopping) await connections.disconnect(store.id)
    else await connections.connect(store.id, { accessToken: `token-${round}`, source: 'api_account' })
    // The change has committed and been awaited: the very next read must see it.
    const seen = (await cache.store(store.id))!.billing_stopped_at
    if ((seen !== null) !== stopping) stale.push(`round ${round}: billing ${stopping ? 'stopped' : 'resumed'}, read billing_stopped_at ${String(seen)}`)
    racing = false
    await Promise.all(racers)
  }
  assert.deepEqual(stale, [])
})
