import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { everyFieldOptional } from '../../src/http/optional-body.ts'
import { createPlan, createProduct } from '../helpers/catalog.ts'
import { operationsOf, UNKNOWN_ULID, idPrefixOf, type Operation } from '../helpers/fuzz.ts'
import { signInSubscriber } from '../helpers/portal.ts'
import { checkoutInput, checkoutViaApi } from '../helpers/subscriptions.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../helpers/test-app.ts'

/**
 * A request whose body fields are all optional may send no body at all (docs/contract.md, Edges every
 * route keeps): for every such operation of the served OpenAPI document, a request without a body is
 * never refused for its body. `POST .../refund` with no
 * body was 400 "body must be object" before; it refunds the whole charge.
 */
describe('operations whose body fields are all optional accept no body', () => {
  let t: TestApp
  let shop: StoreWithKey
  let portalToken: string
  let operations: Operation[]

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    await t.db.updateTable('stores').set({ test_clock_now: new Date('2026-01-10T09:00:00.000Z') }).where('id', '=', shop.store.id).execute()
    const product = await createProduct(t.app, shop.auth)
    const plan = await createPlan(t.app, shop.auth, product.id)
    const [subscription] = await checkoutViaApi(t.app, shop.auth, checkoutInput([plan.id], { email: `nobody-${process.pid}@example.com` }))
    portalToken = (await signInSubscriber(t.app, t.db, shop.store.id, subscription.subscriber_id)).accessToken
    const served = await call(t.app, { method: 'GET', url: '/api/v1/openapi.json' })
    operations = operationsOf(served.json).filter((op) => op.method === 'POST' && op.body !== undefined && everyFieldOptional(op.body))
  })
  after(() => t.close())

  const credentialOf = (op: Operation): Record<string, string> =>
    op.security === 'admin' ? shop.auth : op.security === 'portal' ? { authorization: `Bearer ${portalToken}` } : {}
  /** The path with each id an id of the right kind nobody has: validation runs before the route looks it up. */
  const urlOf = (op: Operation) => op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const param = op.pathParams.find((p) => p.name === name)
    const prefix = param ? idPrefixOf(param.schema) : undefined
    return prefix ? `${prefix}_${UNKNOWN_ULID}` : 'x'
  })

  test('the document has such operations, the refund among them', () => {
    assert.ok(operations.length >= 5, `${operations.length} operations: ${operations.map((op) => op.id).join(', ')}`)
    assert.ok(operations.some((op) => op.id === 'refundCharge'), operations.map((op) => op.id).join(', '))
  })

  test('each answers without a body as it answers `{}`: never a refusal of its body', async () => {
    const refusedForBody: string[] = []
    for (const op of operations) {
      const headers = credentialOf(op)
      const url = urlOf(op)
      // No body and no Content-Type; a body declared JSON must still be JSON (an empty one is 400 invalid_json).
      const answers = [await call(t.app, { method: op.method as 'POST', url, headers })]
      for (const answer of answers) {
        const body = answer.json as { code?: string; errors?: { path?: string }[] } | undefined
        const aboutBody = answer.statusCode === 415 || (answer.statusCode === 400 && (body?.code === 'invalid_json' || (body?.errors ?? []).some((e) => e.path === '/body' || e.path === '')))
        if (aboutBody) refusedForBody.push(`${op.method} ${op.path} (${op.id}): ${answer.statusCode} ${answer.body}`)
      }
    }
    assert.deepEqual(refusedForBody, [])
  })

  test('a refund with no body gives back the whole charge', async () => {
    const advanced = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to: '2026-02-10T09:00:00.000Z' } })
    assert.equal(advanced.statusCode, 200, advanced.body)
    const [charge] = (await call(t.app, { method: 'GET', url: '/api/v1/admin/charges', headers: shop.auth })).json.data as { id: string; amount: number; status: string }[]
    assert.equal(charge!.status, 'succeeded')
    const refunded = await call(t.app, { method: 'POST', url: `/api/v1/admin/charges/${charge!.id}/refund`, headers: shop.auth })
    assert.equal(refunded.statusCode, 200, refunded.body)
    assert.equal(refunded.json.amount_refunded, charge!.amount)
  })
})
