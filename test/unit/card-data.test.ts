import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import fc from 'fast-check'
import { containsCardNumber, findCardNumber, isLuhnValid, maskCardNumbers } from '../../src/lib/card-data.ts'

/** Appends the check digit that makes a number Luhn-valid. */
function withCheckDigit(body: string): string {
  for (let d = 0; d <= 9; d++) if (isLuhnValid(body + d)) return body + d
  throw new Error('unreachable')
}

describe('card number detection', () => {
  test('finds Luhn-valid runs of 13 to 19 digits, grouped by spaces or dashes or not', () => {
    fc.assert(
      fc.property(fc.integer({ min: 12, max: 18 }), fc.constantFrom('', ' ', '-'), fc.nat(), (length, separator, seed) => {
        const body = String(seed).padStart(length, '4').slice(0, length)
        const card = withCheckDigit(body)
        const grouped = card.replace(/(\d{4})(?=\d)/g, `$1${separator}`)
        return containsCardNumber(`pay ${grouped} now`)
      }),
    )
  })

  test('ignores numbers that fail the checksum', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[1-9]\d{12,18}$/), (digits) => isLuhnValid(digits) || !containsCardNumber(digits)),
    )
  })

  test('ignores runs shorter than 13 or longer than 19 digits', () => {
    assert.equal(containsCardNumber(withCheckDigit('41111111111')), false)
    assert.equal(containsCardNumber(withCheckDigit('4111111111111111111111')), false)
  })

  test('reports the JSON pointer of the first string holding a number, keys included', () => {
    assert.equal(findCardNumber({ a: [{ b: 'x' }, { c: '4111 1111 1111 1111' }] }), '/a/1/c')
    assert.equal(findCardNumber({ 'we/ird~': '4111111111111111' }), '/we~1ird~0')
    assert.equal(findCardNumber({ ['4111111111111111']: 'x' }), '/4111111111111111')
  })

  test('an integer is a card number when its digits are one (an order id sent as a number, say)', () => {
    assert.equal(findCardNumber({ order: { platform_order_id: 4111111111111111 } }), '/order/platform_order_id')
    assert.equal(findCardNumber({ amount: 4111111111111112 }), undefined, 'fails the Luhn check')
    assert.equal(findCardNumber({ amount: 1999 }), undefined)
  })

  test('masks card numbers in free text and leaves other digits alone', () => {
    assert.equal(maskCardNumbers('/x?id=4111111111111111&n=12345'), '/x?id=[card number removed]&n=12345')
  })
})
