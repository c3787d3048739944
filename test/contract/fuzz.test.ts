import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { after, before, describe, test } from 'node:test'
import fc from 'fast-check'
import { ERROR_STATUS } from '../../src/lib/errors.ts'
import { createPlan, createProduct } from '../helpers/catalog.ts'
import { onPostgres } from '../helpers/database.ts'
import {
  CARDS,
  cardDigitsIn,
  describeRequest,
  encodeLoose,
  exampleValue,
  expectationOf,
  DATE_TIME_EDGES,
  HOSTILE_STRINGS,
  idPrefixOf,
  invalidValues,
  maximalValue,
  MAX_JSON_DEPTH,
  mutatedBodyArb,
  operationsOf,
  RawJson,
  serialize,
  summarize,
  UNKNOWN_ULID,
  validArb,
  type FuzzContext,
  type Operation,
  type RequestParts,
  type Violation,
} from '../helpers/fuzz.ts'
import { signInSubscriber } from '../helpers/portal.ts'
import { checkoutInput, checkoutViaApi } from '../helpers/subscriptions.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../helpers/test-app.ts'

/**
 * Malformed and boundary requests against every operation of the served OpenAPI document, anonymous
 * and with credentials, checked against docs/contract.md: no 5xx, every 4xx is problem+json with a
 * code of the closed list (Errors), card numbers are refused and never logged (Card data), nothing is
 * logged as an unhandled error, and /healthz still answers afterwards.
 *
 * Each operation gets a share of a fixed catalogue of malformed and boundary requests, chosen so that
 * every kind of request goes to as many operations as the budget allows (the least-sent kinds first),
 * and a few random ones built from its schemas with fast-check. Everything is seeded: FUZZ_SEED=<n>
 * replays a run (FUZZ_SEED=random picks one and prints it). FUZZ_CASES_PER_OPERATION (or `all`) and
 * FUZZ_RANDOM_PER_OPERATION set the budget; FUZZ_REPORT=<file> writes every violation as JSON.
 */
const SEED = process.env.FUZZ_SEED === 'random' ? Date.now() % 2 ** 31 : Number(process.env.FUZZ_SEED ?? 20_261_122)
if (!Number.isInteger(SEED)) throw new Error(`FUZZ_SEED must be an integer or 'random', not ${process.env.FUZZ_SEED}`)
const RANDOM_PER_OPERATION = Number(process.env.FUZZ_RANDOM_PER_OPERATION ?? 6)
/** How many of the catalogue's cases each operation gets (FUZZ_CASES_PER_OPERATION=all sends every one, about 8,000 requests). */
const CASES_PER_OPERATION = process.env.FUZZ_CASES_PER_OPERATION === 'all' ? Infinity : Number(process.env.FUZZ_CASES_PER_OPERATION ?? 20)
const MIN_REQUESTS = 1_500
const SNAKE_CASE = /^[a-z][a-z0-9_]*$/
const T0 = '2026-01-10T09:00:00.000Z'
const FEB10 = '2026-02-10T09:00:00.000Z'

interface FuzzCase extends RequestParts {
  category: string
  label: string
}

type Credentials = { admin: string; portal: () => Promise<string> | string; clock: string }

