// Magic-link sign-in (docs/contract.md, Magic-link sign-in) end to end: the service, its job runner with the
// real handlers, and a real SMTP server; the link is read from the received email, as a subscriber would.
import assert from 'node:assert/strict'
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
// wall clock: waitFor below polls a running job runner and a real SMTP server.
import { setTimeout as sleep } from 'node:timers/promises'
import { decodeProtectedHeader, jwtVerify } from 'jose'
import { sql } from 'kysely'
import { connectDatabase, type DatabaseHandle } from '../../../src/db/connect.ts'
import type { Db } from '../../../src/db/database.ts'
import { migrateToLatest } from '../../../src/db/migrate.ts'
import { jobHandlersOf } from '../../../src/worker.ts'
import { createJobRunner, type JobRunner } from '../../../src/jobs/runner.ts'
import { fixedClock, type Clock } from '../../../src/lib/clock.ts'
import { sha256Hex } from '../../../src/lib/secrets.ts'
import { createMailer, type Mailer } from '../../../src/lib/mailer.ts'
import { resolveSessionSecret, SendMagicLink } from '../../../src/modules/portal-auth/index.ts'
import { createTestDatabase, onPostgres } from '../../helpers/database.ts'
import { newDataDir } from '../../helpers/data-dir.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
import { startSmtpSink, type ReceivedMessage, type SmtpSink } from '../../helpers/smtp-sink.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { checkout, checkoutBody, closeTestApp, nextEmail } from '../subscriptions/fixtures.ts'
import { assertProblem } from '../../helpers/problem.ts'

const PORTAL_URL = 'http://portal.test'
const JWT_SECRET = 'sign-in-test-secret-0123456789-abcdefghij'
const JWT_ISSUER = 'billing-sign-in-test'
const STORE_NAME = 'Bean & Leaf Coffee'
const LINK = /http:\/\/portal\.test\/login\?token=([A-Za-z0-9_-]+)/
const MINUTE = 60_000
// Generous: the machine may be loaded; every wait polls and returns as soon as it can.
const WAIT_MS = 30_000

type Response = Awaited<ReturnType<typeof call>>

interface Harness {
  t: TestApp
  clock: Clock
  sink: SmtpSink | undefined
  runner: JobRunner
  mailer: Mailer
  shop: StoreWithKey
  planId: string
  close(): Promise<void>
}

/** The service, a job runner with the real sender on a short poll, a real SMTP sink (unless smtp: false) and a shop with one plan. */
async function startHarness({ env = {}, clock = fixedClock(new Date()), smtp = true }: { env?: Record<string, string>; clock?: Clock; smtp?: boolean } = {}): Promise<Harness> {
  const sink = smtp ? await startSmtpSink() : undefined
  // The mailer logs through the app's logger (a mail written to the log is read from there), so it is made
  // once the app is, and handed to the services through this forwarder.
  let made: Mailer | undefined
  const t = await buildTestApp({
    clock,
    env: { PORTAL_URL, JWT_SECRET, JWT_ISSUER, ...(sink ? { SMTP_URL: sink.url } : {}), ...env },
    mailer: { send: (mail) => made!.send(mail), close: () => made?.close() },
    portalUrl: () => PORTAL_URL,
  })
  const mailer = (made = createMailer({ smtpUrl: sink?.url, from: 'Bean & Leaf <no-reply@bean.test>', log: t.app.log }))
  // Only the sign-in sender: other kinds of work checkouts may queue are not what these tests are about.
  const runner = createJobRunner({ db: t.db, handlers: jobHandlersOf(t.services).filter(({ job }) => job === SendMagicLink), log: t.app.log, pollMs: 25 })
  runner.start()
  const shop = await createStoreWithKey(t.db)
  await t.db.updateTable('stores').set({ name: STORE_NAME }).where('id', '=', shop.store.id).execute()
  const product = await createProduct(t.app, shop.auth)
  const plan = await createPlan(t.app, shop.auth, product.id)
  return {
    t,
    clock,
    sink,
    runner,
    mailer,
    shop,
    planId: plan.id,
    async close() {
      await runner.stop()
      mailer.close()
      await closeTestApp(t)
      await sink?.close()
    },
  }
}

