import SwaggerParser from '@apidevtools/swagger-parser'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, describe, test } from 'node:test'
import { API_TYPES_FILE, generateApiTypes } from '../../scripts/openapi-document.ts'
import { DEMO_STORE_HASH } from '../../src/demo/demo-data.ts'
import { EVENT_TYPES } from '../../src/modules/events/index.ts'
import { buildTestApp, call, type TestApp } from '../helpers/test-app.ts'

const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name: string; version: string }
const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

describe('the OpenAPI document', () => {
  let t: TestApp
  let served: any

  before(async () => {
    t = await buildTestApp()
    const response = await call(t.app, { method: 'GET', url: '/api/v1/openapi.json' })
    assert.equal(response.statusCode, 200)
    served = response.json
  })
  after(() => t.close())

  function operations(): Array<{ path: string; method: string; operation: any }> {
    return Object.entries(served.paths).flatMap(([path, item]: [string, any]) =>
      HTTP_METHODS.filter((method) => item[method]).map((method) => ({ path, method, operation: item[method] })),
    )
  }

  test('is served publicly as OpenAPI 3.0.3 and is valid under swagger-parser', async () => {
    assert.equal(served.openapi, '3.0.3')
    await SwaggerParser.validate(structuredClone(served))
  })

  test('matches the committed openapi.json (run `npm run openapi` after changing a route)', () => {
    const committed = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8'))
    assert.deepEqual(served, committed, 'openapi.json is stale: run npm run openapi and commit it')
  })

  test('the browser apps\' generated API types are those of the served document (run `npm run openapi`)', async () => {
    const generated = await generateApiTypes(`${JSON.stringify(served, null, 2)}\n`)
    assert.ok(generated === readFileSync(API_TYPES_FILE, 'utf8'), 'src/web/shared/api-types.ts is stale: run npm run openapi and commit it')
  })

  test('documents only versioned routes, each with a unique operationId', () => {
    const ids = operations().map(({ path, operation }) => {
      assert.ok(path.startsWith('/api/v1/'), `${path} is outside /api/v1`)
      assert.ok(operation.operationId, `${path} has no operationId`)
      return operation.operationId
    })
    assert.equal(new Set(ids).size, ids.length, 'operationIds repeat')
    assert.ok(!Object.keys(served.paths).some((path) => path.includes('openapi.json') || path.startsWith('/healthz')))
  })

  test('every operation declares its success and the contract errors as problem+json', () => {
    for (const { path, method, operation } of operations()) {
      const statuses = Object.keys(operation.responses)
      assert.ok(statuses.some((status) => status.startsWith('2')), `${method} ${path} declares no success`)
      const expected = ['400', '406', '429', '500']
      if (method === 'post' || method === 'patch') expected.push('413', '415')
      if (method === 'post') expected.push('409')
      if (operation.security?.length) expected.push('401')
      for (const status of expected) {
        const problem = operation.responses[status]?.content?.['application/problem+json']?.schema?.$ref
        assert.equal(problem, '#/components/schemas/Problem', `${method.toUpperCase()} ${path} does not declare ${status} as a Problem`)
      }
    }
  })

  test('admin routes require the admin API key; public catalogue and storefront routes require nothing', () => {
    for (const { path, method, operation } of operations()) {
      if (path.startsWith('/api/v1/admin/')) {
        assert.deepEqual(operation.security, [{ adminApiKey: [] }], `${method} ${path}`)
      } else if (path.startsWith('/api/v1/storefront/') || /^\/api\/v1\/(products|plans)/.test(path)) {
        assert.ok(!operation.security?.length, `${method} ${path} should be public`)
      }
    }
    assert.equal(served.components.securitySchemes.adminApiKey.scheme, 'bearer')
    assert.equal(served.components.securitySchemes.portalSession.bearerFormat, 'JWT')
  })

  test('every POST documents Idempotency-Key', () => {
    for (const { path, method, operation } of operations()) {
      if (method !== 'post') continue
      assert.ok(operation.parameters?.some((p: any) => p.in === 'header' && p.name === 'idempotency-key'), `POST ${path}`)
    }
  })

  test('shared schemas keep their names as components', () => {
    for (const name of ['Problem', 'Store', 'Product', 'Plan', 'StorefrontPlans', 'Subscription', 'Charge', 'ChangeRequest', 'Event']) {
      assert.ok(served.components.schemas[name], `component ${name} is missing`)
    }
    assert.ok(!Object.keys(served.components.schemas).some((name) => name.startsWith('def-')), 'anonymous def-N components')
  })

  test('lists the full event-type catalogue and a payload schema for every family', () => {
    const catalogue = served.components.schemas.EventType.enum
    assert.deepEqual([...catalogue].sort(), [...EVENT_TYPES].sort())
    for (const name of [
      'subscription.created', 'subscription.activated', 'subscription.charged', 'charge.succeeded', 'charge.failed',
      'subscription.past_due', 'subscription.paused', 'subscription.resumed', 'subscription.cancelled',
      'subscription.updated', 'subscription.renewal_upcoming', 'subscription.skipped', 'subscription.unskipped',
      'subscription.swapped', 'subscription.expired', 'subscription.payment_instrument_updated', 'subscription.gifted',
      'prepaid.order_created', 'change_request.created', 'change_request.approved', 'change_request.rejected',
      'shipping.address_updated', 'webhook.test', 'subscription.discount_applied', 'subscription.discount_removed', 'onetime.created', 'onetime.removed',
    ]) {
      assert.ok(catalogue.includes(name), `${name} is missing from EventType`)
    }
    const families = ['SubscriptionEvent', 'ChargeEvent', 'ChangeRequestEvent', 'OnetimeEvent', 'StoreEvent', 'WebhookTestEvent']
    const covered = families.flatMap((family) => served.components.schemas[family].properties.event_type.enum)
    assert.deepEqual([...covered].sort(), [...EVENT_TYPES].sort(), 'each event type belongs to exactly one payload family')
    assert.deepEqual(served.components.schemas.ChargeEvent.properties.data, { $ref: '#/components/schemas/Charge' })
    assert.deepEqual(served.components.schemas.OnetimeEvent.properties.data, { $ref: '#/components/schemas/Onetime' })
    assert.deepEqual(served.components.schemas.StoreEvent.properties.data, { $ref: '#/components/schemas/StoreChange' })
  })

  test('the deprecated alias is marked deprecated and its successor is not', () => {
    assert.equal(served.paths['/api/v1/storefront/products/{platform_product_id}/plans'].get.deprecated, true)
    assert.equal(served.paths['/api/v1/storefront/plans'].get.deprecated, undefined)
  })

  test('the API reference page is served at /docs', async () => {
    const page = await call(t.app, { method: 'GET', url: '/docs' })
    const html = page.statusCode === 302 ? await call(t.app, { method: 'GET', url: String(page.headers.location) }) : page
    assert.equal(html.statusCode, 200)
    assert.match(html.body, /swagger-ui/i)
    // The service's own page: its name and version, the versioned document, nothing inline under a strict CSP.
    assert.match(html.body, new RegExp(`<title>Subscription Billing API ${PACKAGE.version.replaceAll('.', '\\.')} `))
    assert.match(html.body, /data-openapi-url="\/api\/v1\/openapi\.json"/)
    assert.doesNotMatch(html.body, /<script>|<style|\sstyle=|\son[a-z]+=/i)
    const csp = String(html.headers['content-security-policy'])
    assert.match(csp, /script-src 'self'(;|$)/)
    assert.match(csp, /style-src 'self'(;|$)/)
    for (const asset of html.body.matchAll(/(?:href|src)="(\/docs\/assets\/[^"]+)"/g)) {
      const response = await call(t.app, { method: 'GET', url: asset[1]! })
      assert.equal(response.statusCode, 200, asset[1])
    }
    assert.equal((await call(t.app, { method: 'GET', url: '/docs/assets/index.html' })).statusCode, 404)
  })

  test("info carries the service's own name and version from package.json", () => {
    assert.equal(served.info.title, 'Subscription Billing API')
    assert.equal(served.info.version, PACKAGE.version)
    assert.match(served.info.description, new RegExp(`\`${PACKAGE.name}\``))
  })

  test('every store_hash example names the demo store npm start seeds', () => {
    const examples: string[] = []
    const walk = (node: unknown, key?: string): void => {
      if (Array.isArray(node)) return node.forEach((item) => walk(item))
      if (!node || typeof node !== 'object') return
      const record = node as Record<string, any>
      if (key === 'store_hash' && 'example' in record) examples.push(record.example)
      if (record.name === 'store_hash' && record.schema?.example !== undefined) examples.push(record.schema.example)
      for (const [name, value] of Object.entries(record)) walk(value, name)
    }
    walk(served)
    assert.ok(examples.length >= 3, `found ${examples.length} store_hash examples`)
    assert.deepEqual([...new Set(examples)], [DEMO_STORE_HASH])
  })
})
