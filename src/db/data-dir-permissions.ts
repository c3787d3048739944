import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Nobody but the service's own user may read the embedded database, its secrets or its lock. */
const PRIVATE_UMASK = 0o077
const PRIVATE_DIR_MODE = 0o700

/**
 * Makes DATA_DIR private before the embedded database opens it: the process umask becomes 0077, so
 * every directory and file this process creates from here on is 0700 and 0600 (the session secret,
 * the lock, new database files), a missing DATA_DIR is created 0700, and an existing one open to
 * group or others is tightened to 0700, which `notice` is told. The umask is process-wide: this
 * process only ever writes private files.
 */
export function secureDataDir(dir: string, notice: (message: string) => void): void {
  process.umask(PRIVATE_UMASK)
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE })
  const mode = statSync(dir).mode & 0o777
  if ((mode & ~PRIVATE_DIR_MODE) !== 0) {
    chmodSync(dir, PRIVATE_DIR_MODE)
    notice(`DATA_DIR ${dir} was open to other users (mode ${octal(mode)}): tightened it to ${octal(PRIVATE_DIR_MODE)}`)
  }
}

/**
 * Takes group and other permissions off everything under dir. PGlite sets some modes itself,
 * whatever the umask: the files of the database it unpacks on first open are 0666, and the relation
 * cache files it rewrites at each open 0644. Run after it opens and after it closes. Symbolic links
 * are left alone. Answers how many entries it changed.
 */
export function tightenTree(dir: string): number {
  let changed = 0
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isSymbolicLink()) continue
    const path = join(entry.parentPath, entry.name)
    let mode: number
    try {
      mode = lstatSync(path).mode & 0o7777
    } catch {
      continue // removed meanwhile
    }
    if ((mode & PRIVATE_UMASK) === 0) continue
    chmodSync(path, mode & ~PRIVATE_UMASK)
    changed += 1
  }
  return changed
}

const octal = (mode: number) => `0${mode.toString(8)}`