/** A subscriber of the harness's shop, made by a checkout through the admin route. */
async function createSubscriber(h: Harness, email = nextEmail('portal')): Promise<{ id: string; email: string }> {
  const [subscription] = await checkout(h.t.app, h.shop.auth, checkoutBody(h.planId, { email }))
  return { id: subscription.subscriber_id, email: email.toLowerCase() }
}

let addressCounter = 0
/** A client address of its own, so the per-address limit of one test never reaches another. */
function freshAddress(): string {
  addressCounter += 1
  return `10.${(addressCounter >> 16) & 255}.${(addressCounter >> 8) & 255}.${addressCounter & 255}`
}

function requestLink(h: Harness, payload: Record<string, unknown>, remoteAddress = freshAddress()): Promise<Response> {
  return call(h.t.app, { method: 'POST', url: '/api/v1/portal/auth/request-link', payload, remoteAddress })
}

function verify(h: Harness, token: string): Promise<Response> {
  return call(h.t.app, { method: 'POST', url: '/api/v1/portal/auth/verify', payload: { token } })
}

function me(h: Pick<Harness, 't'>, accessToken: string): Promise<Response> {
  return call(h.t.app, { method: 'GET', url: '/api/v1/portal/me', headers: { authorization: `Bearer ${accessToken}` } })
}

function logout(h: Harness, accessToken: string): Promise<Response> {
  return call(h.t.app, { method: 'POST', url: '/api/v1/portal/auth/logout', headers: { authorization: `Bearer ${accessToken}` } })
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = WAIT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    // wall clock: the job runner runs on its own poll loop and mails a real SMTP server; polled until done, with a deadline.
    await sleep(25)
  }
}

function pendingSendJobs(db: Db) {
  return db.selectFrom('jobs').selectAll().where('kind', '=', SendMagicLink.kind).where('failed_at', 'is', null).execute()
}

/** Until every queued sign-in job has run to completion (none pending, none given up on). */
async function waitForSendJobsDone(h: Harness): Promise<void> {
  await waitFor('the sign-in jobs to finish', async () => (await pendingSendJobs(h.t.db)).length === 0)
  const failed = await h.t.db.selectFrom('jobs').select(['id', 'last_error']).where('kind', '=', SendMagicLink.kind).where('failed_at', 'is not', null).execute()
  assert.deepEqual(failed, [], 'no sign-in job may have given up')
}

function tokenFrom(message: ReceivedMessage): string {
  const match = LINK.exec(message.parsed.text ?? '')
  assert.ok(match, `no ${PORTAL_URL}/login?token=... link in the text part: ${message.parsed.text}`)
  return match[1]!
}

/** Asks for a link the way the portal does and reads the token from the email that arrives. */
async function tokenByEmail(h: Harness, email: string): Promise<string> {
  const response = await requestLink(h, { email, store_hash: h.shop.store.store_hash })
  assert.equal(response.statusCode, 202, response.body)
  return tokenFrom(await h.sink!.waitForMessage(email, WAIT_MS))
}

/** The whole sign-in: link by email, then verify; answers the access token. */
async function signIn(h: Harness, email: string): Promise<string> {
  const response = await verify(h, await tokenByEmail(h, email))
  assert.equal(response.statusCode, 200, response.body)
  return response.json.access_token
}

function tokenRows(db: Db, storeId: string) {
  return db.selectFrom('magic_link_tokens').selectAll().where('store_id', '=', storeId).execute()
}

/** Every table whose rows, as text, contain `needle` anywhere. */
async function tablesContaining(db: Db, needle: string): Promise<string[]> {
  const { rows: tables } = await sql<{ table_name: string }>`
    select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db)
  assert.ok(tables.some((row) => row.table_name === 'magic_link_tokens'), 'the table listing must include magic_link_tokens')
  const hits: string[] = []
  for (const { table_name } of tables) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table_name)} as r where strpos(r::text, ${needle}) > 0`.execute(db)
    if (Number(rows[0]!.n) > 0) hits.push(table_name)
  }
  return hits
}

/** Headers that must match between two answers that may not differ: all but the per-request ones. */
function comparableHeaders(response: Response): Record<string, unknown> {
  const { 'x-request-id': _id, date: _date, ...rest } = response.headers
  return rest
}

