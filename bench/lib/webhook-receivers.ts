import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { cpuSecondsOf } from './cpu.ts'

/** What the receivers recorded: every arrival's webhook-id and receipt time (epoch ms, the receivers' clock). */
export interface ReceiverLog {
  ids: string[]
  at: number[]
  /** Arrivals with a webhook-signature header, and of the sample verified with standardwebhooks how many passed or failed. */
  signed: number
  verified: number
  failed: number
}

export type ParentMessage =
  | { type: 'secrets'; secrets: string[] }
  | { type: 'reset' }
  | { type: 'now' }
  | { type: 'await'; unique: number }
  | { type: 'count' }
  | { type: 'collect' }
  | { type: 'close' }

export type ChildMessage =
  | { type: 'ready'; ports: number[] }
  | { type: 'ok' }
  | { type: 'now'; at: number }
  | { type: 'reached'; at: number }
  | { type: 'count'; unique: number; total: number }
  | { type: 'collected'; logs: ReceiverLog[] }

export interface Receivers {
  urls: string[]
  /** Each receiver verifies (a sample of) signed arrivals against its endpoint's secret. */
  setSecrets(secrets: string[]): Promise<void>
  /** Forgets every arrival. */
  reset(): Promise<void>
  /** Resolves, in this process's clock (epoch ms), with the receipt time of the arrival that made `unique` distinct (id, receiver) pairs. */
  awaitUnique(unique: number, timeoutMs: number): Promise<number>
  count(): Promise<{ unique: number; total: number }>
  /** The logs, with receipt times moved to this process's clock. */
  collect(): Promise<ReceiverLog[]>
  /** The receivers' clock minus this one (ms), from the tightest of several round trips. */
  offsetMs: number
  cpuSeconds(): number | undefined
  close(): Promise<void>
}

export const now = (): number => performance.timeOrigin + performance.now()

/** Starts the receivers in a child on the pinned Node (process.execPath). */
export async function startReceivers(count = 2): Promise<Receivers> {
  const child = fork(new URL('./webhook-receiver-child.ts', import.meta.url).pathname, [], {
    execPath: process.execPath,
    env: { ...process.env, BENCH_RECEIVERS: String(count) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const waiting: ((message: ChildMessage) => void)[] = []
  let ready: ((ports: number[]) => void) | undefined
  const readyPorts = new Promise<number[]>((resolve) => (ready = resolve))
  child.on('message', (message: ChildMessage) => {
    if (message.type === 'ready') return ready!(message.ports)
    waiting.shift()?.(message)
  })
  const exited = once(child, 'exit')
  const ports = await Promise.race([readyPorts, exited.then(() => Promise.reject(new Error('the webhook receivers exited before they were ready')))])

  // One question at a time: answers come back in order.
  let chain: Promise<unknown> = Promise.resolve()
  const ask = <T extends ChildMessage['type']>(message: ParentMessage, expect: T): Promise<Extract<ChildMessage, { type: T }>> => {
    const asked = chain.then(
      () =>
        new Promise<Extract<ChildMessage, { type: T }>>((resolve, reject) => {
          waiting.push((answer) => (answer.type === expect ? resolve(answer as Extract<ChildMessage, { type: T }>) : reject(new Error(`receivers answered ${answer.type}, expected ${expect}`))))
          child.send(message)
        }),
    )
    chain = asked.catch(() => undefined)
    return asked
  }

  let offsetMs = 0
  let bestRtt = Infinity
  for (let sample = 0; sample < 30; sample++) {
    const sent = now()
    const { at } = await ask({ type: 'now' }, 'now')
    const back = now()
    if (back - sent < bestRtt) {
      bestRtt = back - sent
      offsetMs = at - (sent + back) / 2
    }
  }

  return {
    urls: ports.map((port) => `http://127.0.0.1:${port}/webhooks`),
    offsetMs,
    setSecrets: async (secrets) => void (await ask({ type: 'secrets', secrets }, 'ok')),
    reset: async () => void (await ask({ type: 'reset' }, 'ok')),
    awaitUnique: async (unique, timeoutMs) => {
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`receivers did not get ${unique} distinct deliveries within ${timeoutMs} ms`)), timeoutMs)
      })
      try {
        const { at } = await Promise.race([ask({ type: 'await', unique }, 'reached'), timeout])
        return at - offsetMs
      } finally {
        clearTimeout(timer)
      }
    },
    count: async () => {
      const { unique, total } = await ask({ type: 'count' }, 'count')
      return { unique, total }
    },
    collect: async () => {
      const { logs } = await ask({ type: 'collect' }, 'collected')
      return logs.map((log) => ({ ...log, at: log.at.map((at) => at - offsetMs) }))
    },
    cpuSeconds: () => cpuSecondsOf(child.pid),
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.send({ type: 'close' } satisfies ParentMessage)
      const force = setTimeout(() => child.kill('SIGKILL'), 5_000)
      await exited
      clearTimeout(force)
    },
  }
}
