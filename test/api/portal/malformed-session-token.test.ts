/**
 * A portal Bearer token whose signature part holds a Latin-1 character (HTTP lets a client send bytes
 * 0x80-0xFF in a header) is the contract's 401 invalid_token, never a 500.
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildTestApp, type TestApp } from '../../helpers/test-app.ts'

let t: TestApp
before(async () => {
  t = await buildTestApp()
  await t.app.listen({ port: 0, host: '127.0.0.1' })
})
after(() => t.close())

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
const token = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub: 'x' })}.${'\u00e9'.repeat(43)}`

test('inject: a portal token with a non-ASCII signature is 401, not 500', async () => {
  const response = await t.app.inject({ method: 'GET', url: '/api/v1/portal/me', headers: { authorization: `Bearer ${token}` } })
  assert.equal(response.statusCode, 401, response.body)
})

test('real HTTP: raw 0xE9 bytes in the Authorization header are 401, not 500', async () => {
  const { port } = t.app.server.address() as AddressInfo
  const status = await new Promise<number>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/api/v1/portal/me', method: 'GET', headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume()
      resolve(res.statusCode!)
    })
    req.on('error', reject)
    req.end()
  })
  assert.equal(status, 401)
})