describe('portal sign-in over a real SMTP server', () => {
  let h: Harness
  const clock = fixedClock(new Date())

  before(async () => {
    h = await startHarness({ clock })
  })
  after(() => h.close())

  test('a known email gets a link by email; verify answers a 15-minute HS256 session that works on /me', async () => {
    const subscriber = await createSubscriber(h)
    // Addresses are matched without regard to case.
    const response = await requestLink(h, { email: subscriber.email.toUpperCase(), store_hash: h.shop.store.store_hash })
    assert.equal(response.statusCode, 202)
    assert.equal(response.body, '{"status":"sent"}')

    const message = await h.sink!.waitForMessage(subscriber.email, WAIT_MS)
    assert.equal(message.parsed.to && !Array.isArray(message.parsed.to) ? message.parsed.to.text : undefined, subscriber.email)
    assert.match(message.parsed.subject ?? '', /Bean & Leaf Coffee/)
    assert.ok(message.parsed.text, 'a plain-text part')
    assert.ok(typeof message.parsed.html === 'string' && message.parsed.html.length > 0, 'an HTML part')
    assert.match(message.raw, /multipart\/alternative/i)
    assert.ok(message.parsed.text.includes(STORE_NAME), 'the text names the store')
    assert.ok(message.parsed.html.includes('Bean &amp; Leaf Coffee'), 'the HTML names the store, escaped')
    const token = tokenFrom(message)
    // The link carries the store as well (the page it opens names it), `&` escaped in the HTML.
    assert.ok(message.parsed.html.includes(`href="${PORTAL_URL}/login?token=${token}&amp;store=`), 'the HTML links to the same token')

    // >= 128 bits: at least 22 base64url characters, decoding to at least 16 bytes.
    assert.ok(token.length >= 22, `token too short: ${token.length} characters`)
    assert.ok(Buffer.from(token, 'base64url').length >= 16)

    // Stored only as its hash.
    const rows = await tokenRows(h.t.db, h.shop.store.id)
    const row = rows.find((r) => r.subscriber_id === subscriber.id)
    assert.ok(row, 'a token row for the subscriber')
    assert.equal(row.token_hash, sha256Hex(token))
    assert.equal(row.used_at, null)
    assert.equal(row.expires_at.getTime(), clock.now().getTime() + 15 * MINUTE)
    assert.deepEqual(await tablesContaining(h.t.db, token), [], 'the raw token must not be stored anywhere')
    assert.ok((await tablesContaining(h.t.db, sha256Hex(token))).includes('magic_link_tokens'), 'the search itself works')

    const verified = await verify(h, token)
    assert.equal(verified.statusCode, 200, verified.body)
    assert.deepEqual(Object.keys(verified.json).sort(), ['access_token', 'expires_in', 'token_type'])
    assert.equal(verified.json.token_type, 'Bearer')
    assert.equal(verified.json.expires_in, 900)

    const jwt: string = verified.json.access_token
    assert.equal(decodeProtectedHeader(jwt).alg, 'HS256')
    const { payload } = await jwtVerify(jwt, new TextEncoder().encode(JWT_SECRET), {
      algorithms: ['HS256'],
      issuer: JWT_ISSUER,
      audience: 'portal',
      currentDate: clock.now(),
    })
    assert.equal(payload.sub, subscriber.id)
    assert.equal(payload.store, h.shop.store.id)
    assert.equal(payload.iat, Math.floor(clock.now().getTime() / 1000))
    assert.equal(payload.exp, payload.iat! + 900)
    assert.equal(typeof payload.jti, 'string')
    assert.ok(payload.jti!.length >= 16)

    const profile = await me(h, jwt)
    assert.equal(profile.statusCode, 200, profile.body)
    assert.equal(profile.json.id, subscriber.id)
    assert.equal(profile.json.email, subscriber.email)
  })

  test('known and unknown emails and stores get byte-identical answers; an unknown email gets no email and no token', async () => {
    const subscriber = await createSubscriber(h)
    const unknownEmail = nextEmail('nobody')
    const tokensBefore = (await tokenRows(h.t.db, h.shop.store.id)).length
    const messagesBefore = h.sink!.messages.length

    // Each from an address of its own, so the per-address counters (and their headers) start level.
    const known = await requestLink(h, { email: subscriber.email, store_hash: h.shop.store.store_hash })
    const unknown = await requestLink(h, { email: unknownEmail, store_hash: h.shop.store.store_hash })
    const unknownStore = await requestLink(h, { email: subscriber.email, store_hash: 'no-such-store' })

    for (const other of [unknown, unknownStore]) {
      assert.equal(other.statusCode, known.statusCode)
      assert.equal(other.body, known.body)
      assert.deepEqual(comparableHeaders(other), comparableHeaders(known))
    }
    assert.equal(known.statusCode, 202)

    await waitForSendJobsDone(h)
    await h.sink!.waitForMessage(subscriber.email, WAIT_MS)
    assert.equal(h.sink!.messagesTo(unknownEmail).length, 0, 'no email for an unknown address')
    // Only the known email's one message: the unknown store sent nothing either.
    assert.equal(h.sink!.messages.length, messagesBefore + 1)
    assert.equal((await tokenRows(h.t.db, h.shop.store.id)).length, tokensBefore + 1, 'only the known email got a token')
    assert.equal(h.sink!.messagesTo(subscriber.email).length, 1)
  })

  test('a token works once: a second verify is 401 invalid_token', async () => {
    const subscriber = await createSubscriber(h)
    const token = await tokenByEmail(h, subscriber.email)
    const first = await verify(h, token)
    assert.equal(first.statusCode, 200, first.body)
    const second = await verify(h, token)
    assertProblem(second, 401, 'invalid_token')
    assert.equal(second.json.access_token, undefined)
    const unknown = await verify(h, 'A'.repeat(43))
    assertProblem(unknown, 401, 'invalid_token')
  })

  test('two concurrent verifies of one token: exactly one session', async () => {
    const subscriber = await createSubscriber(h)
    for (let round = 0; round < 3; round++) {
      const token = await tokenByEmail(h, subscriber.email)
      const answers = await Promise.all([verify(h, token), verify(h, token), verify(h, token)])
      const statuses = answers.map((a) => a.statusCode).sort()
      assert.deepEqual(statuses, [200, 401, 401], answers.map((a) => a.body).join('\n'))
      for (const answer of answers.filter((a) => a.statusCode === 401)) assertProblem(answer, 401, 'invalid_token')
    }
  })

  test('a token expires after 15 minutes, and a session 15 minutes after it starts', async () => {
    const start = clock.now()
    try {
      const subscriber = await createSubscriber(h)
      const early = await tokenByEmail(h, subscriber.email)
      const late = await tokenByEmail(h, subscriber.email)

      clock.set(new Date(start.getTime() + 15 * MINUTE - 1000))
      const inTime = await verify(h, early)
      assert.equal(inTime.statusCode, 200, `a token is good for 15 minutes: ${inTime.body}`)

      clock.set(new Date(start.getTime() + 15 * MINUTE + 1000))
      assertProblem(await verify(h, late), 401, 'invalid_token')
      const unused = await h.t.db.selectFrom('magic_link_tokens').select('used_at').where('token_hash', '=', sha256Hex(late)).executeTakeFirstOrThrow()
      assert.equal(unused.used_at, null, 'an expired token is refused, not consumed')

      // The session from the early token started at 14:59 and lasts until 29:59.
      const session = inTime.json.access_token
      clock.set(new Date(start.getTime() + 29 * MINUTE))
      assert.equal((await me(h, session)).statusCode, 200)
      clock.set(new Date(start.getTime() + 30 * MINUTE))
      assertProblem(await me(h, session), 401, 'invalid_token')
    } finally {
      clock.set(start)
    }
  })

  test('nothing but POST verify consumes a token', async () => {
    const subscriber = await createSubscriber(h)
    const token = await tokenByEmail(h, subscriber.email)
    const usedAt = async () =>
      (await h.t.db.selectFrom('magic_link_tokens').select('used_at').where('token_hash', '=', sha256Hex(token)).executeTakeFirstOrThrow()).used_at
    // The portal page the link opens: served (200) once `npm run build:web` has run, 404 before. Either
    // way it only shows the page, which posts the token to verify itself; the GET must not consume it.
    const pages = [`/portal/login?token=${token}`]
    const attempts = [
      { method: 'GET' as const, url: `/login?token=${token}` },
      { method: 'GET' as const, url: pages[0]! },
      { method: 'HEAD' as const, url: `/api/v1/portal/auth/verify?token=${token}` },
      { method: 'GET' as const, url: `/api/v1/portal/auth/verify?token=${token}` },
      { method: 'GET' as const, url: `/api/v1/portal/auth/request-link?token=${token}` },
      { method: 'GET' as const, url: `/api/v1/portal/me?token=${token}` },
    ]
    for (const attempt of attempts) {
      const response = await call(h.t.app, attempt)
      const what = `${attempt.method} ${attempt.url} answered ${response.statusCode}`
      if (pages.includes(attempt.url) && response.statusCode === 200) {
        assert.match(String(response.headers['content-type']), /^text\/html/, `${what}: only the portal page`)
        assert.ok(!response.body.includes(token), `${what}: the page does not echo the token`)
      } else if (pages.includes(attempt.url)) {
        assertProblem(response, 404, 'not_found')
      } else {
        assert.ok(response.statusCode >= 400, what)
      }
      assert.equal(response.json?.access_token, undefined, `${what}: no session`)
      assert.equal(await usedAt(), null, `${what}: the token must still be unused`)
    }
    // A token in the Authorization header is not a session either.
    assertProblem(await me(h, token), 401, 'invalid_token')
    // Asking for another link leaves the first one valid.
    await tokenByEmail(h, subscriber.email)

    assert.equal(await usedAt(), null, 'still unused')
    const verified = await verify(h, token)
    assert.equal(verified.statusCode, 200, verified.body)
    assert.notEqual(await usedAt(), null, 'verify is what consumes it')
    assertProblem(await verify(h, token), 401, 'invalid_token')
  })

  test('logout revokes that session only', async () => {
    const subscriber = await createSubscriber(h)
    const first = await signIn(h, subscriber.email)
    const second = await signIn(h, subscriber.email)

    assertProblem(await call(h.t.app, { method: 'POST', url: '/api/v1/portal/auth/logout' }), 401, 'unauthenticated')
    const out = await logout(h, first)
    assert.equal(out.statusCode, 204, out.body)
    assert.equal(out.body, '')

    assertProblem(await me(h, first), 401, 'invalid_token')
    assertProblem(await logout(h, first), 401, 'invalid_token')
    const other = await me(h, second)
    assert.equal(other.statusCode, 200, other.body)
    assert.equal(other.json.id, subscriber.id)

    const { payload } = await jwtVerify(first, new TextEncoder().encode(JWT_SECRET), { currentDate: clock.now(), audience: 'portal' })
    const revoked = await h.t.db.selectFrom('revoked_sessions').selectAll().where('jti', '=', payload.jti!).executeTakeFirstOrThrow()
    assert.equal(revoked.expires_at.getTime(), payload.exp! * 1000)
  })

  test('a refused send is retried by the job runner, and no log line holds the token', async () => {
    const subscriber = await createSubscriber(h)
    h.sink!.failNext(1)
    const rejectedBefore = h.sink!.rejected
    const response = await requestLink(h, { email: subscriber.email, store_hash: h.shop.store.store_hash })
    assert.equal(response.statusCode, 202)

    // The first attempt fails and the job waits for its retry (released, with the error recorded).
    const failed = await waitFor('the first attempt to fail', async () => {
      const jobs = await pendingSendJobs(h.t.db)
      return jobs.find((job) => job.last_error !== null && job.locked_by === null)
    })
    assert.equal(h.sink!.rejected, rejectedBefore + 1)
    assert.equal(failed.attempts, 1)
    assert.match(failed.last_error!, /451/)
    assert.equal(h.sink!.messagesTo(subscriber.email).length, 0)
    assert.ok(failed.run_at.getTime() - failed.created_at.getTime() >= 1000, 'the retry is scheduled with a backoff, not at once')
    // The backoff is seconds; bring the retry forward rather than wait it out.
    await h.t.db.updateTable('jobs').set({ run_at: new Date(Date.now() - 1000) }).where('id', '=', failed.id).where('locked_by', 'is', null).execute()

    const token = tokenFrom(await h.sink!.waitForMessage(subscriber.email, WAIT_MS))
    await waitForSendJobsDone(h)
    const verified = await verify(h, token)
    assert.equal(verified.statusCode, 200, verified.body)

    const logs = h.t.logs.join('')
    assert.match(logs, /job failed/, 'the failed send is logged')
    assert.ok(!logs.includes(token), 'the token must never be logged')
    // Neither this token nor the one made for the refused attempt: no link with a token in any line.
    assert.doesNotMatch(logs, /token=[A-Za-z0-9_-]{16,}/, 'no sign-in link may be logged when mail goes over SMTP')
    assert.ok(!logs.includes(verified.json.access_token), 'nor the session token')
  })

  test('malformed bodies are 400 validation_failed and queue nothing', async () => {
    const storeHash = h.shop.store.store_hash
    const jobsBefore = (await h.t.db.selectFrom('jobs').select('id').where('kind', '=', SendMagicLink.kind).execute()).length
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ email: 'not-an-email', store_hash: storeHash }, '/email'],
      [{ email: 'ada@example.com' }, '/store_hash'],
      [{ store_hash: storeHash }, '/email'],
      [{ email: 'ada@example.com', store_hash: storeHash, subscriber_id: 'cus_1' }, '/subscriber_id'],
      [{ email: 'ada@example.com', store_hash: '' }, '/store_hash'],
      [{ email: 42, store_hash: storeHash }, '/email'],
    ]
    for (const [payload] of bad) {
      const response = await requestLink(h, payload)
      assertProblem(response, 400, 'validation_failed')
    }
    assertProblem(await call(h.t.app, { method: 'POST', url: '/api/v1/portal/auth/verify', payload: {} }), 400, 'validation_failed')
    assertProblem(await call(h.t.app, { method: 'POST', url: '/api/v1/portal/auth/verify', payload: { token: 'x', extra: 1 } }), 400, 'validation_failed')
    assertProblem(await call(h.t.app, { method: 'POST', url: '/api/v1/portal/auth/verify', payload: { token: '' } }), 400, 'validation_failed')
    const jobsAfter = (await h.t.db.selectFrom('jobs').select('id').where('kind', '=', SendMagicLink.kind).execute()).length
    assert.equal(jobsAfter, jobsBefore)
  })
})

