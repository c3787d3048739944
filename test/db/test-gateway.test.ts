import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { DatabaseHandle } from '../../src/db/connect.ts'
import { chargeIdempotencyKey, type ChargeRequest } from '../../src/modules/billing/gateways/gateway.ts'
import { createTestGateway, scriptedOutcome, type TestGateway } from '../../src/modules/billing/gateways/test-gateway.ts'
import { createTestDatabase } from '../helpers/database.ts'

let serial = 0
/** A charge request with a key of its own, so tests never see each other's ledger rows. */
function chargeFor(instrument: string, overrides: Partial<ChargeRequest> = {}): ChargeRequest {
  serial += 1
  const subscriptionId = `sub_gateway_${process.pid}_${serial}`
  return {
    idempotencyKey: chargeIdempotencyKey(subscriptionId, new Date('2026-02-01T00:00:00Z'), 1),
    storeId: 'store_gateway',
    subscriptionId,
    amount: 2500,
    currency: 'USD',
    paymentInstrumentId: instrument,
    description: 'Coffee club, February',
    ...overrides,
  }
}

describe('test gateway (CONTRACT section 7)', () => {
  let handle: DatabaseHandle
  let gateway: TestGateway

  before(async () => {
    handle = await createTestDatabase()
    gateway = createTestGateway(handle.db)
  })
  after(() => handle.close())

  test('the instrument id suffix chooses the outcome', () => {
    assert.deepEqual(scriptedOutcome('pi_1_declined'), { status: 'failed', failureCode: 'card_declined' })
    assert.deepEqual(scriptedOutcome('pi_1_insufficient_funds'), { status: 'failed', failureCode: 'insufficient_funds' })
    assert.deepEqual(scriptedOutcome('pi_1_timeout'), { status: 'succeeded', timesOutFirst: true })
    assert.deepEqual(scriptedOutcome('pi_1'), { status: 'succeeded', timesOutFirst: false })
    assert.deepEqual(scriptedOutcome('pi_declined_not_at_end'), { status: 'succeeded', timesOutFirst: false }, 'only a suffix counts')
  })

  test('an ordinary instrument is charged once and the charge is recorded', async () => {
    const request = chargeFor('pi_visa')
    const outcome = await gateway.charge(request)
    assert.equal(outcome.status, 'succeeded')
    assert.match(outcome.status === 'succeeded' ? outcome.gatewayChargeId : '', /^tgw_/)
    assert.equal(await gateway.countCharges({ idempotencyKey: request.idempotencyKey }), 1)
    assert.deepEqual(await gateway.lookup(request), outcome, 'lookup answers the recorded outcome')
    const row = await handle.db.selectFrom('test_gateway_charges').selectAll().where('idempotency_key', '=', request.idempotencyKey).executeTakeFirstOrThrow()
    assert.equal(row.amount, 2500)
    assert.equal(row.currency, 'USD')
    assert.equal(row.payment_instrument_id, 'pi_visa')
  })

  test('_declined fails with card_declined and moves no money', async () => {
    const request = chargeFor('pi_4242_declined')
    const outcome = await gateway.charge(request)
    assert.equal(outcome.status, 'failed')
    assert.equal(outcome.status === 'failed' && outcome.failureCode, 'card_declined')
    assert.equal(await gateway.countCharges({ idempotencyKey: request.idempotencyKey }), 0)
  })

  test('_insufficient_funds fails with insufficient_funds', async () => {
    const outcome = await gateway.charge(chargeFor('pi_4242_insufficient_funds'))
    assert.equal(outcome.status === 'failed' && outcome.failureCode, 'insufficient_funds')
  })

  test('a replayed key answers the first outcome and never charges again', async () => {
    for (const instrument of ['pi_ok', 'pi_x_declined', 'pi_x_insufficient_funds']) {
      const request = chargeFor(instrument)
      const first = await gateway.charge(request)
      const second = await gateway.charge(request)
      const third = await gateway.charge(request)
      assert.deepEqual(second, first, `${instrument}: the replay answers the first outcome`)
      assert.deepEqual(third, first)
      assert.equal(await gateway.callsFor(request.idempotencyKey), 3)
      assert.equal(await gateway.countCharges({ subscriptionId: request.subscriptionId }), first.status === 'succeeded' ? 1 : 0)
    }
  })

  test('_timeout: the first call is unknown but charged; lookup and the retry find that one charge', async () => {
    const request = chargeFor('pi_4242_timeout')
    const first = await gateway.charge(request)
    assert.equal(first.status, 'unknown', 'the first call times out')
    assert.equal(await gateway.countCharges({ idempotencyKey: request.idempotencyKey }), 1, 'the charge happened despite the timeout')

    const found = await gateway.lookup(request)
    assert.equal(found?.status, 'succeeded', 'reconciling by key finds the charge')
    const retried = await gateway.charge(request)
    assert.deepEqual(retried, found, 'retrying with the same key answers the same charge')
    assert.equal(await gateway.countCharges({ subscriptionId: request.subscriptionId }), 1, 'and never charges twice')
  })

  test('_timeout with a fresh key (a new attempt) times out again on its first call', async () => {
    const first = chargeFor('pi_t_timeout')
    await gateway.charge(first)
    const nextAttempt = { ...first, idempotencyKey: chargeIdempotencyKey(first.subscriptionId, new Date('2026-02-01T00:00:00Z'), 2) }
    assert.equal((await gateway.charge(nextAttempt)).status, 'unknown')
  })

  test('lookup of a key never charged answers undefined', async () => {
    assert.equal(await gateway.lookup(chargeFor('pi_never')), undefined)
    assert.equal(await gateway.callsFor('no-such-key'), 0)
  })

  test('two concurrent calls with one key make one charge and agree on it', async () => {
    const request = chargeFor('pi_race')
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => gateway.charge(request)))
    const rows = await handle.db.selectFrom('test_gateway_charges').selectAll().where('subscription_id', '=', request.subscriptionId).execute()
    assert.equal(rows.length, 1, 'one ledger row for the key')
    assert.equal(rows[0]!.calls, 8)
    for (const outcome of outcomes) assert.deepEqual(outcome, outcomes[0], 'every caller hears the same charge')
  })

  test('concurrent first calls with a _timeout key: exactly one hears unknown, the rest the charge', async () => {
    const request = chargeFor('pi_race_timeout')
    const outcomes = await Promise.all(Array.from({ length: 4 }, () => gateway.charge(request)))
    assert.equal(outcomes.filter((o) => o.status === 'unknown').length, 1)
    assert.equal(outcomes.filter((o) => o.status === 'succeeded').length, 3)
    assert.equal(await gateway.countCharges({ idempotencyKey: request.idempotencyKey }), 1)
  })

  test('the ledger is shared: a second gateway instance (another worker) sees the first one\'s charge', async () => {
    const request = chargeFor('pi_shared_timeout')
    assert.equal((await gateway.charge(request)).status, 'unknown')
    const otherWorker = createTestGateway(handle.db)
    assert.equal((await otherWorker.charge(request)).status, 'succeeded')
    assert.equal(await otherWorker.countCharges({ idempotencyKey: request.idempotencyKey }), 1)
  })

  test('reusing a key for a different charge is refused loudly and changes nothing', async () => {
    const request = chargeFor('pi_reuse')
    const first = await gateway.charge(request)
    await assert.rejects(gateway.charge({ ...request, amount: 9999 }), /different charge/)
    assert.deepEqual(await gateway.lookup(request), first)
    assert.equal(await gateway.countCharges({ idempotencyKey: request.idempotencyKey }), 1)
  })

  test('amounts are integer minor units', async () => {
    await assert.rejects(gateway.charge(chargeFor('pi_cents', { amount: 12.5 })), RangeError)
  })

  test('simulated latency delays each call', async () => {
    const slow = createTestGateway(handle.db, { latencyMs: 50 })
    const started = performance.now()
    await slow.charge(chargeFor('pi_slow'))
    assert.ok(performance.now() - started >= 45)
  })
})
