import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { AppError } from '../../src/lib/errors.ts'
import {
  assertChangeAllowed,
  CHANGES_ALLOWED,
  FINAL_STATUSES,
  STATUS_ACTIONS,
  transition,
  type ChangeAction,
  type StatusAction,
} from '../../src/modules/subscriptions/subscription-state.ts'
import { SUBSCRIPTION_STATUSES, type SubscriptionStatus } from '../../src/modules/subscriptions/subscription.schemas.ts'

const REFUSED = 'invalid_state'

// The transition table of docs/contract.md (Subscription states), written out by hand: a change to the code's table must be a change to this one.
const EXPECTED: Record<SubscriptionStatus, Record<StatusAction, SubscriptionStatus | typeof REFUSED>> = {
  pending: { activate: 'active', pause: REFUSED, resume: REFUSED, dunning_exhausted: REFUSED, recover: REFUSED, expire: REFUSED, cancel: 'cancelled', reactivate: REFUSED },
  active: { activate: REFUSED, pause: 'paused', resume: REFUSED, dunning_exhausted: 'past_due', recover: REFUSED, expire: 'expired', cancel: 'cancelled', reactivate: REFUSED },
  paused: { activate: REFUSED, pause: REFUSED, resume: 'active', dunning_exhausted: REFUSED, recover: REFUSED, expire: REFUSED, cancel: 'cancelled', reactivate: REFUSED },
  past_due: { activate: REFUSED, pause: REFUSED, resume: REFUSED, dunning_exhausted: REFUSED, recover: 'active', expire: REFUSED, cancel: 'cancelled', reactivate: REFUSED },
  cancelled: { activate: REFUSED, pause: REFUSED, resume: REFUSED, dunning_exhausted: REFUSED, recover: REFUSED, expire: REFUSED, cancel: REFUSED, reactivate: 'active' },
  expired: { activate: REFUSED, pause: REFUSED, resume: REFUSED, dunning_exhausted: REFUSED, recover: REFUSED, expire: REFUSED, cancel: REFUSED, reactivate: REFUSED },
}

const CHANGE_ACTIONS: ChangeAction[] = [
  'skip',
  'unskip',
  'swap',
  'change_quantity',
  'change_interval',
  'update_shipping_address',
  'update_payment_instrument',
  'request_change',
]

function isInvalidState(error: unknown): boolean {
  return error instanceof AppError && error.code === 'invalid_state' && error.status === 409
}

describe('subscription status transitions (docs/contract.md, Subscription states)', () => {
  test('the expected table covers exactly the statuses and actions the code knows', () => {
    assert.deepEqual(Object.keys(EXPECTED).sort(), [...SUBSCRIPTION_STATUSES].sort())
    assert.deepEqual([...STATUS_ACTIONS].sort(), Object.keys(EXPECTED.pending).sort())
  })

  for (const status of SUBSCRIPTION_STATUSES) {
    for (const action of STATUS_ACTIONS) {
      const expected = EXPECTED[status][action]
      if (expected === REFUSED) {
        test(`${action} on a ${status} subscription is refused with 409 invalid_state`, () => {
          assert.throws(() => transition(status, action), isInvalidState)
        })
      } else {
        test(`${action} on a ${status} subscription makes it ${expected}`, () => {
          assert.equal(transition(status, action), expected)
        })
      }
    }
  }

  test('expired is final; a cancelled subscription leaves only by reactivation, back to active', () => {
    assert.deepEqual([...FINAL_STATUSES].sort(), ['cancelled', 'expired'])
    for (const action of STATUS_ACTIONS) assert.throws(() => transition('expired', action), isInvalidState, `${action} left expired`)
    for (const action of STATUS_ACTIONS.filter((action) => action !== 'reactivate')) {
      assert.throws(() => transition('cancelled', action), isInvalidState, `${action} left cancelled`)
    }
    assert.equal(transition('cancelled', 'reactivate'), 'active')
  })

  test('reactivate applies to a cancelled subscription only', () => {
    for (const status of SUBSCRIPTION_STATUSES.filter((status) => status !== 'cancelled')) {
      assert.throws(() => transition(status, 'reactivate'), isInvalidState, `reactivate on ${status}`)
    }
  })

  test('nothing leads back to pending', () => {
    for (const status of SUBSCRIPTION_STATUSES) {
      for (const action of STATUS_ACTIONS) {
        let to: SubscriptionStatus | undefined
        try {
          to = transition(status, action)
        } catch {
          continue
        }
        assert.notEqual(to, 'pending', `${action} on ${status}`)
      }
    }
  })
})

describe('changes that keep the status', () => {
  test('the change actions are exactly the known ones', () => {
    assert.deepEqual(Object.keys(CHANGES_ALLOWED).sort(), [...CHANGE_ACTIONS].sort())
  })

  for (const status of FINAL_STATUSES) {
    test(`every change is refused on a ${status} subscription with 409 invalid_state`, () => {
      for (const change of CHANGE_ACTIONS) {
        assert.ok(!CHANGES_ALLOWED[change].includes(status), `${change} lists ${status}`)
        assert.throws(() => assertChangeAllowed(status, change), isInvalidState, `${change} on ${status}`)
      }
    })
  }

  test('an active subscription accepts every change', () => {
    for (const change of CHANGE_ACTIONS) assert.doesNotThrow(() => assertChangeAllowed('active', change), change)
  })

  test('a past_due subscription accepts a new payment instrument (that is how it recovers)', () => {
    assert.doesNotThrow(() => assertChangeAllowed('past_due', 'update_payment_instrument'))
  })
})
