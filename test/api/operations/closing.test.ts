// Stopping (docs/contract.md, Running it): what a request that reaches the app while it closes is
// answered. The whole stop of the process, in-flight requests included, is test/process/graceful-shutdown.test.ts.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { request } from 'undici'
import { assertProblem } from '../../helpers/problem.ts'
import { buildTestApp } from '../../helpers/test-app.ts'

test('a request reaching the app once it is closing is 503 service_unavailable as problem+json, with Connection: close', async () => {
  const t = await buildTestApp()
  await t.close()
  // The app's own server no longer listens; hand it a request the way its server would, as one still
  // arriving on an open connection would reach it.
  const server = createServer((req, res) => t.app.routing(req, res))
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  try {
    const { port } = server.address() as AddressInfo
    for (const path of ['/readyz', '/api/v1/plans?store_hash=any']) {
      const response = await request(`http://127.0.0.1:${port}${path}`)
      const body = await response.body.text()
      const answer = { statusCode: response.statusCode, headers: response.headers, body, json: JSON.parse(body) }
      assertProblem(answer, 503, 'service_unavailable', { what: path })
      assert.equal(response.headers.connection, 'close', path)
    }
  } finally {
    server.closeAllConnections()
    server.close()
  }
})
