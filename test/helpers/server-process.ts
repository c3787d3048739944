import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'

const SERVER_ENTRY = new URL('../../src/server.ts', import.meta.url).pathname

/**
 * Node flags for the short-lived service and CLI processes the suites start (some sixty per run). V8
 * compiles the embedded database's WebAssembly in two tiers: Liftoff at once, then TurboFan in the
 * background, and a process waits for that second compile before it exits. Liftoff alone changes no
 * behaviour (the same code, compiled plainly) and halves what a start costs here: server-process suite
 * 61 -> 34 s of CPU, the SIGKILL suite's workers no slower (70 -> 67 s). The test processes themselves
 * keep both tiers: the shared lanes, which run PGlite for minutes, were 12% slower on Liftoff alone.
 * startup-safety's fresh start runs without it, exactly as `npm start` does.
 */
export const NODE_FLAGS = ['--liftoff-only']

export interface RunningServer {
  child: ChildProcess
  origin: string
  /** Everything the process printed so far. */
  output(): string
  /** Milliseconds from spawn until the start banner appeared. */
  startMs: number
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/**
 * Starts `src/server.ts` as `npm start` would, on a free port, and waits for its banner. `nodeFlags`:
 * NODE_FLAGS by default; [] starts it exactly as `npm start` does.
 */
export async function startServer(env: Record<string, string>, timeoutMs = 60_000, nodeFlags: readonly string[] = NODE_FLAGS): Promise<RunningServer> {
  const { DATABASE_URL: _ignored, ...inherited } = process.env
  const started = performance.now()
  const child = spawn(process.execPath, [...nodeFlags, SERVER_ENTRY], {
    env: { ...inherited, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let text = ''
  child.stdout!.on('data', (chunk) => (text += chunk))
  child.stderr!.on('data', (chunk) => (text += chunk))
  const origin = await new Promise<string>((resolve, reject) => {
    // A server that never says it is ready is killed: left running, it would keep the test process alive.
    // wall clock: a deadline for a child process to print its banner.
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`server did not start in ${timeoutMs} ms:\n${text}`))
    }, timeoutMs)
    const check = () => {
      const match = /API base URL\s+(http:\/\/[^\s]+)\/api\/v1/.exec(text)
      if (match) {
        clearTimeout(timer)
        resolve(match[1]!)
      }
    }
    child.stdout!.on('data', check)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`server exited with ${code} before starting:\n${text}`))
    })
  })
  const startMs = performance.now() - started
  return {
    child,
    origin,
    startMs,
    output: () => text,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode !== null) return child.exitCode
      const exited = once(child, 'exit')
      child.kill(signal)
      const [code] = await exited
      return code as number | null
    },
  }
}

/**
 * Runs `src/server.ts` expecting it to fail at start; resolves with its exit code and output. One
 * that starts after all (prints its banner) or is still running after timeoutMs is killed, and the
 * promise rejects.
 */
export async function startServerExpectingFailure(env: Record<string, string>, timeoutMs = 30_000): Promise<{ code: number | null; output: string }> {
  const { DATABASE_URL: _ignored, ...inherited } = process.env
  const child = spawn(process.execPath, [...NODE_FLAGS, SERVER_ENTRY], {
    env: { ...inherited, PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = once(child, 'exit')
  let unexpected: string | undefined
  const kill = (why: string) => {
    unexpected ??= why
    child.kill('SIGKILL')
  }
  // wall clock: a deadline for a child process expected to exit.
  const timer = setTimeout(() => kill(`still running after ${timeoutMs} ms`), timeoutMs)
  child.stdout!.on('data', () => {
    if (/API base URL/.test(output)) kill('it started')
  })
  const [code] = await exited
  clearTimeout(timer)
  if (unexpected) throw new Error(`the server was expected to fail at start, but ${unexpected}:\n${output}`)
  return { code: code as number | null, output }
}
