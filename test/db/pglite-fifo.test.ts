/**
 * The embedded database's connection is handed out in arrival order (src/db/pglite-fifo-dialect.ts):
 * a request arriving while the connection changes hands waits behind those already waiting, and
 * many concurrent users (transactions among them) each get it alone.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { sql } from 'kysely'
import { connectDatabase } from '../../src/db/connect.ts'
import { FifoLock } from '../../src/db/pglite-fifo-dialect.ts'

describe('first come, first served on the embedded database', () => {
  test('a late arrival never takes the lock ahead of those waiting', async () => {
    const lock = new FifoLock()
    await lock.acquire()
    const order: string[] = []
    const waiter = (name: string) => Promise.resolve(lock.acquire()).then(() => {
      order.push(name)
      lock.release()
    })
    const first = waiter('first')
    const second = waiter('second')
    lock.release()
    // Arrives in the same turn as the hand-over, before the woken waiter has run.
    const late = waiter('late')
    await Promise.all([first, second, late])
    assert.deepEqual(order, ['first', 'second', 'late'])
    assert.equal(lock.queued, 0)
  })

  test('500 concurrent queries and transactions each run alone and all finish', async () => {
    const handle = await connectDatabase({ dataDir: 'memory://' })
    try {
      await sql`CREATE TABLE counter (n int NOT NULL)`.execute(handle.db)
      await sql`INSERT INTO counter VALUES (0)`.execute(handle.db)
      const work = Array.from({ length: 500 }, (_, i) =>
        i % 5 === 0
          ? handle.db.transaction().execute(async (trx) => {
            const { rows } = await sql<{ n: number }>`SELECT n FROM counter`.execute(trx)
            await new Promise((resolve) => setImmediate(resolve))
            await sql`UPDATE counter SET n = ${rows[0]!.n + 1}`.execute(trx)
          })
          : sql`SELECT n FROM counter`.execute(handle.db))
      await Promise.all(work)
      const { rows } = await sql<{ n: number }>`SELECT n FROM counter`.execute(handle.db)
      assert.equal(rows[0]!.n, 100, 'no transaction saw another one half-done')
    } finally {
      await handle.close()
    }
  })
})
