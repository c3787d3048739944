import { PGliteAdapter, PGliteDialect, type DatabaseConnection, type Driver, type TransactionSettings } from 'kysely'

/**
 * Kysely's PGlite dialect with its one connection handed out first come, first served.
 *
 * Why: for a dialect without multiple connections Kysely guards the connection with a mutex that, on
 * every release, wakes every waiter to race for it again. Under load (the portal bench keeps 1,000
 * requests in flight) that is ~1,000 promise resumptions per query, and a request whose turn comes
 * while the waiters are being woken takes the connection ahead of all of them, so some requests waited
 * past 10 s while the median waited 0.3 s (BENCHMARKS.md, Portal). Here a queue hands the connection to
 * the longest waiter, in constant time. The guarantee is the same: one user of the connection at a
 * time, for a whole transaction or `db.connection()` call.
 */
export class FifoPGliteDialect extends PGliteDialect {
  override createAdapter(): PGliteAdapter {
    return new OwnLockPGliteAdapter()
  }

  override createDriver(): Driver {
    return new FifoDriver(super.createDriver())
  }
}

/** Tells Kysely not to add its own lock: FifoDriver holds one. */
class OwnLockPGliteAdapter extends PGliteAdapter {
  override get supportsMultipleConnections(): boolean {
    return true
  }
}

/** One holder at a time; waiters are served in arrival order. */
export class FifoLock {
  private held = false
  private readonly waiting: Array<() => void> = []

  acquire(): Promise<void> | void {
    if (!this.held) {
      this.held = true
      return
    }
    return new Promise<void>((resolve) => this.waiting.push(resolve))
  }

  release(): void {
    const next = this.waiting.shift()
    // Handed straight to the next waiter: nobody arriving in between can take it.
    if (next) next()
    else this.held = false
  }

  get queued(): number {
    return this.waiting.length
  }
}

class FifoDriver implements Driver {
  private readonly inner: Driver
  private readonly lock = new FifoLock()

  constructor(inner: Driver) {
    this.inner = inner
  }

  init(...args: Parameters<Driver['init']>): Promise<void> {
    return this.inner.init(...args)
  }

  async acquireConnection(...args: Parameters<Driver['acquireConnection']>): Promise<DatabaseConnection> {
    await this.lock.acquire()
    try {
      return await this.inner.acquireConnection(...args)
    } catch (error) {
      this.lock.release()
      throw error
    }
  }

  async releaseConnection(...args: Parameters<Driver['releaseConnection']>): Promise<void> {
    try {
      await this.inner.releaseConnection(...args)
    } finally {
      this.lock.release()
    }
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(connection, settings)
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection)
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection)
  }

  savepoint(...args: Parameters<NonNullable<Driver['savepoint']>>): Promise<void> {
    return this.inner.savepoint!(...args)
  }

  rollbackToSavepoint(...args: Parameters<NonNullable<Driver['rollbackToSavepoint']>>): Promise<void> {
    return this.inner.rollbackToSavepoint!(...args)
  }

  releaseSavepoint(...args: Parameters<NonNullable<Driver['releaseSavepoint']>>): Promise<void> {
    return this.inner.releaseSavepoint!(...args)
  }

  destroy(...args: Parameters<Driver['destroy']>): Promise<void> {
    return this.inner.destroy(...args)
  }
}