describe(`fuzzing every operation of the OpenAPI document (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, { timeout: 180_000 }, () => {
  let t: TestApp
  let shop: StoreWithKey
  let clockShop: StoreWithKey
  let doc: any
  let ctx: FuzzContext
  let portalToken: string
  let subscriberId: string

  let setupSeconds = 0
  before(async () => {
    const setupStarted = performance.now()
    t = await buildTestApp({
      env: {
        // The fuzzer sends thousands of requests from one address; the limits have tests of their own.
        RATE_LIMIT_MAX: '1000000',
        MAGIC_LINK_MAX_PER_EMAIL: '1000000',
        MAGIC_LINK_MAX_PER_ADDRESS: '1000000',
        // Webhook URLs are checked without DNS: only loopback traffic.
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      },
    })
    const served = await call(t.app, { method: 'GET', url: '/api/v1/openapi.json' })
    assert.equal(served.statusCode, 200)
    doc = served.json

    // One store with a product, two plans (one b2b), two subscriptions renewed once (so charges exist),
    // a change request, a webhook endpoint and events; a second store whose clock the fuzzer may move.
    shop = await createStoreWithKey(t.db)
    await t.db.updateTable('stores').set({ test_clock_now: new Date(T0) }).where('id', '=', shop.store.id).execute()
    const product = await createProduct(t.app, shop.auth)
    const plan = await createPlan(t.app, shop.auth, product.id)
    const b2b = await createPlan(t.app, shop.auth, product.id, { name: 'Business', amount: 9000, b2b: true })
    const email = `fuzz-${process.pid}@example.com`
    const subscriptions = await checkoutViaApi(t.app, shop.auth, checkoutInput([plan.id, b2b.id], { email }))
    const advanced = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to: FEB10 } })
    assert.equal(advanced.statusCode, 200, advanced.body)
    const charges = await call(t.app, { method: 'GET', url: '/api/v1/admin/charges', headers: shop.auth })
    assert.ok(charges.json.data.length > 0, 'the renewal made charges')
    subscriberId = subscriptions[0].subscriber_id
    portalToken = (await signInSubscriber(t.app, t.db, shop.store.id, subscriberId)).accessToken
    const b2bSubscription = subscriptions.find((s: any) => s.plan_id === b2b.id)
    const changeRequest = await call(t.app, {
      method: 'POST',
      url: `/api/v1/portal/subscriptions/${b2bSubscription.id}/change-requests`,
      headers: { authorization: `Bearer ${portalToken}` },
      payload: { changes: { quantity: 2 } },
    })
    assert.equal(changeRequest.statusCode, 201, changeRequest.body)
    const webhook = await call(t.app, {
      method: 'POST',
      url: '/api/v1/admin/webhook-subscriptions',
      headers: shop.auth,
      payload: { url: 'http://127.0.0.1:9/hooks', event_types: ['subscription.created'] },
    })
    assert.equal(webhook.statusCode, 201, webhook.body)
    const discount = await call(t.app, { method: 'POST', url: '/api/v1/admin/discounts', headers: shop.auth, payload: { code: 'FUZZ10', type: 'percentage', value: 10, duration: 'forever' } })
    assert.equal(discount.statusCode, 201, discount.body)
    const addOnProduct = await createProduct(t.app, shop.auth, { name: 'Add-on', one_time_price: { amount: 300, currency: 'USD' } })
    const onetime = await call(t.app, { method: 'POST', url: `/api/v1/admin/subscriptions/${subscriptions[0].id}/onetimes`, headers: shop.auth, payload: { product_id: addOnProduct.id, quantity: 1 } })
    assert.equal(onetime.statusCode, 201, onetime.body)
    const events = await call(t.app, { method: 'GET', url: '/api/v1/admin/events', headers: shop.auth })
    clockShop = await createStoreWithKey(t.db)
    const foreignProduct = await createProduct(t.app, clockShop.auth)

    ctx = {
      ids: {
        prod: [product.id, foreignProduct.id],
        plan: [plan.id, b2b.id],
        sub: subscriptions.map((s: any) => s.id),
        ch: charges.json.data.map((c: any) => c.id),
        cr: [changeRequest.json.id],
        evt: events.json.data.slice(0, 2).map((e: any) => e.id),
        wh: [webhook.json.id],
        cus: [subscriberId],
        disc: [discount.json.id],
        ot: [onetime.json.id],
      },
      strings: {
        store_hash: [shop.store.store_hash],
        platform_product_id: [product.platform_product_id],
        email: [email],
        timezone: ['Europe/Berlin', 'UTC'],
        currency: ['USD'],
        country: ['US'],
        name: ['Fuzz'],
        payment_instrument_id: ['instr_visa_4242'],
      },
    }
    setupSeconds = (performance.now() - setupStarted) / 1000
  })
  after(() => t?.close())

  test(`at least ${MIN_REQUESTS} malformed and boundary requests over every operation`, async (tc) => {
    const operations = orderForState(operationsOf(doc))
    tc.diagnostic(`${operations.length} operations in the served document; seed ${SEED} (FUZZ_SEED=${SEED} replays it); setup ${setupSeconds.toFixed(1)} s`)
    assert.ok(operations.length >= 70, `the document lists ${operations.length} operations`)

    const credentials: Credentials = {
      admin: shop.key,
      // Signing out revokes the session: the logout operation gets a fresh one for every request.
      portal: () => portalToken,
      clock: clockShop.key,
    }
    const violations: Violation[] = []
    const statuses = new Map<number, number>()
    const perOperation = new Map<string, number>()
    const statusesByOperation = new Map<string, Record<number, number>>()
    const trace: Array<{ op: string; label: string; status: number; body: string }> = []
    /** How often each kind of catalogue request was sent, across operations. */
    const sent = new Map<string, number>()
    let requests = 0
    let harnessSkips = 0
    let judgedLines = 0
    const started = performance.now()

    for (const [index, op] of operations.entries()) {
      const cases = [...choose(fixedCases(op, ctx), CASES_PER_OPERATION, SEED + index, sent), ...randomCases(op, ctx, SEED + index, RANDOM_PER_OPERATION)]
      for (const fuzzCase of cases) {
        const request = await toInject(fuzzCase, credentials, op.id === 'logoutPortal' ? () => fresh() : undefined)
        const before = t.logs.length
        let response: Awaited<ReturnType<TestApp['app']['inject']>>
        try {
          response = await t.app.inject(request)
        } catch (error) {
          // light-my-request refusing to build the request (not the service answering): counted, not judged.
          harnessSkips += 1
          tc.diagnostic(`harness could not send [${fuzzCase.label}]: ${(error as Error).message}`)
          continue
        }
        requests += 1
        perOperation.set(op.id, (perOperation.get(op.id) ?? 0) + 1)
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1)
        const byStatus = statusesByOperation.get(op.id) ?? {}
        byStatus[response.statusCode] = (byStatus[response.statusCode] ?? 0) + 1
        statusesByOperation.set(op.id, byStatus)
        if (process.env.FUZZ_TRACE) trace.push({ op: op.id, label: fuzzCase.label, status: response.statusCode, body: response.body.slice(0, 200) })
        violations.push(...judge(op, fuzzCase, request, response, t.logs.slice(before)))
        judgedLines = t.logs.length
      }
    }
    const elapsed = (performance.now() - started) / 1000

    // Afterwards the service still answers its liveness probe.
    const health = await t.app.inject({ method: 'GET', url: '/healthz' })
    if (health.statusCode !== 200) {
      violations.push({ operation: 'GET /healthz', kind: 'healthz-not-200', category: 'after-fuzzing', label: 'after fuzzing', request: 'GET /healthz', status: health.statusCode, body: health.body })
    }
    // Anything logged after the last request (background work) is held to the same rules.
    const tail = t.logs.slice(judgedLines)
    for (const line of tail) for (const v of judgeLogLine(line)) violations.push({ operation: '(background)', category: 'background', label: 'background', request: '', status: 0, body: '', ...v })

    const statusLine = [...statuses].sort((a, b) => a[0] - b[0]).map(([status, n]) => `${status}: ${n}`).join(', ')
    tc.diagnostic(`${requests} requests in ${elapsed.toFixed(1)} s (${Math.round(requests / elapsed)}/s) over ${perOperation.size} operations; statuses ${statusLine}; harness skips ${harnessSkips}`)
    const kinds = new Map<string, number>()
    for (const v of violations) kinds.set(v.kind, (kinds.get(v.kind) ?? 0) + 1)
    tc.diagnostic(`violations: ${violations.length}${kinds.size ? ` (${[...kinds].map(([kind, n]) => `${kind} ${n}`).join(', ')})` : ''}`)
    tc.diagnostic(`${sent.size} kinds of catalogue request, each sent to ${Math.min(...sent.values())}-${Math.max(...sent.values())} operations`)
    if (process.env.FUZZ_REPORT) {
      const report = { seed: SEED, requests, elapsed, statuses: Object.fromEntries(statuses), statusesByOperation: Object.fromEntries(statusesByOperation), kinds: Object.fromEntries(sent), violations, trace }
      writeFileSync(process.env.FUZZ_REPORT, JSON.stringify(report, null, 1))
    }

    assert.ok(requests >= MIN_REQUESTS, `only ${requests} requests were sent`)
    const missed = operations.filter((op) => (perOperation.get(op.id) ?? 0) < 10).map((op) => op.id)
    assert.deepEqual(missed, [], 'every operation got at least 10 requests')
    if (violations.length) assert.fail(summarize(violations, { seed: SEED, requests, examples: 3 }))
  })

  async function fresh(): Promise<string> {
    return (await signInSubscriber(t.app, t.db, shop.store.id, subscriberId)).accessToken
  }

  /** The InjectOptions for a case, with the credential it names. */
  async function toInject(c: FuzzCase, credentials: Credentials, portalOverride?: () => Promise<string>) {
    const { op } = c
    let url = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => c.path[name] ?? '')
    if (c.query) url += `?${c.query}`
    const headers: Record<string, string> = { ...c.headers }
    const own = async (): Promise<string | undefined> => {
      if (op.security === 'admin') return op.path.startsWith('/api/v1/admin/test-clock') ? credentials.clock : credentials.admin
      if (op.security === 'portal') return portalOverride ? portalOverride() : credentials.portal()
      return undefined
    }
    let token: string | undefined
    if (c.auth === 'own') token = await own()
    else if (c.auth === 'bogus') token = op.security === 'portal' ? `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjdXNfMDEifQ.${'A'.repeat(43)}` : `sk_test_${'A'.repeat(43)}`
    else if (c.auth === 'other-kind') token = op.security === 'admin' ? await credentials.portal() : credentials.admin
    if (token !== undefined) headers.authorization = `Bearer ${token}`
    if (typeof c.auth === 'object') headers.authorization = c.auth.authorization
    if (c.body?.contentType !== undefined) headers['content-type'] = c.body.contentType
    return { method: op.method as 'GET', url, headers, ...(c.body ? { payload: c.body.text } : {}) }
  }

  /** Checks one answer and the log lines written while it was made. */
  function judge(op: Operation, c: FuzzCase, request: { method: string; url: string; headers: Record<string, string>; payload?: string }, response: { statusCode: number; headers: Record<string, any>; body: string }, lines: string[]): Violation[] {
    const out: Violation[] = []
    const expectation = expectationOf(c)
    const status = response.statusCode
    const shown = describeRequest(request.method, request.url, request.headers, request.payload)
    const add = (kind: string, detail?: string) =>
      out.push({ operation: `${op.id} ${op.method} ${op.path}`, kind, category: c.category, label: c.label, request: shown, status, body: response.body, ...(detail ? { detail } : {}) })
    let json: any
    try {
      json = JSON.parse(response.body)
    } catch {
      json = undefined
    }
    const logged = lines.flatMap(judgeLogLine)

    if (status >= 500) add('5xx', logged.find((v) => v.kind === 'error-log')?.detail)
    if (status >= 400 && status < 600) {
      const type = String(response.headers['content-type'] ?? '')
      if (!type.startsWith('application/problem+json')) add('not-problem-json', type || 'no content type')
      else if (typeof json?.code !== 'string' || !SNAKE_CASE.test(json.code)) add('bad-code', `code ${JSON.stringify(json?.code)}`)
      else {
        if (json.status !== status) add('status-mismatch', `body status ${json.status}`)
        const listed = (ERROR_STATUS as Record<string, number>)[json.code]
        if (listed === undefined) add('code-not-in-closed-list', json.code)
        else if (listed !== status) add('code-status-mismatch', `${json.code} is ${listed} in the closed list`)
      }
    }
    if (status < 400) {
      if (expectation.card) add('card-accepted')
      else if (expectation.reasons.length) add('accepted-malformed', `must be refused: ${expectation.reasons.join('; ')}`)
    } else if (status < 500 && expectation.reasons.length && typeof json?.code === 'string' && !expectation.codes.has(json.code)) {
      add('unexpected-code', `${json.code}; expected ${[...expectation.codes].filter((code) => code !== 'rate_limited').join('|')} (${expectation.reasons.join('; ')})`)
    }
    // A refusal names where a card number was, never what (docs/contract.md, Card data); no answer repeats one.
    const echoed = cardDigitsIn(`${response.body} ${JSON.stringify(response.headers)}`)
    if (echoed) add('card-echoed', `${echoed.slice(0, 4)}… in the answer`)
    for (const v of logged) if (!(v.kind === 'error-log' && status >= 500)) add(v.kind, v.detail)
    return out
  }
})

/** What a log line must never be: an unhandled error (level 50+, 'request failed', a stack) or card digits. */
function judgeLogLine(line: string): Array<{ kind: string; detail: string }> {
  const out: Array<{ kind: string; detail: string }> = []
  let entry: any
  try {
    entry = JSON.parse(line)
  } catch {
    entry = {}
  }
  if ((typeof entry.level === 'number' && entry.level >= 50) || line.includes('request failed') || /"stack":|\\n\s+at /.test(line)) {
    out.push({ kind: 'error-log', detail: `level ${entry.level} ${entry.msg ?? ''}: ${String(entry.err?.message ?? '').slice(0, 160)}` })
  }
  const digits = cardDigitsIn(line)
  if (digits) {
    const where = Object.entries(flatten(entry)).filter(([, value]) => cardDigitsIn(value)).map(([path]) => path)
    out.push({ kind: 'card-in-log', detail: `${digits.slice(0, 4)}… in ${where.join(', ') || 'the line'} (msg: ${String(entry.msg ?? '').slice(0, 60)})` })
  }
  return out
}

function flatten(value: unknown, path = '', out: Record<string, string> = {}): Record<string, string> {
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) flatten(child, `${path}.${key}`, out)
  } else if (value !== undefined) out[path.slice(1)] = String(value)
  return out
}

/**
 * `budget` of an operation's catalogue cases: 'valid' and 'auth:none' always, then one case at a time
 * from the kind sent least so far (ties in a seeded order), so every kind reaches many operations.
 */
function choose(cases: FuzzCase[], budget: number, seed: number, sent: Map<string, number>): FuzzCase[] {
  const count = (category: string) => sent.get(category) ?? 0
  const chosen: FuzzCase[] = []
  const take = (c: FuzzCase) => {
    chosen.push(c)
    sent.set(c.category, count(c.category) + 1)
  }
  if (cases.length <= budget) {
    cases.forEach(take)
    return chosen
  }
  const [shuffled] = fc.sample(fc.shuffledSubarray(cases, { minLength: cases.length, maxLength: cases.length }), { seed, numRuns: 1 })
  const queues = new Map<string, FuzzCase[]>()
  for (const c of shuffled!) queues.set(c.category, [...(queues.get(c.category) ?? []), c])
  for (const category of ['valid', 'auth:none']) {
    const first = queues.get(category)?.shift()
    if (first) take(first)
  }
  while (chosen.length < budget) {
    let best: string | undefined
    for (const [category, queue] of queues) if (queue.length && (best === undefined || count(category) < count(best))) best = category
    if (best === undefined) break
    take(queues.get(best)!.shift()!)
  }
  return chosen
}

/** Document order, except that what ends a resource's useful life goes last: cancels, deletes, sign-out. */
function orderForState(operations: Operation[]): Operation[] {
  const rank = (op: Operation) => (op.id === 'logoutPortal' ? 3 : op.method === 'DELETE' ? 2 : /^cancel/.test(op.id) ? 1 : 0)
  return [...operations].sort((a, b) => rank(a) - rank(b))
}

// ---------------------------------------------------------------------------------------------
// The cases

const UNIQUE = '{n}'
let unique = 0
// Values that must be new in every body (an order id, a product's platform id) are written `{n}` and numbered here.
const fresh = (text: string) => text.replaceAll(UNIQUE, () => `${process.pid}-${++unique}`)
const json = (value: unknown, contentType: string | undefined = 'application/json') => ({ text: fresh(serialize(value)), contentType })
const raw = (text: string, contentType: string | undefined = 'application/json') => ({ text: fresh(text), contentType })
const deepArray = (depth: number) => new RawJson(`${'['.repeat(depth)}${']'.repeat(depth)}`)
const deepObject = (depth: number) => new RawJson(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`)
const enc = encodeLoose

