/**
 * Access control, generated from the OpenAPI document (docs/contract.md, Tenancy and credentials).
 *
 * The suite reads `GET /api/v1/openapi.json` from the running app and, for EVERY operation that declares
 * a security requirement, generates the refusal cases of its scheme, plus the cross-tenant cases for
 * operations that name a resource. A route added later (with its security declared, which the guard
 * test enforces for everything under /api/v1/admin and /api/v1/portal) is covered without editing this file.
 *
 * - portalSession: no / malformed / expired / `alg: none` / wrong-secret / tampered / wrong-audience /
 *   wrong-issuer / unknown-store / revoked tokens and admin keys are all 401 problem+json and change
 *   nothing; a valid session of another store or another subscriber is 404 on the first subscriber's
 *   resources and sees none of them on list routes.
 * - adminApiKey: no / malformed / unknown / revoked keys and portal session tokens are 401; another
 *   store's key is 404 on the first store's resources and sees none of them on list routes.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, describe, test } from 'node:test'
import fc from 'fast-check'
import { SignJWT, type JWTPayload } from 'jose'
import { sql } from 'kysely'
import { ulid } from 'ulid'
import { systemClock } from '../../../src/lib/clock.ts'
import { newId } from '../../../src/lib/ids.ts'
import { createAdminKey, revokeAdminKey } from '../../../src/modules/stores/index.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
import { checkout, checkoutInput, createCatalog, createShop } from '../../helpers/subscriptions.ts'
import { buildTestApp, call, testConfig } from '../../helpers/test-app.ts'
import { closeTestApp } from '../subscriptions/fixtures.ts'
import { testModules } from '../../helpers/modules.ts'

/** Raise these as routes land: the guard fails if the document loses its security declarations. */
const MIN_PORTAL_OPERATIONS = 20
const MIN_ADMIN_OPERATIONS = 29

/** The two portal routes that are reachable without a session: everything else under /portal needs one. */
const PUBLIC_PORTAL_PATHS = new Set(['/api/v1/portal/auth/request-link', '/api/v1/portal/auth/verify'])
const KNOWN_SCHEMES = new Set(['portalSession', 'adminApiKey'])
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const

const JWT_SECRET = 'access-control-suite: a known secret, 32+ characters long'
const OTHER_SECRET = 'access-control-suite: some OTHER secret, also 32+ chars'
const env = { JWT_SECRET, RATE_LIMIT_MAX: '1000000' }
const ISSUER = testConfig(env).jwtIssuer
const AUDIENCE = 'portal'

type Headers = Record<string, string>
type Response = Awaited<ReturnType<typeof call>>

// ---------------------------------------------------------------------------------------------
// One app and one set of fixtures for the whole file.
// ---------------------------------------------------------------------------------------------

const testApp = await buildTestApp({ env })
const { app, db } = testApp

const shopA = await createShop(db)
const shopB = await createShop(db)
const catalogA = await createCatalog(db, shopA.store)
const catalogB = await createCatalog(db, shopB.store)

const uniq = `${process.pid}-${Date.now().toString(36)}`
const emailA1 = `first-subscriber-${uniq}@example.com`
const emailA2 = `second-subscriber-${uniq}@example.com`
const emailB1 = `other-store-subscriber-${uniq}@example.com`

// A1 holds a business subscription (change requests need one) and a monthly one; A2 shares store A; B1 is in store B.
const subsA1 = await checkout(db, systemClock, shopA.store, checkoutInput([catalogA.plans.b2b.id, catalogA.plans.monthly.id], { email: emailA1 }))
const subsA2 = await checkout(db, systemClock, shopA.store, checkoutInput(catalogA.plans.monthly.id, { email: emailA2 }))
const subsB1 = await checkout(db, systemClock, shopB.store, checkoutInput(catalogB.plans.b2b.id, { email: emailB1 }))
const [subA1] = subsA1 as [(typeof subsA1)[number], ...typeof subsA1]
const subscriberA1 = subA1.subscriber_id
const subscriberA2 = subsA2[0]!.subscriber_id
const subscriberB1 = subsB1[0]!.subscriber_id
assert.notEqual(subscriberA1, subscriberA2)

const changeRequestA1 = await testModules(db, { clock: systemClock }).changeRequests.request(
  shopA.store,
  subA1.id,
  { kind: 'subscriber', subscriberId: subscriberA1 },
  { changes: { quantity: 2 } },
)

