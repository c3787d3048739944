/**
 * A defect a review found (now fixed; this test keeps it fixed), as the review described it:
 *
 * Review of issue 14 (platform client). Two waits the client does not bound:
 *
 * 1. The 429 budget counts only the sleeps between attempts, never the attempts themselves. A
 *    platform (or anything in front of it) that answers 429 slowly with `X-Rate-Limit-Time-Reset-Ms:
 *    0` gets `budget / 50 ms` attempts, each up to the request timeout: with the defaults (30 s budget,
 *    15 s timeout) one call can take 600 x 15 s = 2.5 hours, and the portal's "5 s" instrument listing
 *    100 x 15 s = 25 minutes, while docs/bigcommerce.md says "up to 30 seconds per call" and
 *    docs/contract.md "a 429 asking to wait past 5 s ... 503".
 * 2. Answers are read whole into memory (`response.body.text()`) with no size limit: a 2xx of
 *    hundreds of megabytes is buffered and JSON-parsed in the renewal worker.
 */
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { createPlatformClient } from '../../../src/modules/platform/index.ts'

const access = { storeHash: 'boundsrev', accessToken: 'store-token-SECRET-0001' }

describe('the platform client bounds every wait', () => {
  let server: Server
  let origin: string
  let attempts = 0
  let bytesSent = 0

  before(async () => {
    server = createServer((req, res) => {
      if (req.url?.includes('/slow429')) {
        attempts += 1
        // A 429 that takes 300 ms to arrive and says the window is already open again.
        // wall clock: a platform that answers slowly over a real socket; the client's own bound on real waits is what is tested.
        setTimeout(() => {
          res.writeHead(429, { 'content-type': 'application/json', 'x-rate-limit-time-reset-ms': '0' })
          res.end('{"status":429,"title":"Too many requests"}')
        }, 300)
        return
      }
      // A 200 whose body never ends until 64 MB were sent or the client stopped reading.
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{"data":"')
      const chunk = Buffer.alloc(1 << 20, 0x61)
      const pump = () => {
        while (bytesSent < 64 * (1 << 20)) {
          bytesSent += chunk.length
          if (!res.write(chunk)) {
            res.once('drain', pump)
            return
          }
        }
        res.end('"}')
      }
      res.on('error', () => {})
      pump()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  after(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  test('a 429 budget of 500 ms is not spent as 11 attempts of 350 ms each', async () => {
    const client = createPlatformClient({ apiUrl: origin, paymentsUrl: origin, timeoutMs: 2_000, rateLimitBudgetMs: 500 })
    const started = Date.now()
    const reply = await client.call(access, { method: 'GET', path: '/v3/slow429' })
    const elapsed = Date.now() - started
    await client.close()
    assert.ok(reply.sent && reply.answer.statusCode === 429)
    // The attempts that fit the budget and one more whose answer ends it: counted by the platform, so a
    // machine slowed by other work can only lower the count (the fault being fixed made 11).
    assert.ok(attempts <= 3, `${attempts} attempts for a 500 ms budget (the call took ${elapsed} ms)`)
    // One request's timeout on top of the budget is the most a caller could expect to wait.
    assert.ok(elapsed <= 500 + 2_000, `the call took ${elapsed} ms over ${attempts} attempts for a 500 ms budget`)
  })

  test('an answer of 64 MB is not read whole into memory', async () => {
    const client = createPlatformClient({ apiUrl: origin, paymentsUrl: origin, timeoutMs: 10_000 })
    const reply = await client.call(access, { method: 'GET', path: '/v3/orders/1/transactions' })
    await client.close()
    assert.ok(bytesSent <= 16 * (1 << 20), `the client read ${bytesSent >> 20} MB of one answer (sent: ${reply.sent}${reply.sent ? `, status ${reply.answer.statusCode}` : ''})`)
  })
})
