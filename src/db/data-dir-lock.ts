import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs'
import { join } from 'node:path'

/**
 * PGlite does not lock its directory and two processes writing one would corrupt it, so the service
 * holds a pid file. A lock left by a process that died (SIGKILL, power loss) is taken over: the pid
 * is no longer alive.
 */
export function lockDataDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true })
  const lockPath = join(dir, 'service.lock')
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx')
      writeSync(fd, String(process.pid))
      closeSync(fd)
      return () => rmSync(lockPath, { force: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const holder = Number.parseInt(readSafely(lockPath), 10)
      if (Number.isInteger(holder) && holder !== process.pid && isAlive(holder)) {
        throw new Error(
          `DATA_DIR ${dir} is in use by process ${holder}: the embedded database allows one process. ` +
            'Stop that process, choose another DATA_DIR, or set DATABASE_URL to share a PostgreSQL database.',
        )
      }
      rmSync(lockPath, { force: true })
    }
  }
  throw new Error(`could not lock DATA_DIR ${dir}`)
}

function readSafely(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return ''
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
