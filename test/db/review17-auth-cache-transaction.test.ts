/**
 * Review of issue 17 (src/modules/stores/auth-cache.ts, src/db/change-feed.ts): on PostgreSQL, this
 * process's write inside a transaction is "forgotten" by the Kysely plugin when the statement runs,
 * i.e. BEFORE the commit. A read on another pooled connection in between loads the old (still
 * committed) row with a fresh generation ticket and caches it; after the commit has been awaited, the
 * same process still answers the old row until the LISTEN notification happens to arrive.
 * docs/contract.md section 10: "A change made through the same process is seen by its next request."
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import type { DatabaseHandle } from '../../src/db/connect.ts'
import { createAuthCache } from '../../src/modules/stores/auth-cache.ts'
import { createStore } from '../../src/modules/stores/index.ts'
import { createTestDatabase, onPostgres } from '../helpers/database.ts'

let database: DatabaseHandle
before(async () => {
  database = await createTestDatabase()
})
after(() => database?.close())

test('a store change committed by this process is seen by its next read (transaction on PostgreSQL)', { skip: !onPostgres && 'PostgreSQL only' }, async () => {
  const cache = createAuthCache({ db: database.db, changes: database.changes })
  try {
    for (let i = 0; i < 100 && !database.changes.live; i++) await sleep(20)
    assert.ok(database.changes.live, 'listener up')
    const store = await createStore(database.db, { storeHash: `review17-${process.pid}` })
    const stale: string[] = []
    for (let round = 0; round < 30; round++) {
      const name = `name-${round}`
      await database.db.transaction().execute(async (trx) => {
        await trx.updateTable('stores').set({ name }).where('id', '=', store.id).execute()
        // Any concurrent request of this process authenticating for the store meanwhile:
        await cache.store(store.id)
      })
      // The transaction has committed and been awaited: the next read must see it.
      const seen = (await cache.store(store.id))!.name
      if (seen !== name) stale.push(`round ${round}: committed ${name}, read ${seen}`)
    }
    assert.deepEqual(stale, [])
  } finally {
    cache.close()
  }
})
