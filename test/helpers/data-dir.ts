// DATA_DIRs for the service and CLI processes the process and browser suites start.
import { PGlite } from '@electric-sql/pglite'
import { cpSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cachedPglite } from './database.ts'

/**
 * A new DATA_DIR (under the system's temp directory, named after `prefix`) whose embedded database has
 * been through PGlite's initdb and nothing else: a copy of one made earlier. A service started on an empty
 * DATA_DIR runs initdb first, ~5 s and ~8 s of CPU on these 2-core machines against ~50 ms for the copy,
 * and the process and browser suites start some twenty services on new directories. To the service the
 * copy is a new database: every migration runs in its first start, which therefore makes the demo data as
 * on a newcomer's first `npm start`. The startup-safety suite still starts one on a truly empty
 * directory, initdb included, and checks the modes of the files it writes.
 */
export async function newDataDir(prefix: string): Promise<string> {
  const source = await template()
  const dataDir = mkdtempSync(join(tmpdir(), prefix))
  cpSync(source, join(dataDir, 'pglite'), { recursive: true })
  return dataDir
}

let made: Promise<string> | undefined

/**
 * The database directory initdb made, once per version of PGlite (and set of migrations: the cache key
 * is the test databases'), kept under node_modules/.cache. A build killed midway leaves its aside copy.
 */
function template(): Promise<string> {
  if (!made) {
    made = cachedPglite('-initdb-dir', async (partial) => {
      // A clean shutdown, as a service's stop leaves the directory.
      await (await PGlite.create(partial)).close()
    })
    // A failed build is not remembered: the next caller tries again.
    made.catch(() => (made = undefined))
  }
  return made
}