/** Body fields whose valid values must not repeat: the same order or product id again is a conflict, not a new resource. */
const FRESH_IN_BODIES = { platform_order_id: [`fz-order-${UNIQUE}`], platform_product_id: [`fz-${UNIQUE}`] }

function baseParts(op: Operation, ctx: FuzzContext): RequestParts {
  const path = Object.fromEntries(op.pathParams.map((p) => [p.name, enc(String(exampleValue(p.schema, ctx, p.name)))]))
  const query = op.query
    .filter((p) => p.required && p.schema.default === undefined)
    .map((p) => `${p.name}=${enc(String(exampleValue(p.schema, ctx, p.name)))}`)
    .join('&')
  return { op, auth: 'own', path, query, headers: {}, ...(op.body ? { body: json(exampleValue(op.body, bodyContext(ctx))) } : {}) }
}

function bodyContext(ctx: FuzzContext): FuzzContext {
  return { ...ctx, strings: { ...ctx.strings, ...FRESH_IN_BODIES } }
}

/** The deterministic catalogue: the same malformed and boundary requests for every operation they apply to. */
function fixedCases(op: Operation, ctx: FuzzContext): FuzzCase[] {
  const base = baseParts(op, ctx)
  const out: FuzzCase[] = []
  const add = (category: string, detail: string, change: Partial<RequestParts>) =>
    out.push({ ...base, ...change, category, label: detail ? `${category} ${detail}` : category })

  add('valid', '', {})
  if (op.body) add('valid-maximal', '', { body: json(maximalValue(op.body, bodyContext(ctx))) })

  // Credentials.
  if (op.security !== 'none') {
    add('auth:none', '', { auth: 'none' })
    add('auth:bogus', '', { auth: 'bogus' })
    add('auth:other-kind', '', { auth: 'other-kind' })
  } else add('auth:irrelevant-admin-key', '', { auth: 'other-kind' })
  const jwtNone = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: ctx.ids.cus?.[0], aud: 'portal' })).toString('base64url')}.`
  for (const [label, authorization] of [
    ['bearer-without-token', 'Bearer'],
    ['basic', 'Basic Zm9vOmJhcg=='],
    ['bearer-10k', `Bearer ${'a'.repeat(10_000)}`],
    ['bearer-nul', 'Bearer sk_test_\u0000abc'],
    ['bearer-card', `Bearer ${CARDS.plain}`],
    ['jwt-alg-none', `Bearer ${jwtNone}`],
  ] as const) {
    add(`auth:${label}`, '', { auth: { authorization } })
  }

  // Headers: request ids and idempotency keys holding card numbers, lengths at and past the bounds.
  for (const [label, value] of Object.entries(CARDS)) add(`x-request-id:card-${label}`, value, { headers: { 'x-request-id': value }, card: true })
  for (const [label, value] of [
    ['128-chars', 'r'.repeat(128)],
    ['129-chars', 'r'.repeat(129)],
    ['nul', 'req\u0000id'],
    ['unicode', 'ü-✓-😀'],
    ['crlf', 'a\r\nb'],
  ] as const) {
    add(`x-request-id:${label}`, '', { headers: { 'x-request-id': value } })
  }
  for (const [label, value] of [
    ['v2', 'v2'],
    ['upper-V1', 'V1'],
    ['empty', ''],
    ['1k-chars', 'v'.repeat(1000)],
    ['spaced-v1', ' v1 '],
    ['1', '1'],
  ] as const) {
    add(`accept-version:${label}`, JSON.stringify(value.slice(0, 10)), { headers: { 'accept-version': value } })
  }
  if (op.method === 'POST') {
    for (const [label, value] of Object.entries(CARDS)) add(`idempotency-key:card-${label}`, value, { headers: { 'idempotency-key': value }, card: true })
    for (const [label, value] of [
      ['empty', ''],
      ['255-chars', `${op.id}-`.padEnd(255, 'k')],
      ['256-chars', 'k'.repeat(256)],
      ['10k-chars', 'k'.repeat(10_000)],
      ['nul', 'key\u0000nul'],
      ['unicode', 'ключ-✓-😀'],
    ] as const) {
      add(`idempotency-key:${label}`, '', { headers: { 'idempotency-key': value } })
    }
  }

  // Path parameters of every shape.
  for (const param of op.pathParams) {
    const real = String(exampleValue(param.schema, ctx, param.name))
    const prefix = idPrefixOf(param.schema)
    const values: Array<[string, string, boolean?]> = [
      ['lowercase', enc(real.toLowerCase())],
      ['300-chars', 'p'.repeat(300)],
      ['10k-chars', 'p'.repeat(10_000)],
      ['nul-raw', `${real.slice(0, 6)}\u0000${real.slice(6)}`],
      ['nul-escaped', `${enc(real)}%00`],
      ['bad-escape-%', '%'],
      ['bad-escape-%zz', '%zz'],
      ['bad-escape-truncated-utf8', '%E0%A4%A'],
      ['bad-escape-overlong-utf8', '%C0%AF'],
      ['bad-escape-surrogate', '%ED%A0%80'],
      ['bad-escape-%FF', `${enc(real)}%FF`],
      ['unicode-raw', `${real.slice(0, -2)}ü✓`],
      ['emoji-raw', '😀😀😀'],
      ['unicode-escaped', enc('ｐｒｏｄ_０１ＪＤ２Ｙ５Ｔ１Ｐ８Ｑ０Ｗ９ＫＺ３Ｍ６Ｎ４Ｒ７ＢＣ')],
      ['bidi-escaped', enc(`\u202e${real}`)],
      ['dots', '..'],
      ['dots-escaped', '%2e%2e'],
      ['slash-escaped', `a%2F${enc(real)}`],
      ['space-suffix', `${enc(real)}%20`],
      ['sql', enc("' OR 1=1--")],
      ['card-plain', CARDS.plain, true],
      ['card-with-cvv', enc(CARDS.withCvv), true],
      ['card-dashed', CARDS.dashed, true],
      ['card-full-width', enc(CARDS.fullWidth), true],
      ['card-percent-digits', [...CARDS.plain].map((digit) => `%3${digit}`).join(''), true],
    ]
    if (prefix) {
      const other = Object.entries(ctx.ids).find(([key]) => key !== prefix)?.[1]?.[0] ?? `x_${UNKNOWN_ULID}`
      values.push(
        ['unknown-id', `${prefix}_${UNKNOWN_ULID}`],
        ['other-type-id', other],
        ['bad-crockford', `${prefix}_ILOU${UNKNOWN_ULID.slice(4)}`],
        ['27-chars', `${real}0`],
        ['25-chars', real.slice(0, -1)],
      )
      if ((ctx.ids[prefix]?.length ?? 0) > 1) values.push(['second-real-id', ctx.ids[prefix]![1]!])
    }
    for (const [label, value, card] of values) add(`path:${label}`, `${param.name}=${value.slice(0, 40)}`, { path: { ...base.path, [param.name]: value }, ...(card ? { card: true } : {}) })
  }

  // Query strings.
  if (op.query.length) {
    const q = (extra: string) => [base.query, extra].filter(Boolean).join('&')
    const declared = new Set(op.query.map((p) => p.name))
    if (declared.has('limit')) {
      for (const value of ['0', '-1', '1e309', '1e20', 'NaN', '', 'x'.repeat(10_000), '1.5', '101', '100', '1', '0x10', '%205', 'Infinity', '1e2', '-0', '%00', '99999999999999999999', '%']) {
        add(`query:limit=${value.length > 20 ? `x×${value.length}` : value}`, '', { query: q(`limit=${value}`) })
      }
      add('query:limit-twice', '', { query: q('limit=1&limit=2') })
      add('query:limit-card', '', { query: q(`limit=${CARDS.plain}`), card: true })
    }
    if (declared.has('cursor')) {
      const cursor = (text: string) => Buffer.from(text).toString('base64url')
      for (const [label, value] of [
        ['garbage', 'abc'],
        ['empty', ''],
        ['201-chars', 'x'.repeat(201)],
        ['10k-chars', 'x'.repeat(10_000)],
        ['nul', '%00'],
        ['bad-escape', '%E0%A4%A'],
        ['wrong-version', cursor('v2:prod_x')],
        ['unicode-inside', cursor('v1:é')],
        ['crafted-unknown-id', cursor(`v1:prod_${UNKNOWN_ULID}`)],
        ['crafted-minimal', cursor('v1:zz_0')],
        ['crafted-long', cursor(`v1:${'a'.repeat(40)}_${'Z'.repeat(100)}`)],
      ] as const) {
        add(`query:cursor-${label}`, '', { query: q(`cursor=${value}`) })
      }
      add('query:cursor-card', '', { query: q(`cursor=${CARDS.plain}`), card: true })
    }
    for (const param of op.query.filter((p) => !['limit', 'cursor'].includes(p.name))) {
      const others = base.query.split('&').filter((pair) => pair && !pair.startsWith(`${param.name}=`)).join('&')
      const with_ = (value: string) => [others, `${param.name}=${value}`].filter(Boolean).join('&')
      for (const [label, value] of [
        ['nul', '%00'],
        ['nul-inside', `a%00${enc(String(exampleValue(param.schema, ctx, param.name)))}`],
        ['10k-chars', 'q'.repeat(10_000)],
        ['empty', ''],
        ['unicode-raw', 'ü✓😀'],
        ['controls', enc('\u0001\u001b\u007f')],
        ['lone-surrogate-escape', '%ED%A0%80'],
        ['bad-escape', '%E0%A4%A'],
        ['twice', `${enc(String(exampleValue(param.schema, ctx, param.name)))}&${param.name}=x`],
        ...(param.schema.format === 'date-time' ? DATE_TIME_EDGES.map(([label, value]) => [label, enc(value)] as const) : []),
      ] as const) {
        add(`query:${label}`, `${param.name}`, { query: with_(value) })
      }
      for (const [label, value] of Object.entries(CARDS)) add(`query:card-${label}`, param.name, { query: with_(enc(value)), card: true })
      if (param.required && param.schema.default === undefined) add('query:missing-required', param.name, { query: others })
    }
    for (const [label, extra] of [
      ['unknown-param', 'colour=red'],
      ['proto-param', '__proto__=x'],
      ['constructor-param', 'constructor=x&prototype=y'],
      ['bracket-param', 'a[b]=c'],
      ['nul-key', '%00=1'],
      ['100k-param', `pad=${'x'.repeat(100_000)}`],
    ] as const) {
      add(`query:${label}`, '', { query: q(extra) })
    }
    add('query:card-key', '', { query: q(`${CARDS.plain}=1`), card: true })
  }

  // Bodies.
  if (op.method === 'POST' || op.method === 'PATCH') {
    const valid = op.body ? exampleValue(op.body, bodyContext(ctx)) : {}
    const bodies: Array<[string, { text: string; contentType: string | undefined } | undefined, boolean?]> = [
      ['no-body', undefined],
      ['empty-object', json({})],
      ['array', json([])],
      ['array-of-valid', json([valid])],
      ['null', raw('null')],
      ['number', raw('1')],
      ['string', raw('"x"')],
      ['empty', raw('')],
      ['whitespace', raw('  \n ')],
      ['invalid-json-truncated', raw('{"a":')],
      ['invalid-json-bare-key', raw('{a:1}')],
      ['invalid-json-single-quotes', raw("{'a':1}")],
      ['invalid-json-trailing-comma', raw('{"a":1,}')],
      ['invalid-json-nan', raw('{"a":NaN}')],
      ['invalid-json-trailing-garbage', raw('{} x')],
      ['invalid-json-nul-byte', raw('\u0000')],
      ['invalid-json-raw-nul-in-string', raw('{"a":"\u0000"}')],
      ['bom', raw(`\ufeff${serialize(valid)}`)],
      ['duplicate-keys', raw(serialize(valid).replace(/^\{/, '{"dup":1,"dup":2,'))],
      ['proto', raw(serialize(valid).replace(/^\{/, '{"__proto__":{"polluted":1},'))],
      ['constructor', raw(serialize(valid).replace(/^\{/, '{"constructor":{"prototype":{"polluted":1}},'))],
      ['deep-array-10000', json(deepArray(10_000))],
      ['deep-object-10000', json(deepObject(10_000))],
      [`depth-${MAX_JSON_DEPTH + 1}`, json(deepArray(MAX_JSON_DEPTH + 1))],
      [`depth-${MAX_JSON_DEPTH}`, json(deepArray(MAX_JSON_DEPTH))],
      ['over-1MiB', raw(`{"pad":"${'x'.repeat(1024 * 1024)}"}`)],
      ['card-key', json({ ...(valid as object), [CARDS.plain]: 1 }), true],
      ['card-integer', json({ ...(valid as object), n: 4111111111111111 }), true],
      ['card-deep', json({ ...(valid as object), a: [{ b: [`x ${CARDS.withCvv}`] }] }), true],
    ]
    for (const [label, type] of [
      ['text-plain', 'text/plain'],
      ['form', 'application/x-www-form-urlencoded'],
      ['multipart', 'multipart/form-data; boundary=x'],
      ['xml', 'application/xml'],
      ['jsonx', 'application/jsonx'],
      ['vnd-json', 'application/vnd.api+json'],
      ['upper-case-json', 'APPLICATION/JSON'],
      ['json-utf8', 'application/json; charset=utf-8'],
      ['json-latin1', 'application/json; charset=latin1'],
      ['json-utf16', 'application/json; charset=utf-16'],
      ['no-content-type', undefined],
    ] as const) {
      bodies.push([`content-type:${label}`, raw(serialize(valid), type)])
    }
    for (const [label, body, card] of bodies) add(label.startsWith('content-type') ? label : `body:${label}`, '', { body, ...(card ? { card: true } : {}) })

    if (op.body) {
      // One field at a time: wrong types, one past each bound, hostile strings, card numbers, deep nesting.
      const cardLabels = Object.keys(CARDS) as Array<keyof typeof CARDS>
      let rotation = 0
      const visit = (schema: any, path: string[], around: unknown) => {
        for (const [label, value] of invalidValues(schema, bodyContext(ctx), path.at(-1))) {
          if (!KEEP_PER_FIELD.has(label) && !(path.length === 0)) continue
          add(`body-field:${label}`, `/${path.join('/')}`, { body: json(setPath(around, path, value)) })
        }
        if (path.length === 0) return
        if (schema.type === 'string' || schema.anyOf) {
          const card = cardLabels[rotation++ % cardLabels.length]!
          add(`body-field:card-${card}`, `/${path.join('/')}`, { body: json(setPath(around, path, CARDS[card])), card: true })
          add('body-field:deep-array', `/${path.join('/')}`, { body: json(setPath(around, path, deepArray(10_000))) })
        }
      }
      visit(op.body, [], valid)
      for (const [name, child] of Object.entries<any>(op.body.properties ?? {})) {
        visit(child, [name], valid)
        if (child.type !== 'object') continue
        // A nested field is broken inside an otherwise valid parent, so the one mistake is the only one.
        const parent = setPath(valid, [name], exampleValue(child, bodyContext(ctx), name))
        for (const [inner, grandchild] of Object.entries<any>(child.properties ?? {})) visit(grandchild, [name, inner], parent)
      }
    }
  } else if (op.method === 'DELETE') {
    add('body:json-on-delete', '', { body: json({ a: 1 }) })
  }
  return out
}

/** The per-field mutations the catalogue sends (the rest of invalidValues goes to the random part). */
const KEEP_PER_FIELD = new Set([...DATE_TIME_EDGES.map(([label]) => label), 'null', 'number-for-string', 'one-too-long', 'empty', 'nul', 'lone-surrogate', 'controls', 'pattern-miss', 'not-email', 'not-date-time', 'not-uri', 'below-minimum', 'above-maximum', '1e309', '1e20', '-1', '1.5', 'string', 'array-for-object', 'string-for-array', 'too-many-items', 'repeated-items', 'not-in-enum', 'other-prefix', 'string-for-bool', 'extra-field'])

function setPath(value: unknown, path: string[], replacement: unknown): unknown {
  if (path.length === 0) return replacement
  const [head, ...rest] = path
  const object = value !== null && typeof value === 'object' && !Array.isArray(value) ? { ...(value as Record<string, unknown>) } : {}
  object[head!] = setPath(object[head!], rest, replacement)
  return object
}

/** Seeded random requests: valid values from the schemas with one part broken or stressed. */
function randomCases(op: Operation, ctx: FuzzContext, seed: number, count: number): FuzzCase[] {
  const base = baseParts(op, ctx)
  const auth = fc.oneof(
    { weight: 6, arbitrary: fc.constant('own' as const) },
    { weight: 1, arbitrary: fc.constantFrom('none' as const, 'bogus' as const, 'other-kind' as const) },
  )
  const hostileText = fc.oneof(
    fc.constantFrom(...HOSTILE_STRINGS.map(([, value]) => value)),
    fc.string({ unit: 'binary', maxLength: 80 }),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 80 }),
    fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 300 }),
  )
  const variants: Array<fc.Arbitrary<Partial<FuzzCase>>> = []
  if (op.body) {
    variants.push(mutatedBodyArb(op.body, bodyContext(ctx)).map(({ label, value }) => ({ category: 'random:body', label: `random:body ${label}`, body: json(value) })))
    variants.push(validArb(op.body, bodyContext(ctx)).map((value) => ({ category: 'random:valid-body', label: 'random:valid-body', body: json(value) })))
  }
  for (const param of op.pathParams) {
    variants.push(
      fc
        .oneof(
          hostileText.map(enc),
          fc.string({ unit: 'grapheme', minLength: 1, maxLength: 60 }).filter((text) => !/[/?#%]/.test(text) && text !== '.' && text !== '..'),
          validArb(param.schema, ctx, param.name).map((value) => enc(String(value))),
        )
        // An empty or dot segment is another URL (the list route, the parent), not a malformed id.
        .filter((value) => !['', '.', '..'].includes(value.replace(/%2e/gi, '.')))
        .map((value) => ({ category: 'random:path', label: `random:path ${param.name}=${value.slice(0, 60)}`, path: { ...base.path, [param.name]: value } })),
    )
  }
  if (op.query.length) {
    variants.push(
      fc
        .tuple(fc.constantFrom(...op.query), fc.oneof(hostileText, fc.jsonValue().map((value) => JSON.stringify(value) ?? '')))
        .map(([param, value]) => {
          const others = base.query.split('&').filter((pair) => pair && !pair.startsWith(`${param.name}=`))
          return { category: 'random:query', label: `random:query ${param.name}=${value.slice(0, 60)}`, query: [...others, `${param.name}=${enc(value)}`].join('&') }
        }),
      fc
        .record(Object.fromEntries(op.query.map((p) => [p.name, validArb(p.schema, ctx, p.name)])), { requiredKeys: [] })
        .map((values) => {
          const merged = { ...Object.fromEntries(base.query.split('&').filter(Boolean).map((pair) => pair.split('=') as [string, string])), ...Object.fromEntries(Object.entries(values).map(([k, v]) => [k, enc(String(v))])) }
          return { category: 'random:valid-query', label: `random:valid-query ${JSON.stringify(values).slice(0, 100)}`, query: Object.entries(merged).map(([k, v]) => `${k}=${v}`).join('&') }
        }),
    )
  }
  variants.push(
    fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 140 }).map((value) => ({ category: 'random:x-request-id', label: `random:x-request-id ${value.slice(0, 40)}`, headers: { 'x-request-id': value } })),
  )
  if (op.method === 'POST') {
    variants.push(hostileText.map((value) => ({ category: 'random:idempotency-key', label: `random:idempotency-key ${JSON.stringify(value).slice(0, 40)}`, headers: { 'idempotency-key': value } })))
  }
  const arb = fc.tuple(auth, fc.oneof(...variants))
  return fc.sample(arb, { seed, numRuns: count }).map(([who, variant]) => ({ ...base, category: 'random', label: 'random', ...variant, auth: who }))
}