describe('portal sign-in rate limits', () => {
  let h: Harness

  before(async () => {
    h = await startHarness({ env: { MAGIC_LINK_MAX_PER_EMAIL: '2', MAGIC_LINK_MAX_PER_ADDRESS: '4' } })
  })
  after(() => h.close())

  /** What two refusals share once the request id and the seconds left are set aside. */
  const comparableProblem = (response: Response) => ({ ...response.json, request_id: '-', detail: String(response.json.detail).replace(/\d+/g, 'N') })

  test('more links than MAGIC_LINK_MAX_PER_EMAIL for one email from one address: 429 with Retry-After, alike for known and unknown emails', async () => {
    const subscriber = await createSubscriber(h)
    const unknownEmail = nextEmail('nobody')
    const refusals: Response[] = []
    for (const email of [subscriber.email, unknownEmail]) {
      const address = freshAddress()
      for (let n = 1; n <= 2; n++) {
        const response = await requestLink(h, { email, store_hash: h.shop.store.store_hash }, address)
        assert.equal(response.statusCode, 202, `request ${n} for ${email}: ${response.body}`)
      }
      // Another spelling of the same email: still the same email.
      const refused = await requestLink(h, { email: email.toUpperCase(), store_hash: h.shop.store.store_hash }, address)
      assertProblem(refused, 429, 'rate_limited')
      const retryAfter = Number(refused.headers['retry-after'])
      assert.ok(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 900, `Retry-After: ${refused.headers['retry-after']}`)
      // The wait in words a subscriber reads on the sign-in page ("retry in 741 s" before).
      assert.match(refused.json.detail, /; try again in \d+ (?:minutes?|seconds?)$/)
      refusals.push(refused)
    }
    const [known, unknown] = refusals as [Response, Response]
    assert.deepEqual(Object.keys(comparableHeaders(unknown)).sort(), Object.keys(comparableHeaders(known)).sort())
    assert.deepEqual(comparableProblem(unknown), comparableProblem(known))

    // The refused request queued nothing: two emails for the two accepted requests.
    await waitForSendJobsDone(h)
    assert.equal(h.sink!.messagesTo(subscriber.email).length, 2)
    // Another email is not held back by this one.
    const other = await createSubscriber(h)
    assert.equal((await requestLink(h, { email: other.email, store_hash: h.shop.store.store_hash })).statusCode, 202)
  })

  test('more than MAGIC_LINK_MAX_PER_ADDRESS requests from one client address: 429 with Retry-After', async () => {
    const address = freshAddress()
    for (let n = 1; n <= 4; n++) {
      const response = await requestLink(h, { email: nextEmail('spray'), store_hash: h.shop.store.store_hash }, address)
      assert.equal(response.statusCode, 202, `request ${n}: ${response.body}`)
    }
    const refused = await requestLink(h, { email: nextEmail('spray'), store_hash: h.shop.store.store_hash }, address)
    assertProblem(refused, 429, 'rate_limited')
    assert.ok(Number(refused.headers['retry-after']) > 0, `Retry-After: ${refused.headers['retry-after']}`)
    // Another address is not affected.
    const elsewhere = await requestLink(h, { email: nextEmail('spray'), store_hash: h.shop.store.store_hash })
    assert.equal(elsewhere.statusCode, 202)
  })

  test('the per-address limit counts an IPv6 client by its /64, as the service-wide limit does', async () => {
    const ask = (address: string) => requestLink(h, { email: nextEmail('six'), store_hash: h.shop.store.store_hash }, address)
    for (let n = 1; n <= 4; n++) assert.equal((await ask(`2001:db8:64:1::${n}`)).statusCode, 202, `request ${n}`)
    assertProblem(await ask('2001:db8:64:1:ffff:ffff:ffff:ffff'), 429, 'rate_limited')
    assert.equal((await ask('2001:db8:64:2::1')).statusCode, 202, 'another /64 has its own allowance')
  })
})

