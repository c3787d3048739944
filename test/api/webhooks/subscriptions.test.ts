import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { newId } from '../../../src/lib/ids.ts'
import { call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { closeTestApp } from '../subscriptions/fixtures.ts'
import { createEndpoint, endpointAction, endpointsUrl, getEndpoint, HOUR, newShop, patchEndpoint, subscribe, webhookTestApp } from './fixtures.ts'
import { assertProblem } from '../../helpers/problem.ts'

/** The admin routes of webhook subscriptions (docs/contract.md, Webhook delivery). */
describe('webhook subscriptions: registration and management', () => {
  let t: TestApp
  let shop: StoreWithKey

  before(async () => {
    t = await webhookTestApp()
    shop = await createStoreWithKey(t.db)
  })
  after(() => closeTestApp(t))

  const url = (n = 1) => `http://127.0.0.1:9/hooks/${n}`
  const list = (query = '', auth = shop.auth) => call(t.app, { method: 'GET', url: `${endpointsUrl}${query}`, headers: auth })

  test('create answers 201 with a whsec_ secret (base64 of at least 24 bytes) that no later answer shows', async () => {
    const before = Date.now()
    const created = await createEndpoint(t.app, shop.auth, { url: url(), event_types: ['subscription.created', 'charge.failed'], description: 'ledger' })
    assert.match(created.id, /^wh_/)
    assert.equal(created.object, 'webhook_subscription')
    assert.equal(created.url, url())
    assert.deepEqual(created.event_types, ['subscription.created', 'charge.failed'])
    assert.equal(created.description, 'ledger')
    assert.equal(created.status, 'enabled')
    assert.equal(created.disabled_reason, null)
    assert.ok(Date.parse(created.created_at) >= before - 1000)

    assert.match(created.secret, /^whsec_[A-Za-z0-9+/]+={0,2}$/)
    const key = Buffer.from(created.secret.slice('whsec_'.length), 'base64')
    assert.ok(key.length >= 24, `the key has ${key.length} bytes`)
    const other = await createEndpoint(t.app, shop.auth, { url: url(2), event_types: ['charge.failed'] })
    assert.notEqual(other.secret, created.secret, 'every endpoint has its own secret')

    const { secret, ...shown } = created
    const read = await getEndpoint(t.app, shop.auth, created.id)
    assert.equal(read.statusCode, 200, read.body)
    assert.deepEqual(read.json, shown)
    const patched = await patchEndpoint(t.app, shop.auth, created.id, { description: 'ledger v2' })
    assert.equal(patched.statusCode, 200, patched.body)
    const listed = await list('?limit=100')
    for (const answer of [read.body, patched.body, listed.body]) {
      assert.ok(!answer.includes('"secret"'), `a secret field was shown: ${answer}`)
      assert.ok(!answer.includes(secret.slice('whsec_'.length)), 'the secret was shown')
      assert.ok(!answer.includes(other.secret.slice('whsec_'.length)), 'the secret was shown')
    }
  })

  test('status disabled at creation is kept, with a reason', async () => {
    const created = await createEndpoint(t.app, shop.auth, { url: url(), event_types: ['charge.failed'], status: 'disabled' })
    assert.equal(created.status, 'disabled')
    assert.equal(typeof created.disabled_reason, 'string')
  })

  test('event_types are checked against the catalogue: an unknown type is 400 pointing at it', async () => {
    const unknown = await call(t.app, { method: 'POST', url: endpointsUrl, headers: shop.auth, payload: { url: url(), event_types: ['subscription.created', 'subscription.exploded'] } })
    assertProblem(unknown, 400, 'validation_failed', { path: '/body/event_types/1' })
    // Every name of the catalogue is accepted, webhook.test included.
    const every = ['subscription.created', 'subscription.activated', 'subscription.charged', 'subscription.past_due', 'subscription.paused', 'subscription.resumed',
      'subscription.cancelled', 'subscription.updated', 'subscription.renewal_upcoming', 'subscription.skipped', 'subscription.unskipped', 'subscription.swapped',
      'subscription.expired', 'subscription.payment_instrument_updated', 'subscription.gifted', 'prepaid.order_created', 'change_request.created',
      'change_request.approved', 'change_request.rejected', 'shipping.address_updated', 'charge.succeeded', 'charge.failed', 'webhook.test']
    const all = await createEndpoint(t.app, shop.auth, { url: url(), event_types: every })
    assert.deepEqual(all.event_types, every)

    assertProblem(await call(t.app, { method: 'POST', url: endpointsUrl, headers: shop.auth, payload: { url: url(), event_types: [] } }), 400, 'validation_failed', { path: '/body/event_types' })
    assertProblem(await call(t.app, { method: 'POST', url: endpointsUrl, headers: shop.auth, payload: { url: url(), event_types: ['charge.failed', 'charge.failed'] } }), 400, 'validation_failed')
    assertProblem(await call(t.app, { method: 'POST', url: endpointsUrl, headers: shop.auth, payload: { url: 'not a url', event_types: ['charge.failed'] } }), 400, 'validation_failed', { path: '/body/url' })
    assertProblem(await call(t.app, { method: 'POST', url: endpointsUrl, headers: shop.auth, payload: { url: 'ftp://127.0.0.1/x', event_types: ['charge.failed'] } }), 400, 'validation_failed', { path: '/body/url' })
    assertProblem(await call(t.app, { method: 'POST', url: endpointsUrl, headers: shop.auth, payload: { event_types: ['charge.failed'] } }), 400, 'validation_failed')
    assertProblem(await call(t.app, { method: 'POST', url: endpointsUrl, headers: shop.auth, payload: { url: url(), event_types: ['charge.failed'], secret: 'whsec_mine' } }), 400, 'validation_failed')
    assertProblem(await patchEndpoint(t.app, shop.auth, all.id, { event_types: ['charge.failed', 'charge.exploded'] }), 400, 'validation_failed', { path: '/body/event_types/1' })
    assert.deepEqual((await getEndpoint(t.app, shop.auth, all.id)).json.event_types, every, 'a refused PATCH changes nothing')
  })

  test('list pages newest first with a cursor, only the calling store\'s endpoints', async () => {
    const own = await createStoreWithKey(t.db)
    const made = []
    for (let i = 0; i < 3; i++) made.push(await createEndpoint(t.app, own.auth, { url: url(i), event_types: ['charge.failed'] }))
    await createEndpoint(t.app, shop.auth, { url: url(9), event_types: ['charge.failed'] })
    const first = await list('?limit=2', own.auth)
    assert.equal(first.statusCode, 200, first.body)
    assert.deepEqual(first.json.data.map((e: any) => e.id), [made[2].id, made[1].id])
    assert.equal(typeof first.json.next_cursor, 'string')
    const second = await list(`?limit=2&cursor=${encodeURIComponent(first.json.next_cursor)}`, own.auth)
    assert.equal(second.statusCode, 200, second.body)
    assert.deepEqual(second.json.data.map((e: any) => e.id), [made[0].id])
    assert.equal(second.json.next_cursor, null)
    assertProblem(await list('?limit=0', own.auth), 400, 'validation_failed')
    assertProblem(await list('?limit=101', own.auth), 400, 'validation_failed')
  })

  test('PATCH changes url, event_types, description and status; enabling clears disabled_reason', async () => {
    const created = await createEndpoint(t.app, shop.auth, { url: url(), event_types: ['charge.failed'], description: 'old' })
    const changed = await patchEndpoint(t.app, shop.auth, created.id, { url: url(42), event_types: ['subscription.paused', 'subscription.resumed'], description: null })
    assert.equal(changed.statusCode, 200, changed.body)
    assert.equal(changed.json.url, url(42))
    assert.deepEqual(changed.json.event_types, ['subscription.paused', 'subscription.resumed'])
    assert.equal(changed.json.description, null)
    assert.ok(changed.json.updated_at >= created.updated_at)
    assert.deepEqual((await getEndpoint(t.app, shop.auth, created.id)).json, changed.json, 'GET shows what PATCH answered')

    const disabled = await patchEndpoint(t.app, shop.auth, created.id, { status: 'disabled' })
    assert.equal(disabled.json.status, 'disabled')
    assert.match(disabled.json.disabled_reason, /admin/)
    const enabled = await patchEndpoint(t.app, shop.auth, created.id, { status: 'enabled' })
    assert.equal(enabled.json.status, 'enabled')
    assert.equal(enabled.json.disabled_reason, null)

    assertProblem(await patchEndpoint(t.app, shop.auth, created.id, {}), 400, 'validation_failed')
    assertProblem(await patchEndpoint(t.app, shop.auth, created.id, { status: 'paused' }), 400, 'validation_failed', { path: '/body/status' })
    assertProblem(await patchEndpoint(t.app, shop.auth, created.id, { url: 'gopher://127.0.0.1/' }), 400, 'validation_failed', { path: '/body/url' })
    assertProblem(await patchEndpoint(t.app, shop.auth, created.id, { id: 'wh_other' }), 400, 'validation_failed')
  })

  test('DELETE answers 204, then the endpoint and everything under it is 404', async () => {
    const created = await createEndpoint(t.app, shop.auth, { url: url(), event_types: ['charge.failed'] })
    const deleted = await call(t.app, { method: 'DELETE', url: `${endpointsUrl}/${created.id}`, headers: shop.auth })
    assert.equal(deleted.statusCode, 204)
    assert.equal(deleted.body, '')
    assertProblem(await getEndpoint(t.app, shop.auth, created.id), 404, 'not_found')
    assertProblem(await call(t.app, { method: 'DELETE', url: `${endpointsUrl}/${created.id}`, headers: shop.auth }), 404, 'not_found')
    assertProblem(await patchEndpoint(t.app, shop.auth, created.id, { description: 'x' }), 404, 'not_found')
    assertProblem(await call(t.app, { method: 'GET', url: `${endpointsUrl}/${created.id}/deliveries`, headers: shop.auth }), 404, 'not_found')
    assertProblem(await endpointAction(t.app, shop.auth, created.id, 'test'), 404, 'not_found')
    assert.ok(!(await list('?limit=100')).json.data.some((e: any) => e.id === created.id))
  })

  test("another store's endpoint is 404 on every route, and absent from its list", async () => {
    const created = await createEndpoint(t.app, shop.auth, { url: url(), event_types: ['charge.failed'] })
    const other = await createStoreWithKey(t.db)
    const id = created.id
    assertProblem(await getEndpoint(t.app, other.auth, id), 404, 'not_found')
    assertProblem(await patchEndpoint(t.app, other.auth, id, { status: 'disabled' }), 404, 'not_found')
    assertProblem(await call(t.app, { method: 'DELETE', url: `${endpointsUrl}/${id}`, headers: other.auth }), 404, 'not_found')
    assertProblem(await endpointAction(t.app, other.auth, id, 'rotate-secret'), 404, 'not_found')
    assertProblem(await endpointAction(t.app, other.auth, id, 'test'), 404, 'not_found')
    assertProblem(await call(t.app, { method: 'GET', url: `${endpointsUrl}/${id}/deliveries`, headers: other.auth }), 404, 'not_found')
    assertProblem(await endpointAction(t.app, other.auth, id, 'redeliver', { event_id: newId('evt') }), 404, 'not_found')
    assertProblem(await endpointAction(t.app, other.auth, id, 'replay', { since: new Date().toISOString() }), 404, 'not_found')
    assert.deepEqual((await list('?limit=100', other.auth)).json.data, [])
    // Nothing was changed by those calls.
    const still = await getEndpoint(t.app, shop.auth, id)
    assert.equal(still.json.status, 'enabled')
    assert.equal(still.json.updated_at, created.updated_at)
    // Without a key at all: 401.
    assert.equal((await call(t.app, { method: 'GET', url: endpointsUrl })).statusCode, 401)
  })

  test('rotate-secret answers a new secret and when the old one stops signing (24 h); reads still hide it', async () => {
    const created = await createEndpoint(t.app, shop.auth, { url: url(), event_types: ['charge.failed'] })
    const before = Date.now()
    const rotated = await endpointAction(t.app, shop.auth, created.id, 'rotate-secret')
    assert.equal(rotated.statusCode, 200, rotated.body)
    assert.equal(rotated.json.object, 'webhook_secret')
    assert.match(rotated.json.secret, /^whsec_[A-Za-z0-9+/]+={0,2}$/)
    assert.notEqual(rotated.json.secret, created.secret)
    const expires = Date.parse(rotated.json.previous_secret_expires_at)
    assert.ok(expires >= before + 24 * HOUR - 1000 && expires <= Date.now() + 24 * HOUR + 1000, rotated.json.previous_secret_expires_at)
    const read = await getEndpoint(t.app, shop.auth, created.id)
    assert.ok(!read.body.includes(rotated.json.secret.slice(6)) && !read.body.includes(created.secret.slice(6)))
  })

  test('redeliver needs an event of this store; replay needs a time', async () => {
    const own = await newShop(t)
    const other = await newShop(t)
    const endpoint = await createEndpoint(t.app, own.auth, { url: url(), event_types: ['subscription.created'] })
    assertProblem(await endpointAction(t.app, own.auth, endpoint.id, 'redeliver', { event_id: newId('evt') }), 404, 'not_found')
    const foreign = await subscribe(t, other)
    const foreignEvent = await t.db.selectFrom('events').select('id').where('entity_id', '=', foreign.id).executeTakeFirstOrThrow()
    assertProblem(await endpointAction(t.app, own.auth, endpoint.id, 'redeliver', { event_id: foreignEvent.id }), 404, 'not_found')
    assertProblem(await endpointAction(t.app, own.auth, endpoint.id, 'redeliver', { event_id: 'nope' }), 400, 'validation_failed')
    assertProblem(await endpointAction(t.app, own.auth, endpoint.id, 'replay', { since: 'yesterday' }), 400, 'validation_failed', { path: '/body/since' })
    const replay = await endpointAction(t.app, own.auth, endpoint.id, 'replay', { since: new Date(0).toISOString() })
    assert.equal(replay.statusCode, 202, replay.body)
    assert.deepEqual(replay.json, { object: 'webhook_replay', redelivered: 0 })
  })
})
