import assert from 'node:assert/strict'
import { createServer, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { connectDatabase } from '../../../src/db/connect.ts'
import { assertProblem } from '../../helpers/problem.ts'
import { buildTestApp, call, type TestApp } from '../../helpers/test-app.ts'

/**
 * While its PostgreSQL cannot be reached, the service fails fast (docs/contract.md, section 18): every
 * request that needs the database is 503 `service_unavailable` problem+json, never a 500 or a hang;
 * /readyz says not ready, /healthz still answers. Three servers that are not there in three ways, none
 * needing PostgreSQL: nothing listening (connection refused), a server that refuses the session
 * (57P03, as while it starts up, recovers or shuts down), and one that never answers (the connect
 * timeout). test/process/postgres-restart.test.ts restarts a real server under running processes.
 */

const ADMIN = { authorization: 'Bearer sk_test_database_unavailable_0123456789abcdef' }
const CONNECT_TIMEOUT_MS = 300

/** A TCP server on 127.0.0.1 that answers each connection with `onConnection`; its URL and its closer. */
async function fakeServer(onConnection: (socket: Socket) => void): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>()
  const server: Server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    onConnection(socket)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `postgres://postgres@127.0.0.1:${port}/billing`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

/** A FATAL ErrorResponse of the PostgreSQL protocol (v3) with this SQLSTATE and message. */
function fatal(code: string, message: string): Buffer {
  const fields = Buffer.concat([
    ...[['S', 'FATAL'], ['V', 'FATAL'], ['C', code], ['M', message]].map(([type, value]) => Buffer.from(`${type}${value}\0`, 'utf8')),
    Buffer.from([0]),
  ])
  const header = Buffer.alloc(5)
  header.write('E', 0, 'ascii')
  header.writeInt32BE(fields.length + 4, 1)
  return Buffer.concat([header, fields])
}

const ways = {
  'nothing listens (connection refused)': async () => {
    const closed = await fakeServer(() => {})
    await closed.close()
    return { url: closed.url, close: async () => {} }
  },
  'the server refuses the session (57P03 cannot_connect_now)': () =>
    fakeServer((socket) => socket.once('data', () => socket.end(fatal('57P03', 'the database system is starting up')))),
  'the server never answers (connect timeout)': () => fakeServer(() => {}),
}

for (const [way, serve] of Object.entries(ways)) {
  describe(`the database cannot be reached: ${way}`, () => {
    let t: TestApp
    let server: { url: string; close(): Promise<void> }

    before(async () => {
      server = await serve()
      const database = await connectDatabase({ databaseUrl: server.url, poolSize: 2, connectTimeoutMs: CONNECT_TIMEOUT_MS, onIdleConnectionError: () => {} })
      t = await buildTestApp({ database })
    })
    after(async () => {
      await t.close()
      await t.database.close()
      await server.close()
    })

    test('an API request is 503 service_unavailable problem+json, at once', async () => {
      for (const request of [
        { method: 'GET' as const, url: '/api/v1/admin/subscriptions', headers: ADMIN },
        { method: 'POST' as const, url: '/api/v1/admin/products', headers: { ...ADMIN, 'idempotency-key': 'k-1' }, payload: { platform_product_id: '1', name: 'Beans' } },
        { method: 'GET' as const, url: '/api/v1/storefront/plans?store_hash=shop&platform_product_id=1' },
      ]) {
        const started = performance.now()
        const response = await call(t.app, request)
        const ms = performance.now() - started
        assertProblem(response, 503, 'service_unavailable', { what: `${request.method} ${request.url}` })
        assert.doesNotMatch(response.body, /ECONNREFUSED|57P03|127\.0\.0\.1|timeout exceeded/, 'nothing of the connection is shown')
        assert.ok(ms < CONNECT_TIMEOUT_MS + 2_000, `answered in ${Math.round(ms)} ms`)
      }
    })

    test('/readyz is 503, /healthz still 200', async () => {
      const ready = await call(t.app, { method: 'GET', url: '/readyz' })
      assert.equal(ready.statusCode, 503)
      assert.deepEqual(ready.json, { status: 'unavailable', reason: 'database not reachable' })
      const live = await call(t.app, { method: 'GET', url: '/healthz' })
      assert.equal(live.statusCode, 200)
    })
  })
}
