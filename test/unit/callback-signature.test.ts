/**
 * Platform callbacks' Standard Webhooks signatures (src/modules/storefront-orders/callback-signature.ts): a
 * callback signed now under the app's client secret is accepted; a wrong signature, another body, or
 * a timestamp more than 5 minutes from the service's clock (a replayed callback) is refused alike; an
 * unsigned one is left to the other checks. Signed here as BigCommerce signs, independently of the
 * package that verifies.
 */
import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { beforeEach, describe, test } from 'node:test'
import { fixedClock } from '../../src/lib/clock.ts'
import { callbackSignatureChecker, SIGNATURE_TOLERANCE_SECONDS } from '../../src/modules/storefront-orders/callback-signature.ts'

const SECRET = 'app-client-secret-1234'
const BODY = Buffer.from(JSON.stringify({ scope: 'store/order/created', data: { type: 'order', id: 42 } }))
// Set when the tests start, not when the file is loaded: the package also checks the timestamp against the
// wall clock, and a runner may load every file minutes before it runs this one.
let NOW = 0

function signed(timestamp: number, body: Buffer = BODY, id = 'msg_1'): Record<string, string> {
  const signature = createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(`${id}.${timestamp}.`).update(body).digest('base64')
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${signature}` }
}

describe('platform callback signatures', () => {
  let check: ReturnType<typeof callbackSignatureChecker>
  beforeEach(() => {
    NOW = Math.floor(Date.now() / 1000)
    check = callbackSignatureChecker(SECRET, fixedClock(new Date(NOW * 1000)))
  })

  test('a callback signed now is accepted, and one signed within the tolerance either way', () => {
    assert.equal(check(signed(NOW), BODY), true)
    assert.equal(check(signed(NOW - SIGNATURE_TOLERANCE_SECONDS), BODY), true)
    assert.equal(check(signed(NOW + SIGNATURE_TOLERANCE_SECONDS), BODY), true)
  })

  test('a replayed callback (its timestamp more than 5 minutes old) is refused as a bad signature is', () => {
    assert.equal(check(signed(NOW - SIGNATURE_TOLERANCE_SECONDS - 1), BODY), false)
    assert.equal(check(signed(NOW - 3600), BODY), false)
    assert.equal(check(signed(NOW + SIGNATURE_TOLERANCE_SECONDS + 1), BODY), false, 'nor more than 5 minutes ahead')
  })

  test("the tolerance is taken from the service's clock", () => {
    const later = callbackSignatureChecker(SECRET, fixedClock(new Date((NOW + 10 * 60) * 1000)))
    assert.equal(later(signed(NOW), BODY), false, 'signed now, checked by a clock 10 minutes on')
  })

  test('a wrong signature, another body or a timestamp that is not a number is refused', () => {
    assert.equal(check({ ...signed(NOW), 'webhook-signature': `v1,${Buffer.alloc(32, 7).toString('base64')}` }, BODY), false)
    assert.equal(check(signed(NOW), Buffer.from(BODY.toString().replace('42', '43'))), false)
    assert.equal(check({ ...signed(NOW), 'webhook-timestamp': `${NOW}.5` }, BODY), false)
    assert.equal(check({ ...signed(NOW), 'webhook-timestamp': 'soon' }, BODY), false)
  })

  test('an unsigned callback is left to the other checks', () => {
    assert.equal(check({}, BODY), undefined)
    const { 'webhook-signature': _dropped, ...partial } = signed(NOW)
    assert.equal(check(partial, BODY), undefined)
  })
})
