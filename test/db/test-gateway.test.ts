import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { DatabaseHandle } from '../../src/db/connect.ts'
import { chargeIdempotencyKey, type ChargeRequest, type RefundRequest } from '../../src/modules/billing/gateways/gateway.ts'
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

/** A refund of `charge` with a refund key of its own (`<charge key>:refund:<n>`). */
function refundOf(charge: ChargeRequest, amount: number, n = 1, overrides: Partial<RefundRequest> = {}): RefundRequest {
  return {
    idempotencyKey: `${charge.idempotencyKey}:refund:${n}`,
    storeId: charge.storeId,
    chargeIdempotencyKey: charge.idempotencyKey,
    gatewayChargeId: null,
    amount,
    currency: charge.currency,
    ...overrides,
  }
}

describe('test gateway (docs/contract.md, Billing)', () => {
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
    assert.deepEqual(scriptedOutcome('pi_1_unknown'), { status: 'unknown' })
    assert.deepEqual(scriptedOutcome('pi_1_declined_once'), { status: 'failed_once', failureCode: 'card_declined' })
    assert.deepEqual(scriptedOutcome('pi_declined_not_at_end'), { status: 'succeeded', timesOutFirst: false }, 'only a suffix counts')
    assert.deepEqual(scriptedOutcome('pi_unknown_not_at_end'), { status: 'succeeded', timesOutFirst: false }, 'only a suffix counts')
  })

  test('_declined_once: the first charge of a subscription with it is declined, a replay answers the same, the next key is paid', async () => {
    const first = chargeFor('pi_4242_declined_once')
    assert.equal((await gateway.charge(first)).status, 'failed')
    assert.equal((await gateway.charge(first)).status, 'failed', 'a replay of the key answers its first outcome')
    const retry = { ...first, idempotencyKey: chargeIdempotencyKey(first.subscriptionId, new Date('2026-02-01T00:00:00Z'), 2) }
    assert.equal((await gateway.charge(retry)).status, 'succeeded')
    assert.equal(await gateway.countCharges({ subscriptionId: first.subscriptionId }), 1, 'one charge moved money')
    // Another subscription with the same instrument is declined on its own first charge.
    assert.equal((await gateway.charge(chargeFor('pi_4242_declined_once'))).status, 'failed')
  })

  test('the gateway deduplicates by key, and says so', () => {
    assert.equal(gateway.honoursIdempotencyKeys, true)
  })

  test('_unknown: every call answers unknown, nothing is written, lookup finds nothing', async () => {
    const request = chargeFor('pi_4242_unknown')
    for (let call = 0; call < 3; call++) {
      const outcome = await gateway.charge(request)
      assert.equal(outcome.status, 'unknown', JSON.stringify(outcome))
    }
    assert.equal(await gateway.lookup(request), undefined, 'the gateway has no trace of it')
    assert.equal(await gateway.countCharges({ subscriptionId: request.subscriptionId }), 0, 'no money moved')
    const rows = await handle.db.selectFrom('test_gateway_charges').select('idempotency_key').where('subscription_id', '=', request.subscriptionId).execute()
    assert.equal(rows.length, 0, 'no ledger row at all')
    assert.equal(await gateway.callsFor(request.idempotencyKey), 0)
  })

  test('refund in full: succeeded with a tre_ id, recorded once', async () => {
    const charge = chargeFor('pi_refund_full')
    assert.equal((await gateway.charge(charge)).status, 'succeeded')
    const outcome = await gateway.refund(refundOf(charge, 2500))
    assert.equal(outcome.status, 'succeeded', JSON.stringify(outcome))
    assert.match(outcome.status === 'succeeded' ? outcome.gatewayRefundId : '', /^tre_[0-9A-HJKMNP-TV-Z]{26}$/)
    assert.equal(await gateway.refundedFor(charge.idempotencyKey), 2500)
    const rows = await handle.db.selectFrom('test_gateway_refunds').selectAll().where('charge_key', '=', charge.idempotencyKey).execute()
    assert.equal(rows.length, 1)
    assert.equal(rows[0]!.amount, 2500)
    assert.equal(rows[0]!.status, 'succeeded')
    assert.equal(rows[0]!.calls, 1)
  })

  test('partial refunds: one, then a second up to the amount, then nothing more', async () => {
    const charge = chargeFor('pi_refund_partial')
    await gateway.charge(charge)
    assert.equal((await gateway.refund(refundOf(charge, 1000, 1))).status, 'succeeded')
    assert.equal(await gateway.refundedFor(charge.idempotencyKey), 1000)
    assert.equal((await gateway.refund(refundOf(charge, 1500, 2))).status, 'succeeded', 'two partials may add up to the charge')
    assert.equal(await gateway.refundedFor(charge.idempotencyKey), 2500)
    const more = await gateway.refund(refundOf(charge, 1, 3))
    assert.equal(more.status, 'failed')
    assert.match(more.status === 'failed' ? more.message : '', /exceed/)
    assert.equal(await gateway.refundedFor(charge.idempotencyKey), 2500, 'the refused refund moved nothing')
  })

  test('an over-refund is refused and nothing is written as succeeded', async () => {
    const charge = chargeFor('pi_refund_over')
    await gateway.charge(charge)
    const outcome = await gateway.refund(refundOf(charge, 2501))
    assert.equal(outcome.status, 'failed', JSON.stringify(outcome))
    assert.match(outcome.status === 'failed' ? outcome.message : '', /exceed.*0 of 2500/)
    assert.equal(await gateway.refundedFor(charge.idempotencyKey), 0)
    const rows = await handle.db.selectFrom('test_gateway_refunds').selectAll().where('charge_key', '=', charge.idempotencyKey).execute()
    assert.deepEqual(rows.map((row) => [row.status, row.gateway_refund_id]), [['failed', null]])
    assert.equal((await gateway.refund(refundOf(charge, 2500, 2))).status, 'succeeded', 'the refused one reserved nothing')
  })

  test('a replayed refund key answers the first outcome and refunds once (calls = 2)', async () => {
    const charge = chargeFor('pi_refund_replay')
    await gateway.charge(charge)
    const request = refundOf(charge, 2000)
    const first = await gateway.refund(request)
    const second = await gateway.refund(request)
    assert.equal(first.status, 'succeeded')
    assert.deepEqual(second, first)
    assert.equal(await gateway.refundedFor(charge.idempotencyKey), 2000)
    const row = await handle.db.selectFrom('test_gateway_refunds').selectAll().where('idempotency_key', '=', request.idempotencyKey).executeTakeFirstOrThrow()
    assert.equal(row.calls, 2)

    // A refused refund replays as refused, even once the charge would allow it: the first outcome stands.
    const over = refundOf(charge, 600, 2)
    assert.equal((await gateway.refund(over)).status, 'failed')
    assert.equal((await gateway.refund(over)).status, 'failed')
    const overRow = await handle.db.selectFrom('test_gateway_refunds').selectAll().where('idempotency_key', '=', over.idempotencyKey).executeTakeFirstOrThrow()
    assert.equal(overRow.calls, 2)
    assert.equal(overRow.status, 'failed')
  })

  test('a refund key reused for a different refund is refused loudly', async () => {
    const charge = chargeFor('pi_refund_reuse')
    await gateway.charge(charge)
    await gateway.refund(refundOf(charge, 500))
    await assert.rejects(gateway.refund(refundOf(charge, 700)), /different refund/)
    assert.equal(await gateway.refundedFor(charge.idempotencyKey), 500)
  })

  test('a refund of a charge key with no succeeded charge is refused: declined, unknown, never charged', async () => {
    const declined = chargeFor('pi_refund_declined')
    await gateway.charge(declined)
    const unknown = chargeFor('pi_refund_unknown')
    assert.equal((await gateway.charge(unknown)).status, 'unknown')
    const never = chargeFor('pi_refund_never')
    for (const charge of [declined, unknown, never]) {
      const outcome = await gateway.refund(refundOf(charge, 100))
      assert.equal(outcome.status, 'failed', JSON.stringify(outcome))
      assert.match(outcome.status === 'failed' ? outcome.message : '', /no succeeded charge/)
      assert.equal(await gateway.refundedFor(charge.idempotencyKey), 0)
    }
  })

  test('a refund in another currency or for another store is refused', async () => {
    const charge = chargeFor('pi_refund_currency')
    await gateway.charge(charge)
    assert.equal((await gateway.refund(refundOf(charge, 100, 1, { currency: 'EUR' }))).status, 'failed')
    assert.equal((await gateway.refund(refundOf(charge, 100, 2, { storeId: 'store_other' }))).status, 'failed')
    assert.equal(await gateway.refundedFor(charge.idempotencyKey), 0)
  })

  test('refund amounts are positive integer minor units', async () => {
    const charge = chargeFor('pi_refund_cents')
    await gateway.charge(charge)
    await assert.rejects(gateway.refund(refundOf(charge, 12.5)), RangeError)
    await assert.rejects(gateway.refund(refundOf(charge, 0, 2)), RangeError)
    await assert.rejects(gateway.refund(refundOf(charge, -5, 3)), RangeError)
  })

  test('concurrent refunds with different keys never exceed the charge', async () => {
    const charge = chargeFor('pi_refund_race')
    await gateway.charge(charge)
    const otherWorker = createTestGateway(handle.db)
    const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? otherWorker : gateway).refund(refundOf(charge, 750, i + 1))))
    const succeeded = outcomes.filter((o) => o.status === 'succeeded').length
    assert.equal(succeeded, 3, '3 x 30% fit in the charge, a 4th would not')
    assert.equal(outcomes.filter((o) => o.status === 'failed').length, 7)
    const refunded = await gateway.refundedFor(charge.idempotencyKey)
    assert.ok(refunded <= charge.amount, `refunded ${refunded} of ${charge.amount}`)
    assert.equal(refunded, 2250)
  })

  test('concurrent calls with one refund key make one refund', async () => {
    const charge = chargeFor('pi_refund_same_key_race')
    await gateway.charge(charge)
    const request = refundOf(charge, 2500)
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => gateway.refund(request)))
    for (const outcome of outcomes) assert.deepEqual(outcome, outcomes[0])
    assert.equal(outcomes[0]!.status, 'succeeded')
    assert.equal(await gateway.refundedFor(charge.idempotencyKey), 2500)
    const row = await handle.db.selectFrom('test_gateway_refunds').selectAll().where('idempotency_key', '=', request.idempotencyKey).executeTakeFirstOrThrow()
    assert.equal(row.calls, 6)
  })

  test('refundedFor a charge never refunded is 0', async () => {
    assert.equal(await gateway.refundedFor('no-such-charge'), 0)
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
