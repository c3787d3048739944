import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { READY_MARKER, type ReadyMessage } from './child-protocol.ts'

export interface ChildServer {
  /** Full URL of the path the child announced. */
  url: string
  details: Record<string, string | number>
  /** CPU seconds (user + system) the child has used so far; undefined where /proc is not available. */
  cpuSeconds(): number | undefined
  stop(): Promise<void>
}

/**
 * Starts a bench child on the pinned Node (process.execPath), so the server never shares an event
 * loop with the load generator. nodeArgs go to that Node (e.g. --cpu-prof). Whatever else the child prints is forwarded to stderr, labelled.
 */
export async function startChild(label: string, entry: URL, env: Record<string, string | undefined>, nodeArgs: string[] = [], timeoutMs = Number(process.env.BENCH_START_TIMEOUT_MS ?? 600_000)): Promise<ChildServer> {
  const child = spawn(process.execPath, [...nodeArgs, entry.pathname], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  forward(label, child)
  const ready = await waitForReady(label, child, timeoutMs)
  return {
    url: `http://127.0.0.1:${ready.port}${ready.path}`,
    details: ready.details ?? {},
    cpuSeconds: () => cpuSecondsOf(child.pid),
    stop: () => stopChild(child),
  }
}

function forward(label: string, child: ChildProcess): void {
  createInterface({ input: child.stderr! }).on('line', (line) => process.stderr.write(`[${label}] ${line}\n`))
}

function waitForReady(label: string, child: ChildProcess, timeoutMs: number): Promise<ReadyMessage> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${label} did not start within ${timeoutMs} ms`))
    }, timeoutMs)
    const onExit = (code: number | null) => {
      clearTimeout(timer)
      reject(new Error(`${label} exited with ${code} before it was ready`))
    }
    child.once('exit', onExit)
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith(READY_MARKER)) return void process.stderr.write(`[${label}] ${line}\n`)
      clearTimeout(timer)
      child.off('exit', onExit)
      resolve(JSON.parse(line.slice(READY_MARKER.length)) as ReadyMessage)
    })
  })
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  const force = setTimeout(() => child.kill('SIGKILL'), 15_000)
  await exited
  clearTimeout(force)
}

// Linux reports utime and stime in clock ticks, 100 per second on every common configuration.
const CLOCK_TICKS_PER_SECOND = 100

function cpuSecondsOf(pid: number | undefined): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name may hold spaces, so count fields from the closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND
  } catch {
    return undefined
  }
}
