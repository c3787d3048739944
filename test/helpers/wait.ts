// wall clock: waitUntil's poll interval (below).
import { setTimeout as sleep } from 'node:timers/promises'

/**
 * Polls `probe` until it answers something truthy, which it then answers; throws naming `what` after
 * `timeoutMs`. For what happens outside the test's control flow (a request reaching a real HTTP server,
 * a lease keeper's timer firing, another process): time inside the service is never waited out, the
 * test moves the injected clock instead (test/unit/test-suite-rules.test.ts).
 */
export async function waitUntil<T>(what: string, probe: () => T | Promise<T>, { timeoutMs = 10_000, everyMs = 5 }: { timeoutMs?: number; everyMs?: number } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value as NonNullable<T>
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    // wall clock: a poll interval while something outside this test's control flow gets there (see above).
    await sleep(everyMs)
  }
}