// The billing engine writes charges; no route creates one, so plant one as it would.
const chargeA1 = newId('ch')
await db
  .insertInto('charges')
  .values({
    id: chargeA1,
    store_id: shopA.store.id,
    subscription_id: subA1.id,
    amount: subA1.amount ?? 9000,
    currency: 'USD',
    status: 'succeeded',
    attempt: 1,
    payment_instrument_id: 'instr_visa_4242',
    idempotency_key: `access-control-${uniq}`,
    period_start: new Date(Date.now() - 30 * 86_400_000),
    period_end: new Date(),
    created_at: new Date(),
    settled_at: new Date(),
  })
  .execute()

const webhookA = await testModules(db).webhooks.create(shopA.store, {
  url: 'https://hooks.example.com/billing',
  event_types: ['subscription.created'],
})

// A discount of store A, and a one-time add-on on A1's subscription (a product sold once too).
const discountA = await call(app, { method: 'POST', url: '/api/v1/admin/discounts', headers: shopA.auth, payload: { code: `ACCESS-${uniq}`, type: 'percentage', value: 10, duration: 'forever' } })
assert.equal(discountA.statusCode, 201, `fixtures: ${discountA.body}`)
const onceProduct = await call(app, { method: 'POST', url: '/api/v1/admin/products', headers: shopA.auth, payload: { platform_product_id: `once-${uniq}`, name: 'Sold once too', one_time_price: { amount: 500, currency: 'USD' } } })
assert.equal(onceProduct.statusCode, 201, `fixtures: ${onceProduct.body}`)
const onetimeA1 = await call(app, { method: 'POST', url: `/api/v1/admin/subscriptions/${subA1.id}/onetimes`, headers: shopA.auth, payload: { product_id: onceProduct.json.id, quantity: 1 } })
assert.equal(onetimeA1.statusCode, 201, `fixtures: ${onetimeA1.body}`)

const eventsA = await db.selectFrom('events').select(['id', 'entity_id']).where('store_id', '=', shopA.store.id).orderBy('position').execute()
const a1EntityIds = new Set<string>([subscriberA1, ...subsA1.map((s) => s.id), changeRequestA1.id, chargeA1, onetimeA1.json.id])
const eventA1 = eventsA.find((e) => e.entity_id === subA1.id)?.id
assert.ok(eventA1, 'fixtures: the checkout recorded an event for the subscription')

const revokedKey = await createAdminKey(db, shopA.store, 'revoked by the access-control suite')
await revokeAdminKey(db, revokedKey.id, new Date())
const adminKeyIdA = (await db.selectFrom('admin_api_keys').select('id').where('store_id', '=', shopA.store.id).orderBy('created_at').executeTakeFirstOrThrow()).id

const sessionA1 = await signInSubscriber(app, db, shopA.store.id, subscriberA1)
const sessionA2 = await signInSubscriber(app, db, shopA.store.id, subscriberA2)
const sessionB1 = await signInSubscriber(app, db, shopB.store.id, subscriberB1)
const signedOut = await signInSubscriber(app, db, shopA.store.id, subscriberA1)
{
  const logout = await call(app, { method: 'POST', url: '/api/v1/portal/auth/logout', headers: signedOut.auth })
  assert.equal(logout.statusCode, 204, `fixtures: logout failed: ${logout.body}`)
}

// A price change, an import (a dry run: it writes nothing else) and a bulk operation of the first store.
const priceChangeA = await call(app, { method: 'POST', url: `/api/v1/admin/plans/${catalogA.plans.monthly.id}/price-change`, headers: shopA.auth, payload: { amount: catalogA.plans.monthly.amount + 100, applies_to: 'new_subscriptions' } })
assert.ok(priceChangeA.statusCode < 300, `fixtures: price change failed: ${priceChangeA.body}`)
const importA = await call(app, { method: 'POST', url: '/api/v1/admin/imports?format=native&dry_run=true', headers: { ...shopA.auth, 'content-type': 'text/csv' }, payload: 'external_id,email,status,quantity,amount,currency,interval,interval_count,next_charge_at,plan_id\n' })
assert.equal(importA.statusCode, 201, `fixtures: import failed: ${importA.body}`)
const bulkA = await call(app, { method: 'POST', url: '/api/v1/admin/bulk-operations', headers: shopA.auth, payload: { action: 'resume', subscription_ids: [subA1.id] } })
assert.equal(bulkA.statusCode, 202, `fixtures: bulk operation failed: ${bulkA.body}`)

