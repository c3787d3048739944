import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Nobody but the service's own user may read the embedded database, its secrets or its lock. */
const PRIVATE_UMASK = 0o077
const PRIVATE_DIR_MODE = 0o700
const STICKY = 0o1000

/** What the service itself keeps in DATA_DIR: the embedded database, its lock and generated secrets. */
export const SERVICE_ENTRIES = new Set(['pglite', 'service.lock', 'portal-session-secret', 'platform-token-key', 'demo-admin-key.txt'])

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
  const stats = statSync(dir)
  const mode = stats.mode & 0o7777
  if ((mode & ~PRIVATE_DIR_MODE) !== 0) {
    // Only a directory of the service's own is tightened: a shared one (/tmp, a home directory, the
    // working tree) would lose its permissions for everyone else's files.
    const foreign = readdirSync(dir).filter((name) => !SERVICE_ENTRIES.has(name))
    const owner = process.getuid?.()
    if ((mode & STICKY) !== 0 || (owner !== undefined && stats.uid !== owner) || foreign.length > 0) {
      throw new Error(
        `DATA_DIR ${dir} is open to other users (mode ${octal(mode)}) and is not the service's own ` +
          `(${foreign.length > 0 ? `it holds ${foreign.slice(0, 3).join(', ')}${foreign.length > 3 ? ', ...' : ''}` : (mode & STICKY) !== 0 ? 'a shared directory' : 'another user owns it'}): ` +
          'point DATA_DIR at a directory of its own, or make this one 0700',
      )
    }
    chmodSync(dir, PRIVATE_DIR_MODE)
    notice(`DATA_DIR ${dir} was open to other users (mode ${octal(mode)}): tightened it to ${octal(PRIVATE_DIR_MODE)}`)
  }
}

/**
 * Takes group and other permissions off what the service keeps in dir (SERVICE_ENTRIES, the
 * database's folder with everything under it), and nothing else. PGlite sets some modes itself,
 * whatever the umask: the files of the database it unpacks on first open are 0666, and the relation
 * cache files it rewrites at each open 0644. Run after it opens and after it closes. Symbolic links
 * are left alone. Answers how many entries it changed.
 */
export function tightenTree(dir: string): number {
  let changed = 0
  const tighten = (path: string) => {
    let mode: number
    try {
      mode = lstatSync(path).mode & 0o7777
    } catch {
      return // absent, or removed meanwhile
    }
    if ((mode & PRIVATE_UMASK) === 0) return
    chmodSync(path, mode & ~PRIVATE_UMASK)
    changed += 1
  }
  for (const name of SERVICE_ENTRIES) {
    const path = join(dir, name)
    let isDirectory = false
    try {
      const stats = lstatSync(path)
      if (stats.isSymbolicLink()) continue
      isDirectory = stats.isDirectory()
    } catch {
      continue
    }
    tighten(path)
    if (!isDirectory) continue
    for (const entry of readdirSync(path, { withFileTypes: true, recursive: true })) {
      if (!entry.isSymbolicLink()) tighten(join(entry.parentPath, entry.name))
    }
  }
  return changed
}

const octal = (mode: number) => `0${mode.toString(8)}`
