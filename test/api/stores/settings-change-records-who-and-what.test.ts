import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createShopWithPlan } from '../../helpers/catalog.ts'
import { assertProblem } from '../../helpers/problem.ts'
import { call, type TestApp } from '../../helpers/test-app.ts'
import { createEndpoint, drive, storedPayload, webhookSuite } from '../webhooks/fixtures.ts'

/**
 * A change of the store's settings records `store.updated` (docs/contract.md, Events), so the merchant
 * can see who switched billing off or on (the cutover switch) and what else changed: the actor, each
 * changed setting before and after, the store after it. Read through the events list and delivered to
 * a webhook endpoint like every event. Before, a settings change recorded nothing.
 */
describe('store.updated: who changed which store setting', () => {
  let t: TestApp
  const { receiver, dispatcher } = webhookSuite((app) => (t = app))
  const CLOCK = '2026-03-02T08:30:00.000Z'

  test('billing off and on, and other settings: one event per change naming the key, the fields changed before and after; nothing for a change to the same value or a refused one', async () => {
    const shop = await createShopWithPlan(t, { clockAt: CLOCK })
    const key = await t.db.selectFrom('admin_api_keys').select(['id', 'name']).where('store_id', '=', shop.store.id).executeTakeFirstOrThrow()
    const inbox = await receiver()
    await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: ['store.updated'] })
    const patch = (payload: Record<string, unknown>) => call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: shop.auth, payload })
    const updates = async () => {
      const page = await call(t.app, { method: 'GET', url: '/api/v1/admin/events?event_type=store.updated', headers: shop.auth })
      assert.equal(page.statusCode, 200, page.body)
      return page.json.data.reverse()
    }

    const off = await patch({ billing_enabled: false })
    assert.equal(off.statusCode, 200, off.body)
    const [switchedOff, ...none] = await updates()
    assert.deepEqual(none, [])
    assert.equal(switchedOff.event_type, 'store.updated')
    assert.deepEqual(switchedOff.actor, { type: 'admin_key', id: key.id, label: key.name })
    assert.equal(switchedOff.timestamp, CLOCK, "on the store's clock")
    assert.deepEqual(switchedOff.data.changes, { billing_enabled: { from: true, to: false } })
    const { changes: _changes, ...store } = switchedOff.data
    assert.deepEqual(store, off.json, 'data is the store as GET /store shows it after the change')

    // The same value again, and a refused change: nothing happened, nothing is recorded.
    assert.equal((await patch({ billing_enabled: false })).statusCode, 200)
    assertProblem(await patch({ billing_enabled: 'yes' }), 400, 'validation_failed')
    assertProblem(await patch({ billing_enabled: true, dunning_retry_days: [3, 1] }), 400, 'validation_failed')
    assert.equal((await updates()).length, 1)

    // Several at once: only what changed, lists and objects whole.
    const on = await patch({ billing_enabled: true, renewal_reminder_days: 5, dunning_retry_days: [1, 3, 5, 7], notifications: { past_due: false } })
    assert.equal(on.statusCode, 200, on.body)
    const [, switchedOn] = await updates()
    assert.deepEqual(Object.keys(switchedOn.data.changes).sort(), ['billing_enabled', 'notifications', 'renewal_reminder_days'], 'dunning_retry_days was already 1, 3, 5, 7')
    assert.deepEqual(switchedOn.data.changes.billing_enabled, { from: false, to: true })
    assert.deepEqual(switchedOn.data.changes.renewal_reminder_days, { from: 3, to: 5 })
    assert.deepEqual(switchedOn.data.changes.notifications, { from: off.json.notifications, to: { ...off.json.notifications, past_due: false } })
    assert.deepEqual([switchedOff.sequence, switchedOn.sequence], [1, 2], 'numbered per store')
    assert.deepEqual((await call(t.app, { method: 'GET', url: `/api/v1/admin/events/${switchedOn.id}`, headers: shop.auth })).json, switchedOn)

    // Delivered to the endpoint that subscribed, byte for byte as stored.
    await drive(dispatcher(), { until: () => inbox.requests.length >= 2 })
    assert.deepEqual(inbox.requests.map((request) => request.body), [await storedPayload(t.db, switchedOff.id), await storedPayload(t.db, switchedOn.id)])
  })
})