/** Real ids of the first subscriber's / first store's resources, by id prefix. */
const realIds: Record<string, string> = {
  pc: priceChangeA.json.id,
  imp: importA.json.id,
  bulk: bulkA.json.id,
  store: shopA.store.id,
  key: adminKeyIdA,
  prod: catalogA.product.id,
  plan: catalogA.plans.monthly.id,
  cus: subscriberA1,
  sub: subA1.id,
  cr: changeRequestA1.id,
  evt: eventA1,
  ch: chargeA1,
  wh: webhookA.id,
  disc: discountA.json.id,
  ot: onetimeA1.json.id,
  // msg_: deliveries are only reached through their webhook subscription; no route takes their id.
}

/** What another subscriber of the same store must never see. */
const privateToA1 = [subscriberA1, emailA1, ...subsA1.map((s) => s.id), changeRequestA1.id, chargeA1, onetimeA1.json.id, ...eventsA.filter((e) => a1EntityIds.has(e.entity_id)).map((e) => e.id)]
/** What anyone of another store must never see. */
const privateToStoreA = [
  shopA.store.id,
  shopA.store.store_hash,
  catalogA.product.id,
  ...Object.values(catalogA.plans).map((p) => p.id),
  webhookA.id,
  webhookA.secret,
  ...privateToA1,
  subscriberA2,
  emailA2,
  ...subsA2.map((s) => s.id),
  ...eventsA.map((e) => e.id),
]

// ---------------------------------------------------------------------------------------------
// Tokens for the refusal cases: each impersonates A1 in store A, with exactly one thing wrong.
// ---------------------------------------------------------------------------------------------

const encoder = new TextEncoder()
const b64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')
const nowSeconds = () => Math.floor(Date.now() / 1000)

function a1Claims(overrides: JWTPayload = {}, omit: string[] = []): JWTPayload {
  const iat = nowSeconds()
  const claims: JWTPayload = { iss: ISSUER, aud: AUDIENCE, sub: subscriberA1, store: shopA.store.id, iat, exp: iat + 900, jti: randomUUID(), ...overrides }
  for (const name of omit) delete claims[name]
  return claims
}

function sign(claims: JWTPayload, { secret = JWT_SECRET, alg = 'HS256' }: { secret?: string; alg?: string } = {}): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT' }).sign(encoder.encode(secret))
}

function withPayload(token: string, change: (payload: Record<string, unknown>) => void): string {
  const [header, payload, signature] = token.split('.') as [string, string, string]
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
  change(claims)
  return `${header}.${b64url(claims)}.${signature}`
}

function alteredSignature(token: string): string {
  const [header, payload, signature] = token.split('.') as [string, string, string]
  const flipped = (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1)
  return `${header}.${payload}.${flipped}`
}

// A self-signed token with every claim right must work, or the refusals below prove nothing.
const wellFormedA1 = await sign(a1Claims())
const bearer = (token: string): Headers => ({ authorization: `Bearer ${token}` })

interface Refusal {
  name: string
  /**
   * Called once per test: forged tokens are minted fresh (own jti) for every request, so a route that
   * wrongly accepted one (logout, say, which revokes it) cannot hide the same defect on the next route.
   */
  headers: () => Headers | Promise<Headers>
  code?: 'unauthenticated' | 'invalid_token'
}

const fixed = (headers: Headers) => () => headers
const forged = (make: () => Promise<string> | string) => async () => bearer(await make())
const fresh = () => sign(a1Claims())

