import { setTimeout as sleep } from 'node:timers/promises'
import type { WebhookDispatcher } from './dispatcher.ts'

export interface DispatchLoop {
  /** Finishes the pass in hand, then stops. */
  stop(): Promise<void>
}

/**
 * Runs the dispatcher continuously in a worker process: fan-out and delivery passes back to back
 * while there is work, a short sleep when there is none. It runs beside the job runner rather than
 * as one of its jobs because the runner executes a batch's jobs one after another, and a delivery
 * loop held for seconds would delay renewals; the guarantees (SKIP LOCKED claims under a lease,
 * commit before any HTTP call) are the dispatcher's own either way.
 */
export function startDispatchLoop({ dispatcher, log, lanes = 2, idleMs = 20 }: {
  dispatcher: WebhookDispatcher
  log: { error(object: object, message: string): void }
  /** Delivery lanes; fan-out runs in one more. */
  lanes?: number
  idleMs?: number
}): DispatchLoop {
  let running = true
  // Fan-out has a lane of its own: a pass writing thousands of delivery rows would otherwise hold
  // back the deliveries of the lane that ran it.
  const loop = (pass: () => Promise<number>) => async () => {
    while (running) {
      try {
        if ((await pass()) === 0) await sleep(idleMs)
      } catch (error) {
        log.error({ err: error }, 'webhook dispatch pass failed; retrying in a second')
        await sleep(1_000)
      }
    }
  }
  const done = Promise.all([loop(() => dispatcher.fanOut())(), ...Array.from({ length: lanes }, loop(() => dispatcher.deliverDue()))])
  return {
    async stop() {
      running = false
      await done
    },
  }
}