describe('portal sign-in cannot be locked by someone else', () => {
  let h: Harness

  before(async () => {
    h = await startHarness({ env: { MAGIC_LINK_MAX_PER_EMAIL: '2', MAGIC_LINK_MAX_PER_EMAIL_TOTAL: '6', MAGIC_LINK_MAX_PER_ADDRESS: '30' } })
  })
  after(() => h.close())

  const ask = (email: string, address: string) => requestLink(h, { email, store_hash: h.shop.store.store_hash }, address)

  test("requests for a subscriber's email from another address do not stop the subscriber's own address getting a link", async () => {
    const victim = await createSubscriber(h)
    const attacker = freshAddress()
    const answers = []
    for (let n = 1; n <= 5; n++) answers.push((await ask(victim.email, attacker)).statusCode)
    assert.deepEqual(answers, [202, 202, 429, 429, 429], 'the attacker is refused for its own address only')
    await waitForSendJobsDone(h)
    const sentToAttack = h.sink!.messagesTo(victim.email).length

    // The subscriber, from home, still gets a link, and it signs in.
    const response = await ask(victim.email, freshAddress())
    assert.equal(response.statusCode, 202, response.body)
    const message = await waitFor('the link the subscriber asked for', async () => h.sink!.messagesTo(victim.email)[sentToAttack])
    const session = await verify(h, tokenFrom(message))
    assert.equal(session.statusCode, 200, session.body)
  })

  test('past MAGIC_LINK_MAX_PER_EMAIL_TOTAL from all addresses together: still 202, alike for known and unknown emails, and nothing is sent', async () => {
    const subscriber = await createSubscriber(h)
    const unknownEmail = nextEmail('nobody')
    const overCap: Response[] = []
    for (const email of [subscriber.email, unknownEmail]) {
      // Three addresses, two each: six requests, the overall cap.
      for (let address = 0; address < 3; address++) {
        const from = freshAddress()
        for (let n = 1; n <= 2; n++) assert.equal((await ask(email, from)).statusCode, 202, `address ${address}, request ${n}`)
      }
      const beyond = await ask(email, freshAddress())
      assert.equal(beyond.statusCode, 202, `beyond the cap the answer does not change: ${beyond.body}`)
      assert.deepEqual(beyond.json, { status: 'sent' })
      overCap.push(beyond)
    }
    const [known, unknown] = overCap as [Response, Response]
    assert.deepEqual(comparableHeaders(unknown), comparableHeaders(known))
    assert.equal(unknown.body, known.body)

    await waitForSendJobsDone(h)
    assert.equal(h.sink!.messagesTo(subscriber.email).length, 6, 'six links sent, none beyond the cap')
  })
})