const portalRefusals: Refusal[] = [
  { name: 'no Authorization header', headers: fixed({}), code: 'unauthenticated' },
  { name: 'an empty Authorization header', headers: fixed({ authorization: '' }) },
  { name: 'a garbage bearer token', headers: fixed(bearer('not-a-jwt')) },
  { name: 'three garbage segments', headers: fixed(bearer('aaaa.bbbb.cccc')) },
  { name: 'wrong scheme "Basic x"', headers: fixed({ authorization: 'Basic x' }) },
  { name: 'a valid token under the wrong scheme ("Token <jwt>")', headers: async () => ({ authorization: `Token ${await fresh()}` }) },
  { name: 'a valid token without "Bearer"', headers: async () => ({ authorization: await fresh() }) },
  { name: '"Bearer" with nothing', headers: fixed({ authorization: 'Bearer' }) },
  { name: '"Bearer" with only spaces', headers: fixed({ authorization: 'Bearer    ' }) },
  { name: 'an expired token', headers: forged(() => sign(a1Claims({ iat: nowSeconds() - 3600, exp: nowSeconds() - 1800 }))) },
  { name: 'a token not valid yet (nbf in the future)', headers: forged(() => sign(a1Claims({ nbf: nowSeconds() + 3600 }))) },
  { name: 'an alg:none token', headers: forged(() => `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(a1Claims())}.`) },
  { name: 'an alg:none token with a signature part', headers: forged(() => `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(a1Claims())}.${b64url('x')}`) },
  { name: 'HS256 signed with a different secret', headers: forged(() => sign(a1Claims(), { secret: OTHER_SECRET })) },
  { name: 'HS512 signed with the right secret (the algorithm is pinned)', headers: forged(() => sign(a1Claims(), { alg: 'HS512' })) },
  { name: 'a valid token with its signature altered', headers: forged(async () => alteredSignature(await fresh())) },
  { name: 'a valid token with its signature stripped', headers: forged(async () => (await fresh()).replace(/[^.]+$/, '')) },
  { name: 'a valid token with sub tampered after signing', headers: forged(async () => withPayload(await fresh(), (c) => { c.sub = subscriberA2 })) },
  {
    name: "another store's valid token with store and sub tampered after signing",
    headers: forged(async () => withPayload(await sign(a1Claims({ sub: subscriberB1, store: shopB.store.id })), (c) => { c.store = shopA.store.id; c.sub = subscriberA1 })),
  },
  { name: 'a valid token with exp extended after signing', headers: forged(async () => withPayload(await sign(a1Claims({ exp: nowSeconds() - 60 })), (c) => { c.exp = nowSeconds() + 86_400 })) },
  { name: 'the wrong audience', headers: forged(() => sign(a1Claims({ aud: 'admin' }))) },
  { name: 'no audience', headers: forged(() => sign(a1Claims({}, ['aud']))) },
  { name: 'the wrong issuer', headers: forged(() => sign(a1Claims({ iss: 'someone-else' }))) },
  { name: 'no issuer', headers: forged(() => sign(a1Claims({}, ['iss']))) },
  { name: 'a store claim naming no store', headers: forged(() => sign(a1Claims({ store: newId('store') }))) },
  { name: 'no store claim', headers: forged(() => sign(a1Claims({}, ['store']))) },
  { name: 'no sub claim', headers: forged(() => sign(a1Claims({}, ['sub']))) },
  { name: 'no exp claim', headers: forged(() => sign(a1Claims({}, ['exp']))) },
  { name: 'no jti claim (could never be revoked)', headers: forged(() => sign(a1Claims({}, ['jti']))) },
  { name: 'a real session revoked by logout', headers: fixed(signedOut.auth) },
  { name: "store A's admin API key", headers: fixed(shopA.auth) },
  { name: "store B's admin API key", headers: fixed(shopB.auth) },
]

const adminRefusals: Refusal[] = [
  { name: 'no Authorization header', headers: fixed({}), code: 'unauthenticated' },
  { name: 'wrong scheme "Basic x"', headers: fixed({ authorization: 'Basic x' }) },
  { name: 'a valid key under the wrong scheme ("Token <key>")', headers: fixed({ authorization: `Token ${shopA.key}` }) },
  { name: '"Bearer" with nothing', headers: fixed({ authorization: 'Bearer' }) },
  { name: 'the key without "Bearer"', headers: fixed({ authorization: shopA.key }) },
  { name: 'a key no store issued', headers: fixed(bearer(`sk_test_${randomUUID().replaceAll('-', '')}`)) },
  { name: 'a revoked admin key', headers: fixed(bearer(revokedKey.key)) },
  { name: 'a valid portal session token (a real one)', headers: fixed(sessionA1.auth) },
  { name: 'a valid portal session token (self-signed)', headers: forged(fresh) },
]

// ---------------------------------------------------------------------------------------------
// The document and request building.
// ---------------------------------------------------------------------------------------------

const docResponse = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })
assert.equal(docResponse.statusCode, 200, 'the OpenAPI document is served')
const doc = docResponse.json() as any

interface Operation {
  method: string
  path: string
  op: any
  parameters: any[]
  schemes: string[]
  requirements: Record<string, unknown>[]
}

const operations: Operation[] = []
for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
  for (const method of HTTP_METHODS) {
    const op = item[method]
    if (!op) continue
    const requirements: Record<string, unknown>[] = op.security ?? doc.security ?? []
    const parameters = [...(item.parameters ?? []), ...(op.parameters ?? [])].map(deref)
    operations.push({ method: method.toUpperCase(), path, op, parameters, requirements, schemes: requirements.flatMap((r) => Object.keys(r)) })
  }
}
const secured = operations.filter((o) => o.schemes.length > 0)
const portalOperations = secured.filter((o) => o.schemes.includes('portalSession'))
const adminOperations = secured.filter((o) => o.schemes.includes('adminApiKey'))

