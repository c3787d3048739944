import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { FORBIDDEN_ADDRESS_CODE } from '../../../src/modules/webhooks/ssrf-guard.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver.ts'
import { closeTestApp } from '../subscriptions/fixtures.ts'
import { createEndpoint, deliveryOf, drive, endpointAction, endpointsUrl, patchEndpoint, testDispatcher } from './fixtures.ts'
import { assertProblem } from '../../helpers/problem.ts'

/**
 * The SSRF guard (docs/contract.md, Webhook delivery: endpoint URLs): this app runs WITHOUT WEBHOOK_ALLOW_PRIVATE_NETWORKS,
 * as production does. Every address used is an IP literal or localhost, so no DNS is needed.
 */
describe('webhook endpoint addresses without WEBHOOK_ALLOW_PRIVATE_NETWORKS', () => {
  let t: TestApp
  let shop: StoreWithKey
  let live: StoreWithKey
  let receiver: WebhookReceiver

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    live = await createStoreWithKey(t.db, { mode: 'live' })
    receiver = await startWebhookReceiver()
  })
  after(async () => {
    await receiver.close()
    await closeTestApp(t)
  })

  const register = (auth: Record<string, string>, url: string) =>
    call(t.app, { method: 'POST', url: endpointsUrl, headers: auth, payload: { url, event_types: ['subscription.created'] } })

  test('loopback, private, link-local (metadata) and localhost addresses are 400 at /body/url', async () => {
    const refused = [
      'http://127.0.0.1/hooks',
      'http://127.0.0.1:8080/hooks',
      'http://10.0.0.1/',
      'http://192.168.1.10/',
      'http://172.16.5.4/',
      'http://169.254.169.254/latest/meta-data/',
      'http://localhost/',
      'http://LOCALHOST:3000/',
      'http://api.localhost/',
      'http://0.0.0.0/',
      'http://100.64.0.1/',
      'http://[::1]/',
      'http://[fd00:ec2::254]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[fe80::1]/',
    ]
    for (const url of refused) {
      const response = await register(shop.auth, url)
      assertProblem(response, 400, 'validation_failed', { path: '/body/url' })
      assert.ok(response.json.errors[0].message.length > 0)
    }
    const listed = await call(t.app, { method: 'GET', url: `${endpointsUrl}?limit=100`, headers: shop.auth })
    assert.deepEqual(listed.json.data, [], 'nothing was registered')
  })

  test('a public address is accepted in test mode, over http as well as https', async () => {
    assert.equal((await register(shop.auth, 'http://93.184.216.34/hooks')).statusCode, 201)
    assert.equal((await register(shop.auth, 'https://93.184.216.34/hooks')).statusCode, 201)
  })

  test('a live store needs https, even for a public address; https to it is accepted', async () => {
    const plain = await register(live.auth, 'http://93.184.216.34/hooks')
    assertProblem(plain, 400, 'validation_failed', { path: '/body/url' })
    assert.match(plain.json.errors[0].message, /https/)
    const secure = await register(live.auth, 'https://93.184.216.34/hooks')
    assert.equal(secure.statusCode, 201, secure.body)
    // Moving it back to http, or to a private address, is refused the same way.
    assertProblem(await patchEndpoint(t.app, live.auth, secure.json.id, { url: 'http://93.184.216.34/hooks' }), 400, 'validation_failed', { path: '/body/url' })
    assertProblem(await patchEndpoint(t.app, live.auth, secure.json.id, { url: 'https://10.1.2.3/hooks' }), 400, 'validation_failed', { path: '/body/url' })
    // Credentials in the URL are refused too.
    assertProblem(await register(live.auth, 'https://user:pass@93.184.216.34/hooks'), 400, 'validation_failed', { path: '/body/url' })
  })

  test('PATCH to a private address is refused and changes nothing', async () => {
    const endpoint = await createEndpoint(t.app, shop.auth, { url: 'https://93.184.216.34/a', event_types: ['subscription.created'] })
    assertProblem(await patchEndpoint(t.app, shop.auth, endpoint.id, { url: 'http://169.254.169.254/' }), 400, 'validation_failed', { path: '/body/url' })
    const read = await call(t.app, { method: 'GET', url: `${endpointsUrl}/${endpoint.id}`, headers: shop.auth })
    assert.equal(read.json.url, 'https://93.184.216.34/a')
  })

  test('an address that is private at connection time is refused by the agent: nothing reaches it', async () => {
    // Registered while public; the row now points at loopback (as DNS rebinding would make it).
    const own = await createStoreWithKey(t.db)
    const literal = await createEndpoint(t.app, own.auth, { url: 'http://93.184.216.34/x', event_types: ['webhook.test'] })
    const named = await createEndpoint(t.app, own.auth, { url: 'http://93.184.216.35/x', event_types: ['webhook.test'] })
    await t.db.updateTable('webhook_subscriptions').set({ url: receiver.url }).where('id', '=', literal.id).execute()
    await t.db.updateTable('webhook_subscriptions').set({ url: `http://localhost:${receiver.port}/hooks` }).where('id', '=', named.id).execute()
    const pings = [(await endpointAction(t.app, own.auth, literal.id, 'test')).json, (await endpointAction(t.app, own.auth, named.id, 'test')).json]

    const dispatcher = testDispatcher(t.db, { allowPrivateNetworks: false })
    try {
      await drive(dispatcher)
    } finally {
      await dispatcher.close()
    }
    assert.equal(receiver.requests.length, 0, 'a request reached the loopback receiver')
    for (const [endpoint, ping] of [[literal, pings[0]], [named, pings[1]]] as const) {
      const delivery = await deliveryOf(t.app, own.auth, endpoint.id, ping.event_id)
      assert.equal(delivery.attempts, 1)
      assert.equal(delivery.attempt_log[0].status_code, null)
      assert.match(delivery.attempt_log[0].error, new RegExp(`${FORBIDDEN_ADDRESS_CODE}|refused`))
      assert.match(delivery.attempt_log[0].error, /loopback/)
    }

    // The same dispatch with the flag set (as in tests and local use) does reach it.
    const allowed = testDispatcher(t.db, { allowPrivateNetworks: true })
    try {
      await endpointAction(t.app, own.auth, literal.id, 'redeliver', { event_id: pings[0].event_id })
      await drive(allowed, { until: () => receiver.requests.length >= 1 })
    } finally {
      await allowed.close()
    }
    assert.equal(receiver.requests[0]!.headers['webhook-id'], pings[0].event_id)
  })
})
