import type { Db } from '../../db/database.ts'
import type { BackgroundLoop } from '../module.ts'
import { nextBudgetReset } from '../platform/index.ts'
import type { BillingLog } from './renewal-context.ts'
import type { RenewalEngine } from './renewal-engine.ts'

/**
 * The worker's renewals (CONTRACT section 19): a pipeline, not batches. It keeps up to `concurrency`
 * renewals in hand, claims more whenever a quarter of that has ended, and settles each as its gateway
 * answers, so a slow store's calls never hold back another store's renewals.
 *   - Claims go round-robin across stores (the engine's fair claim), each store within its platform
 *     budget: a store out of budget is not claimed at all, and holds no slot and no lease.
 *   - No store has more than `perStore` renewals in hand here, so one slow or failing store can
 *     fill at most that share of the worker.
 *   - With nothing to claim it looks again after `idleMs`, or as soon as a store's budget window
 *     refills, whichever comes first.
 */

export interface RenewalLoopOptions {
  db: Db
  engine: Pick<RenewalEngine, 'claimFairly' | 'work'>
  concurrency: number
  /** Renewals of one store in hand at once; a quarter of `concurrency` when not given. */
  perStore?: number
  idleMs?: number
  log?: BillingLog
}

const DEFAULT_IDLE_MS = 1_000
// Past a window's reset, so the first claim after it finds the window refilled.
const AFTER_RESET_MS = 20
// However many stores' windows refill meanwhile, an idle loop looks at most this often.
const MIN_WAKE_MS = 250

export function createRenewalLoop(options: RenewalLoopOptions): BackgroundLoop & { step(): Promise<number> } {
  const { engine, concurrency } = options
  const perStore = Math.max(1, options.perStore ?? Math.ceil(concurrency / 4))
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS
  const inHand = new Map<string, number>()
  let total = 0
  let cursor: string | undefined
  const working = new Set<Promise<unknown>>()

  /** Claims what there is room for and starts it; answers how many renewals it claimed. */
  async function step(): Promise<number> {
    const room = concurrency - total
    if (room <= 0) return 0
    const full = [...inHand].filter(([, n]) => n >= perStore).map(([storeId]) => storeId)
    const roomOf = new Map([...inHand].filter(([, n]) => n < perStore).map(([storeId, n]) => [storeId, perStore - n]))
    const { token, attempts, counts } = await engine.claimFairly(room, { after: cursor, exceptStores: full, perStoreCap: perStore, roomOf })
    cursor = counts.lastStoreId ?? cursor
    for (const { charge } of attempts) inHand.set(charge.store_id, (inHand.get(charge.store_id) ?? 0) + 1)
    total += attempts.length
    // Each renewal leaves the count once: when it ends, or when its work ends without saying so (it
    // failed before reaching it, the database down): a lost count would shrink the loop for good.
    const open = new Map(attempts.map(({ charge }) => [charge.id, charge.store_id]))
    const release = (ids: Iterable<string>) => {
      let freed = 0
      for (const id of ids) {
        const storeId = open.get(id)
        if (storeId === undefined) continue
        open.delete(id)
        const left = (inHand.get(storeId) ?? 1) - 1
        if (left > 0) inHand.set(storeId, left)
        else inHand.delete(storeId)
        total--
        freed++
      }
      // Only room actually freed wakes the claimer: a wake for nothing would claim again at once, and on
      // the embedded database (whose queries never leave the microtask queue) spin without end.
      if (freed > 0) ended()
    }
    if (attempts.length === 0) return counts.claimed
    const work = engine
      .work(attempts, token, (charges) => release(charges.map((charge) => charge.id)))
      .catch((error: unknown) => options.log?.error({ err: error }, 'renewals could not be settled; their leases run out and the reconciler finishes them'))
      .finally(() => release([...open.keys()]))
    working.add(work)
    void work.finally(() => working.delete(work))
    return counts.claimed
  }

  let ended: () => void = () => {}

  return {
    name: 'renewals',
    step,
    start() {
      let running = true
      let filling: Promise<void> | undefined
      let again = false
      let timer: NodeJS.Timeout | undefined

      async function fill(): Promise<void> {
        while (running && concurrency - total >= Math.max(1, concurrency / 4)) {
          let claimed = 0
          try {
            claimed = await step()
          } catch (error) {
            options.log?.error({ err: error }, 'renewals could not be claimed')
          }
          if (claimed > 0) continue
          // Nothing to claim: look again in a while, or once a budget refills; an ending renewal wakes it sooner.
          await wakeLater()
          return
        }
      }

      async function wakeLater(): Promise<void> {
        const resetInMs = await nextBudgetReset(options.db).catch(() => undefined)
        const wait = resetInMs === undefined ? idleMs : Math.min(idleMs, Math.max(MIN_WAKE_MS, resetInMs + AFTER_RESET_MS))
        if (running) {
          clearTimeout(timer)
          timer = setTimeout(kick, wait)
        }
      }

      function kick(): void {
        if (!running) return
        if (filling) {
          again = true
          return
        }
        filling = fill().finally(() => {
          filling = undefined
          if (again) {
            again = false
            kick()
          }
        })
      }

      ended = kick
      kick()
      return {
        async stop() {
          running = false
          clearTimeout(timer)
          await filling
          while (working.size > 0) await Promise.all(working)
        },
      }
    },
  }
}
