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
  // A delivery lane claims its next batch as soon as the current one's last round of calls is about to
  // begin, so its calls in flight (bounded by the lane) do not stop while a batch's last answers arrive,
  // are recorded, and the next batch is claimed. At most two batches are in hand per lane.
  const deliveryLane = async () => {
    const lane = dispatcher.lane()
    let previous: Promise<void> = Promise.resolve()
    while (running) {
      try {
        const batch = await dispatcher.startDelivery(lane)
        if (batch.count === 0) {
          await previous
          await sleep(idleMs)
          continue
        }
        await batch.started
        await previous
        previous = batch.done
      } catch (error) {
        log.error({ err: error }, 'webhook dispatch pass failed; retrying in a second')
        await sleep(1_000)
      }
    }
    await previous
  }
  const done = Promise.all([loop(() => dispatcher.fanOut())(), ...Array.from({ length: lanes }, deliveryLane)])
  return {
    async stop() {
      running = false
      await done
    },
  }
}
