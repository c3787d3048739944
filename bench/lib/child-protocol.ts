import type { Server } from 'node:net'

/** The line a bench child prints once it listens; the parent reads the rest of the line as JSON. */
export const READY_MARKER = 'BENCH_READY '

export interface ReadyMessage {
  port: number
  /** Path the load goes to, with its query. */
  path: string
  details?: Record<string, string | number>
}

export function announceReady(server: Server, path: string, details?: Record<string, string | number>): void {
  const address = server.address()
  if (!address || typeof address === 'string') throw new Error('the bench child is not listening on TCP')
  const message: ReadyMessage = { port: address.port, path, ...(details ? { details } : {}) }
  process.stdout.write(`${READY_MARKER}${JSON.stringify(message)}\n`)
}

/** Runs close on SIGTERM or SIGINT, then exits; a close that hangs must not keep the bench waiting. */
export function closeOnSignal(close: () => Promise<void>): void {
  const stop = () => {
    setTimeout(() => process.exit(1), 10_000).unref()
    close().then(() => process.exit(0), (error) => {
      process.stderr.write(`bench child failed to close: ${String(error)}\n`)
      process.exit(1)
    })
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
}