function deref(schema: any, seen = 0): any {
  if (schema && typeof schema === 'object' && typeof schema.$ref === 'string') {
    if (seen > 20) throw new Error(`$ref cycle at ${schema.$ref}`)
    const target = schema.$ref.replace(/^#\//, '').split('/').reduce((node: any, key: string) => node?.[key.replaceAll('~1', '/').replaceAll('~0', '~')], doc)
    if (!target) throw new Error(`unresolved $ref ${schema.$ref}`)
    return deref(target, seen + 1)
  }
  return schema
}

const ID_PATTERN = /^\^([a-z]+)_\[0-9A-HJKMNP-TV-Z\]\{26\}\$$/
const PARAM_NAME_PREFIXES: Record<string, string> = {
  subscription_id: 'sub',
  plan_id: 'plan',
  product_id: 'prod',
  change_request_id: 'cr',
  charge_id: 'ch',
  event_id: 'evt',
  subscriber_id: 'cus',
  key_id: 'key',
  webhook_id: 'wh',
  message_id: 'msg',
}

/** An id for a prefix: the real resource of the first tenant when there is one, else a valid-looking id. */
function idFor(prefix: string, used: { synthetic: string[] }): string {
  const real = realIds[prefix]
  if (real) return real
  used.synthetic.push(prefix)
  return `${prefix}_${ulid()}`
}

function stringSample(schema: any, name: string, used: { synthetic: string[] }): string {
  const pattern: string | undefined = schema.pattern
  const idPrefix = pattern ? ID_PATTERN.exec(pattern)?.[1] : PARAM_NAME_PREFIXES[name]
  if (idPrefix) return idFor(idPrefix, used)
  const min: number = schema.minLength ?? 0
  const max: number = schema.maxLength ?? Number.POSITIVE_INFINITY
  const fits = (s: string) => s.length >= Math.max(min, 1) && s.length <= max
  switch (schema.format) {
    case 'email':
      return `nobody-${uniq}@example.com`
    case 'date-time':
      return new Date(Date.now() + 30 * 86_400_000).toISOString()
    case 'date':
      return new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10)
    case 'uri':
    case 'url':
      return 'https://example.com/hook'
    case 'uuid':
      return randomUUID()
  }
  if (pattern) {
    const found = fc.sample(fc.stringMatching(new RegExp(pattern)), { numRuns: 200, seed: 4242 }).find(fits)
    if (found === undefined) throw new Error(`no sample for pattern ${pattern} within ${min}..${max}`)
    return found
  }
  let value = 'test-value'
  while (value.length < min) value += '-x'
  return value.slice(0, Number.isFinite(max) ? max : undefined)
}

/** A value valid for the schema, as small as possible: required properties only. */
function sample(raw: any, name: string, used: { synthetic: string[] }, depth = 0): unknown {
  if (depth > 12) throw new Error('schema nests too deep to sample')
  const schema = deref(raw)
  if (!schema || typeof schema !== 'object' || Object.keys(schema).length === 0) return 'x'
  if ('const' in schema) return schema.const
  if (Array.isArray(schema.enum)) return schema.enum.find((v: unknown) => v !== null)
  if (Array.isArray(schema.allOf)) {
    const merged = schema.allOf.map(deref).reduce(
      (acc: any, part: any) => ({
        ...acc,
        ...part,
        properties: { ...(acc.properties ?? {}), ...(part.properties ?? {}) },
        required: [...(acc.required ?? []), ...(part.required ?? [])],
      }),
      {},
    )
    return sample(merged, name, used, depth + 1)
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(schema[key])) {
      const option = schema[key].map(deref).find((o: any) => o.type !== 'null') ?? schema[key][0]
      return sample(option, name, used, depth + 1)
    }
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : (schema.type ?? (schema.properties ? 'object' : undefined))
  switch (type) {
    case 'object': {
      const properties: Record<string, any> = schema.properties ?? {}
      const names = new Set<string>(schema.required ?? [])
      for (const key of Object.keys(properties)) {
        if (names.size >= (schema.minProperties ?? 0)) break
        names.add(key)
      }
      const value: Record<string, unknown> = {}
      for (const key of names) value[key] = sample(properties[key] ?? {}, key, used, depth + 1)
      return value
    }
    case 'array': {
      const count = Math.max(schema.minItems ?? 0, 0)
      return Array.from({ length: count }, () => sample(schema.items ?? {}, name, used, depth + 1))
    }
    case 'integer':
    case 'number': {
      const low = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? Number(schema.exclusiveMinimum) + 1 : 1)
      const value = Math.max(low, 1)
      return schema.maximum !== undefined ? Math.min(value, schema.maximum) : value
    }
    case 'boolean':
      return false
    case 'string':
      return stringSample(schema, name, used)
    default:
      throw new Error(`cannot sample a schema of type ${JSON.stringify(schema.type)}`)
  }
}

