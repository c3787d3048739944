// What the SIGKILL suites (billing exactly-once, webhook at-least-once) do alike: worker processes
// (`ROLE=worker`) on a database of the suite's own, killed and restarted, then left to finish.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
// wall clock: runToCompletion polls a worker process (below).
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before } from 'node:test'
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.ts'
import type { Db } from '../../src/db/database.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { createTestDatabase, onPostgres, scratchUrl } from './database.ts'
import { startServer, type RunningServer } from './server-process.ts'
import { newDataDir } from './data-dir.ts'

/** How long a worker may take to start. */
const START_TIMEOUT_MS = 60_000

export interface WorkerDatabase {
  /** The workers' environment: `workerEnv` pointed at the database. */
  readonly env: Record<string, string>
  /** The scratch PostgreSQL database, open all along; undefined on PGlite. */
  readonly handle: DatabaseHandle | undefined
  /**
   * `work` on the database: through `handle` on PostgreSQL; on PGlite, which allows one process at a
   * time, on a connection of its own closed afterwards, so only while no worker runs. `migrate` first
   * where the directory is still fresh.
   */
  use<T>(work: (db: Db) => Promise<T>, options?: { migrate?: boolean }): Promise<T>
}

/**
 * Hooks on the enclosing describe for the database the suite's workers share: a scratch PostgreSQL
 * database when DATABASE_URL is set, else a fresh PGlite directory named after `tmpPrefix`; dropped
 * or removed after the suite.
 */
export function workerDatabase(workerEnv: Record<string, string>, tmpPrefix: string): WorkerDatabase {
  let handle: DatabaseHandle | undefined
  let dataDir: string | undefined
  let env: Record<string, string>

  before(async () => {
    if (onPostgres) {
      handle = await createTestDatabase()
      env = { ...workerEnv, DATABASE_URL: scratchUrl(handle)! }
    } else {
      dataDir = await newDataDir(tmpPrefix)
      env = { ...workerEnv, DATA_DIR: dataDir }
    }
  })
  after(async () => {
    await handle?.close()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  })

  return {
    get env() {
      return env
    },
    get handle() {
      return handle
    },
    async use(work, options = {}) {
      if (handle) return work(handle.db)
      const own = await connectDatabase({ dataDir: dataDir! })
      try {
        if (options.migrate) await migrateToLatest(own.db)
        return await work(own.db)
      } finally {
        await own.close()
      }
    },
  }
}

/**
 * `rounds` times: starts a worker on `env`, lets `kill` SIGKILL it (when and how it likes), waits for it
 * to exit, then runs `afterExit`.
 */
export async function killRepeatedly(
  env: Record<string, string>,
  rounds: number,
  kill: (worker: RunningServer, round: number) => Promise<void>,
  afterExit: (round: number) => Promise<void> | void = () => {},
): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    const worker = await startServer(env, START_TIMEOUT_MS)
    const exited = new Promise((resolve) => worker.child.once('exit', resolve))
    await kill(worker, round)
    await exited
    await afterExit(round)
  }
}

/**
 * The last restart, left to finish: a worker on `env`, polled with `check` every `pollMs` until it says
 * the run is done; after `timeoutMs` the assertion fails with the check's progress and the worker's
 * output. The worker is stopped with SIGTERM either way.
 */
export async function runToCompletion(
  env: Record<string, string>,
  options: { timeoutMs: number; pollMs: number; check: (worker: RunningServer) => Promise<{ done: boolean; progress: string }> | { done: boolean; progress: string } },
): Promise<void> {
  const worker = await startServer(env, START_TIMEOUT_MS)
  try {
    const deadline = Date.now() + options.timeoutMs
    for (;;) {
      const { done, progress } = await options.check(worker)
      if (done) break
      assert.ok(Date.now() < deadline, `${progress}\n${worker.output()}`)
      // wall clock: the worker process runs on its own; polled, with a deadline.
      await sleep(options.pollMs)
    }
  } finally {
    await worker.stop('SIGTERM')
  }
}