describe('portal sign-in without SMTP_URL', () => {
  let h: Harness

  before(async () => {
    h = await startHarness({ smtp: false })
  })
  after(() => h.close())

  test('the email is written to the log instead, link included, and the link works', async () => {
    const subscriber = await createSubscriber(h)
    const response = await requestLink(h, { email: subscriber.email, store_hash: h.shop.store.store_hash })
    assert.equal(response.statusCode, 202)
    await waitForSendJobsDone(h)
    const line = await waitFor('the email in the log', async () => h.t.logs.find((l) => l.includes(subscriber.email) && LINK.test(l)))
    const entry = JSON.parse(line)
    assert.match(entry.msg, /SMTP_URL is not set/)
    assert.equal(entry.mail.to, subscriber.email)
    assert.ok(String(entry.mail.text).includes(STORE_NAME))
    const token = LINK.exec(entry.mail.text)![1]!
    const verified = await verify(h, token)
    assert.equal(verified.statusCode, 200, verified.body)
  })
})

describe('the session signing secret without JWT_SECRET', () => {
  const dirs: string[] = []
  // A DATA_DIR whose database initdb has made already (a copy, test/helpers/data-dir.ts): initdb is ~8 s
  // of CPU and not what this suite is about.
  const tempDir = async () => {
    const dir = await newDataDir('portal-secret-')
    dirs.push(dir)
    return dir
  }
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  /** A store with one subscriber (through the admin checkout route) on this app. */
  async function seedSubscriber(t: TestApp): Promise<{ shop: StoreWithKey; subscriberId: string }> {
    const shop = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, shop.auth)
    const plan = await createPlan(t.app, shop.auth, product.id)
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(plan.id))
    return { shop, subscriberId: subscription.subscriber_id }
  }

  async function openPglite(dir: string): Promise<DatabaseHandle> {
    const database = await connectDatabase({ dataDir: dir })
    await migrateToLatest(database.db)
    return database
  }

  // The embedded database only; the same code runs whatever DATABASE_URL says, so once is enough.
  test('on an embedded DATA_DIR: generated once, kept in a 0600 file, and sessions survive a restart', { skip: onPostgres && 'embedded database only (runs without DATABASE_URL)' }, async () => {
    const dir = await tempDir()
    let database = await openPglite(dir)
    let t = await buildTestApp({ database, env: { DATA_DIR: dir } })
    let token: string
    try {
      const { shop, subscriberId } = await seedSubscriber(t)
      token = (await signInSubscriber(t.app, t.db, shop.store.id, subscriberId)).accessToken
      assert.equal((await me({ t }, token)).statusCode, 200)
    } finally {
      await t.close()
      await database.close()
    }
    const file = join(dir, 'portal-session-secret')
    assert.ok(existsSync(file), 'the secret is kept under DATA_DIR')
    assert.equal(statSync(file).mode & 0o777, 0o600)

    database = await openPglite(dir)
    t = await buildTestApp({ database, env: { DATA_DIR: dir } })
    try {
      const again = await me({ t }, token)
      assert.equal(again.statusCode, 200, `a session must survive a restart: ${again.body}`)
    } finally {
      await t.close()
      await database.close()
    }

    // The file holds the very key the sessions are signed with.
    const { payload } = await jwtVerify(token, new TextEncoder().encode(readFileSync(file, 'utf8').trim()), { algorithms: ['HS256'], audience: 'portal' })
    assert.equal(typeof payload.jti, 'string')
  })

  test('in the database (PostgreSQL, or in-memory PGlite): every app on it signs with the same generated key', async () => {
    const database = await createTestDatabase()
    const env = { DATA_DIR: 'memory://' }
    const first = await buildTestApp({ database, env })
    const second = await buildTestApp({ database, env })
    try {
      const { shop, subscriberId } = await seedSubscriber(first)
      const token = (await signInSubscriber(first.app, first.db, shop.store.id, subscriberId)).accessToken
      const elsewhere = await me({ t: second }, token)
      assert.equal(elsewhere.statusCode, 200, `another process on the same database accepts the session: ${elsewhere.body}`)
      const rows = await database.db.selectFrom('service_secrets').selectAll().execute()
      assert.equal(rows.length, 1)
      assert.ok(rows[0]!.value.length >= 43, 'at least 256 bits')

      const source = { configured: undefined, engine: database.engine, dataDir: 'memory://', db: database.db }
      const [a, b] = await Promise.all([resolveSessionSecret(source), resolveSessionSecret(source)])
      assert.deepEqual(a, b)
      assert.deepEqual(a, new TextEncoder().encode(rows[0]!.value))
      // Configuration wins over the stored key.
      assert.deepEqual(await resolveSessionSecret({ ...source, configured: JWT_SECRET }), new TextEncoder().encode(JWT_SECRET))
    } finally {
      await first.app.close()
      await second.app.close()
      await database.close()
    }
  })
})