interface Prepared {
  url: string
  /** The URL with every optional id-shaped query filter set to the first tenant's ids. */
  filteredUrl: string | undefined
  body: unknown
  /** Why no valid body could be built (the cross-tenant cases of this operation are then skipped). */
  unbuildable: string | undefined
  /** Prefixes that had no real resource and were filled with a made-up id. */
  synthetic: string[]
  hasPathIds: boolean
}

function prepare(o: Operation): Prepared {
  const used = { synthetic: [] as string[] }
  let url = o.path
  const pathParams = o.parameters.filter((p) => p.in === 'path')
  for (const name of o.path.match(/\{[^}]+\}/g) ?? []) {
    const bare = name.slice(1, -1)
    const param = pathParams.find((p) => p.name === bare)
    url = url.replace(name, encodeURIComponent(String(sample(param?.schema ?? { type: 'string' }, bare, used))))
  }
  const query = new URLSearchParams()
  const filters = new URLSearchParams()
  for (const p of o.parameters.filter((p) => p.in === 'query')) {
    const schema = deref(p.schema ?? {})
    if (p.required && schema.default === undefined) query.set(p.name, String(sample(schema, p.name, used)))
    else if (!p.required && typeof schema.pattern === 'string' && ID_PATTERN.test(schema.pattern)) {
      const prefix = ID_PATTERN.exec(schema.pattern)![1]!
      if (realIds[prefix]) filters.set(p.name, realIds[prefix])
    }
  }
  const withQuery = (extra?: URLSearchParams) => {
    const all = new URLSearchParams([...query, ...(extra ?? [])])
    return all.size > 0 ? `${url}?${all}` : url
  }
  let body: unknown
  let unbuildable: string | undefined
  const content = o.op.requestBody?.content
  if (content) {
    const json = content['application/json']
    if (!json) unbuildable = `request body is not JSON (${Object.keys(content).join(', ')})`
    else {
      try {
        body = sample(json.schema ?? {}, 'body', used)
      } catch (error) {
        unbuildable = `cannot build a body: ${(error as Error).message}`
      }
    }
  }
  return {
    url: withQuery(),
    filteredUrl: filters.size > 0 ? withQuery(filters) : undefined,
    body,
    unbuildable,
    synthetic: used.synthetic,
    hasPathIds: pathParams.length > 0 || /\{[^}]+\}/.test(o.path),
  }
}

function send(o: Operation, url: string, headers: Headers, body: unknown): Promise<Response> {
  return call(app, { method: o.method as any, url, headers, ...(body === undefined ? {} : { payload: body as any }) })
}

// ---------------------------------------------------------------------------------------------
// Assertions.
// ---------------------------------------------------------------------------------------------

const FINGERPRINTED_TABLES = [
  'stores',
  'products',
  'plans',
  'subscribers',
  'subscriptions',
  'change_requests',
  'charges',
  'checkouts',
  'events',
  'revoked_sessions',
  'magic_link_tokens',
  'idempotency_keys',
  'service_secrets',
  'jobs',
]

/** Every row the service keeps, hashed (admin keys without last_used_at, which earlier valid requests touch). */
async function fingerprint(): Promise<string> {
  const parts = FINGERPRINTED_TABLES.map(
    (table) => sql`(select ${table} || ':' || count(*) || ':' || md5(coalesce(string_agg(t::text, '|' order by t::text), '')) from ${sql.table(table)} t)`,
  )
  parts.push(sql`(select 'admin_api_keys:' || md5(coalesce(string_agg(k.id || '/' || coalesce(k.revoked_at::text, '-'), '|' order by k.id), '')) from admin_api_keys k)`)
  const { rows } = await sql<{ f: string }>`select concat_ws(',', ${sql.join(parts)}) as f`.execute(db)
  return rows[0]!.f
}

async function assertUnchanged(before: string, what: string): Promise<void> {
  const now = await fingerprint()
  if (now === before) return
  const was = new Map(before.split(',').map((p) => [p.split(':')[0], p] as const))
  const changed = now.split(',').filter((p) => was.get(p.split(':')[0]) !== p).map((p) => p.split(':').slice(0, 2).join(' rows: '))
  assert.fail(`${what}: the database changed (${changed.join('; ')})`)
}

