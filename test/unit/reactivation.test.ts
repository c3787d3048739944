import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { AppError } from '../../src/lib/errors.ts'
import { assertCanReactivate, assertMayReactivate, reactivation } from '../../src/modules/subscriptions/reactivation.ts'
import { SUBSCRIPTION_STATUSES } from '../../src/modules/subscriptions/subscription.schemas.ts'
import { subscriptionRow } from '../helpers/subscription-row.ts'

/**
 * When a subscription may be reactivated, and what reactivation writes (docs/contract.md,
 * Reactivation): the pure decisions under POST .../reactivate.
 */
const d = (iso: string) => new Date(iso)
const running = { billing_stopped_at: null, billing_enabled: true }
const sold = { active: true }
const cancelledRow = (overrides: Parameters<typeof subscriptionRow>[0] = {}) =>
  subscriptionRow({ status: 'cancelled', cancelled_at: d('2026-01-15T00:00:00.000Z'), cancellation_reason: 'moving', cancellation_reason_code: 'moving', next_charge_at: null, ...overrides })

function refused(code: 'invalid_state' | 'forbidden' | 'billing_disabled', detail: RegExp) {
  return (error: unknown) => error instanceof AppError && error.code === code && detail.test(error.message)
}

describe('assertCanReactivate', () => {
  test('a cancelled subscription on a sold plan of a running store may be reactivated', () => {
    assert.doesNotThrow(() => assertCanReactivate(running, cancelledRow(), sold))
  })

  test('every other status is 409; an expired one is told to start a new subscription', () => {
    for (const status of SUBSCRIPTION_STATUSES.filter((status) => status !== 'cancelled')) {
      assert.throws(() => assertCanReactivate(running, subscriptionRow({ status }), sold), refused('invalid_state', status === 'expired' ? /expired .* start a new subscription/ : /only a cancelled subscription/), status)
    }
  })

  test('409 when the plan is archived or gone, the store\'s billing is stopped, a charge is in flight or under review, or it is a gifted prepaid block', () => {
    assert.throws(() => assertCanReactivate(running, cancelledRow(), { active: false }), refused('invalid_state', /archived/))
    assert.throws(() => assertCanReactivate(running, cancelledRow(), undefined), refused('invalid_state', /archived/))
    assert.throws(() => assertCanReactivate({ billing_stopped_at: d('2026-01-20T00:00:00.000Z'), billing_enabled: true }, cancelledRow(), sold), refused('invalid_state', /billing is stopped/))
    assert.throws(() => assertCanReactivate(running, cancelledRow({ pending_charge_id: 'ch_1' }), sold), refused('invalid_state', /in flight/))
    const review = { code: 'charge_requires_review' as const, message: 'unknown', since: '2026-01-15T00:00:00.000Z' }
    assert.throws(() => assertCanReactivate(running, cancelledRow({ billing_issue: review }), sold), refused('invalid_state', /charge_requires_review/))
    const gift = { gifter_email: 'g@example.com', recipient_email: 'r@example.com', message: null }
    assert.throws(() => assertCanReactivate(running, cancelledRow({ gift: gift as never, prepaid_cycles_total: 3, prepaid_cycles_remaining: 0 }), sold), refused('invalid_state', /gifted prepaid/))
  })

  test('while the store\'s billing is switched off (the cutover switch), a reactivation that charges now is 409 billing_disabled; one from a later date charges nothing now and may', () => {
    const off = { billing_stopped_at: null, billing_enabled: false }
    assert.throws(() => assertCanReactivate(off, cancelledRow(), sold), refused('billing_disabled', /billing is switched off/))
    assert.throws(() => assertCanReactivate(off, cancelledRow(), sold, true), refused('billing_disabled', /billing is switched off/))
    assert.doesNotThrow(() => assertCanReactivate(off, cancelledRow(), sold, false))
    // The subscription's own refusal comes first: it outlasts the switch.
    assert.throws(() => assertCanReactivate(off, subscriptionRow({ status: 'active' }), sold), refused('invalid_state', /only a cancelled subscription/))
  })

  test('a renewal set aside for its data does not hold a reactivation back (the change clears it)', () => {
    const failed = { code: 'renewal_failed' as const, message: 'bad data', since: '2026-01-15T00:00:00.000Z' }
    assert.doesNotThrow(() => assertCanReactivate(running, cancelledRow({ billing_issue: failed }), sold))
  })
})

describe('assertMayReactivate', () => {
  test('a subscriber only when the store allows portal reactivation; the merchant always', () => {
    const subscriber = { kind: 'subscriber' as const, subscriberId: 'cus_1' }
    assert.throws(() => assertMayReactivate({ portal_reactivation: false }, subscriber), refused('forbidden', /does not let subscribers reactivate/))
    assert.doesNotThrow(() => assertMayReactivate({ portal_reactivation: true }, subscriber))
    assert.doesNotThrow(() => assertMayReactivate({ portal_reactivation: false }, { kind: 'admin_key', keyId: 'key_1', keyName: 'Support bot' }))
    assert.doesNotThrow(() => assertMayReactivate({ portal_reactivation: false }, { kind: 'console', sessionId: 'jti' }))
  })
})

describe('reactivation', () => {
  test('active again, the cancellation forgotten, anchored at the first charge; dunning, skips and pauses of the old periods gone', () => {
    const now = d('2026-01-20T12:00:00.000Z')
    const at = d('2026-02-10T09:00:00.000Z')
    const old = cancelledRow({ dunning_attempts: 2, unpaid_period_start: d('2026-01-10T09:00:00.000Z'), skip_next: true, paused_at: d('2026-01-12T00:00:00.000Z'), prepaid_cycles_total: 3, prepaid_cycles_remaining: 0 })
    const { set, events } = reactivation(old, now, at)
    assert.deepEqual(events, ['subscription.reactivated'])
    assert.equal(set.status, 'active')
    assert.deepEqual([set.cancelled_at, set.cancellation_reason, set.cancellation_reason_code, set.cancel_at_period_end], [null, null, null, false])
    assert.deepEqual([set.billing_anchor_at, set.period_index, set.next_charge_at], [at, -1, at])
    assert.deepEqual([set.current_period_start, set.current_period_end], [now, at], 'the current period runs until the first charge')
    assert.equal(set.prepaid_cycles_remaining, 3, 'a prepaid block starts whole')
    assert.deepEqual([set.dunning_attempts, set.unpaid_period_start, set.skip_next, set.paused_at, set.resume_at], [0, null, false, null, null])
  })
})