function assertRefused(response: Response, refusal: Refusal, what: string, method: string, credential: string | undefined): void {
  assert.equal(response.statusCode, 401, `${what}: expected 401, got ${response.statusCode}: ${response.body}`)
  if (method !== 'HEAD') {
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/, `${what}: problem+json`)
    const code = response.json?.code
    if (refusal.code) assert.equal(code, refusal.code, `${what}: problem code`)
    else assert.ok(code === 'unauthenticated' || code === 'invalid_token', `${what}: code ${code}`)
    assert.equal(response.json.status, 401, `${what}: problem status`)
    if (credential) assert.ok(!response.body.includes(credential), `${what}: the answer echoes the credential`)
  }
  assert.match(String(response.headers['www-authenticate'] ?? ''), /^Bearer/, `${what}: WWW-Authenticate: Bearer`)
}

function assertNoLeak(response: Response, forbidden: string[], what: string): void {
  const leaked = forbidden.filter((value) => response.body.includes(value))
  assert.deepEqual(leaked, [], `${what}: the answer shows the first tenant's data: ${response.body.slice(0, 500)}`)
}

async function refusalTest(o: Operation, p: Prepared, refusal: Refusal, body: unknown): Promise<void> {
  const what = `${o.method} ${p.url} with ${refusal.name}`
  const headers = await refusal.headers()
  const credential = headers.authorization?.replace(/^\S+\s+/, '')
  const before = await fingerprint()
  const response = await send(o, p.url, headers, body)
  assertRefused(response, refusal, what, o.method, credential && credential.length >= 8 ? credential : undefined)
  await assertUnchanged(before, what)
}

interface Tenant {
  name: string
  headers: Headers
  /** What this caller must never see on list routes. */
  forbidden: string[]
}

function crossTenantTests(o: Operation, p: Prepared, tenants: Tenant[]): void {
  const isRead = o.method === 'GET' || o.method === 'HEAD'
  for (const tenant of tenants) {
    if (p.hasPathIds) {
      const title = `${tenant.name} on the first ${o.schemes.includes('adminApiKey') ? 'store' : 'subscriber'}'s resource → 404, nothing changes`
      if (p.unbuildable) {
        test(`${title} [skipped: ${p.unbuildable}]`, { skip: p.unbuildable }, () => {})
        continue
      }
      test(title, async () => {
        const what = `${o.method} ${p.url} as ${tenant.name}`
        const before = await fingerprint()
        const response = await send(o, p.url, tenant.headers, p.body)
        assert.equal(response.statusCode, 404, `${what}: expected 404, got ${response.statusCode}: ${response.body}`)
        if (!isRead || o.method === 'GET') assert.equal(response.json?.code, 'not_found', `${what}: problem code`)
        await assertUnchanged(before, what)
      })
    } else if (isRead) {
      test(`${tenant.name}: 200 with none of the first tenant's data`, async () => {
        const what = `${o.method} ${p.url} as ${tenant.name}`
        const response = await send(o, p.url, tenant.headers, undefined)
        assert.equal(response.statusCode, 200, `${what}: expected 200, got ${response.statusCode}: ${response.body}`)
        assertNoLeak(response, tenant.forbidden, what)
        if (p.filteredUrl) {
          const filtered = await send(o, p.filteredUrl, tenant.headers, undefined)
          assert.ok([200, 404].includes(filtered.statusCode), `${o.method} ${p.filteredUrl} as ${tenant.name}: ${filtered.statusCode} ${filtered.body}`)
          assertNoLeak(filtered, tenant.forbidden, `${o.method} ${p.filteredUrl} as ${tenant.name}`)
        }
      })
    }
    // Writes without an id act on the caller's own store or session: nothing of another tenant to reach.
  }
}

/** The control: the rightful caller gets 200 on reads, so the 404s above are about tenancy, not bad ids. */
function controlTest(o: Operation, p: Prepared, headers: Headers, who: string): void {
  if (o.method !== 'GET') return
  const title = `control: ${who} reads it (200)`
  if (p.synthetic.length > 0) {
    test(`${title} [skipped: no real ${p.synthetic.join(', ')} resource in the fixtures]`, { skip: true }, () => {})
    return
  }
  test(title, async () => {
    const response = await send(o, p.url, headers, undefined)
    assert.equal(response.statusCode, 200, `${o.method} ${p.url} as ${who}: expected 200, got ${response.statusCode}: ${response.body}`)
  })
}

// ---------------------------------------------------------------------------------------------
// The suite.
// ---------------------------------------------------------------------------------------------

describe('access control generated from the OpenAPI document', () => {
  after(() => closeTestApp(testApp))

  describe('guard', () => {
    test('both security schemes are declared as HTTP bearer', () => {
      const schemes = doc.components?.securitySchemes ?? {}
      for (const name of KNOWN_SCHEMES) {
        assert.equal(schemes[name]?.type, 'http', `${name} is an http scheme`)
        assert.equal(String(schemes[name]?.scheme).toLowerCase(), 'bearer', `${name} is bearer`)
      }
    })

    test(`the document declares at least ${MIN_PORTAL_OPERATIONS} portal and ${MIN_ADMIN_OPERATIONS} admin operations with security`, () => {
      assert.ok(portalOperations.length >= MIN_PORTAL_OPERATIONS, `portalSession operations: ${portalOperations.length} < ${MIN_PORTAL_OPERATIONS}`)
      assert.ok(adminOperations.length >= MIN_ADMIN_OPERATIONS, `adminApiKey operations: ${adminOperations.length} < ${MIN_ADMIN_OPERATIONS}`)
    })

    test('every portal operation but request-link and verify requires exactly portalSession; every admin one exactly adminApiKey', () => {
      const wrong: string[] = []
      for (const o of operations) {
        const expected = o.path.startsWith('/api/v1/admin/') || o.path === '/api/v1/admin'
          ? 'adminApiKey'
          : o.path.startsWith('/api/v1/portal/') && !PUBLIC_PORTAL_PATHS.has(o.path)
            ? 'portalSession'
            : undefined
        if (!expected) continue
        // One requirement object naming one scheme: `{}` or a second alternative would make the credential optional.
        const ok = o.requirements.length === 1 && Object.keys(o.requirements[0]!).length === 1 && o.schemes[0] === expected
        if (!ok) wrong.push(`${o.method} ${o.path}: ${JSON.stringify(o.requirements)} (expected [{"${expected}":[]}])`)
      }
      assert.deepEqual(wrong, [])
    })

    test('every security requirement names a scheme this suite knows how to attack', () => {
      const unknown = secured.flatMap((o) => o.requirements.filter((r) => Object.keys(r).length === 0 || Object.keys(r).some((s) => !KNOWN_SCHEMES.has(s))).map((r) => `${o.method} ${o.path}: ${JSON.stringify(r)}`))
      assert.deepEqual(unknown, [])
    })

    test('the sign-in routes stay reachable without a session', () => {
      for (const path of PUBLIC_PORTAL_PATHS) {
        const o = operations.find((x) => x.path === path)
        assert.ok(o, `${path} is in the document`)
        assert.deepEqual(o.schemes, [], `${path} declares no security`)
      }
    })

    test('the fixtures hold a real resource for every id prefix the secured operations use, or say which they fake', () => {
      const faked = new Set(secured.flatMap((o) => prepare(o).synthetic))
      for (const prefix of faked) assert.ok(['wh', 'msg'].includes(prefix), `no real "${prefix}_" resource in the fixtures: add one`)
    })

    test('a correctly signed token with the known secret is accepted (so each refusal below is about its one defect)', async () => {
      const response = await call(app, { method: 'GET', url: '/api/v1/portal/me', headers: bearer(wellFormedA1) })
      assert.equal(response.statusCode, 200, response.body)
      assert.equal(response.json.id, subscriberA1)
    })
  })

  for (const o of portalOperations) {
    const p = prepare(o)
    describe(`${o.method} ${o.path} [portalSession]`, () => {
      for (const refusal of portalRefusals) {
        test(`${refusal.name} → 401`, () => refusalTest(o, p, refusal, p.body))
      }
      if (p.body !== undefined) {
        test('no Authorization header and an invalid body → 401 (authentication before validation)', () =>
          refusalTest(o, p, portalRefusals[0]!, { __not_a_field__: ['x'] }))
      }
      controlTest(o, p, sessionA1.auth, 'the first subscriber')
      crossTenantTests(o, p, [
        { name: 'a valid session of another store', headers: sessionB1.auth, forbidden: privateToStoreA },
        { name: 'a valid session of another subscriber of the same store', headers: sessionA2.auth, forbidden: privateToA1 },
      ])
    })
  }

  for (const o of adminOperations) {
    const p = prepare(o)
    describe(`${o.method} ${o.path} [adminApiKey]`, () => {
      for (const refusal of adminRefusals) {
        test(`${refusal.name} → 401`, () => refusalTest(o, p, refusal, p.body))
      }
      if (p.body !== undefined) {
        test('no Authorization header and an invalid body → 401 (authentication before validation)', () =>
          refusalTest(o, p, adminRefusals[0]!, { __not_a_field__: ['x'] }))
      }
      controlTest(o, p, shopA.auth, 'the first store')
      crossTenantTests(o, p, [{ name: "another store's admin key", headers: shopB.auth, forbidden: privateToStoreA }])
    })
  }
})
