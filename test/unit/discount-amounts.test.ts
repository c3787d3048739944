import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { discountCycleUsed, discountOn, renewalAmounts, type DiscountTerms } from '../../src/modules/billing/renewal-plan.ts'

/** The amount rules of a renewal (docs/contract.md, Discounts and add-ons), on integer minor units. */
const percent = (value: number): DiscountTerms => ({ id: 'disc_1', type: 'percentage', value, currency: null })
const fixed = (value: number, currency = 'USD'): DiscountTerms => ({ id: 'disc_2', type: 'fixed_amount', value, currency })
const sub = (amount: number, quantity: number, discount: DiscountTerms | null) => ({
  amount,
  quantity,
  currency: 'USD',
  product_id: 'prod_1',
  discount: discount === null ? null : { ...discount, code: 'CODE', duration: 'forever' as const },
})
const addOn = (id: string, unit: number, quantity: number, currency = 'USD') => ({ id, product_id: 'prod_2', quantity, unit_amount: unit, currency })

describe('discount amounts', () => {
  test('a percentage is rounded half up to a whole minor unit, once per charge', () => {
    assert.equal(discountOn(1000, percent(20), 'USD'), 200)
    assert.equal(discountOn(999, percent(15), 'USD'), 150, '149.85 -> 150')
    assert.equal(discountOn(10, percent(25), 'USD'), 3, '2.5 -> 3 (half up)')
    assert.equal(discountOn(10, percent(24), 'USD'), 2, '2.4 -> 2')
    assert.equal(discountOn(1, percent(49), 'USD'), 0, '0.49 -> 0')
    assert.equal(discountOn(1, percent(50), 'USD'), 1, '0.5 -> 1')
    assert.equal(discountOn(3333, percent(33), 'USD'), 1100, '1099.89 -> 1100')
    assert.equal(discountOn(100_000_000_000, percent(99), 'USD'), 99_000_000_000, 'exact at the largest renewal')
  })

  test('100% takes the whole line; a fixed amount is capped at the line; never below 0', () => {
    assert.equal(discountOn(1000, percent(100), 'USD'), 1000)
    assert.equal(discountOn(1000, fixed(500), 'USD'), 500)
    assert.equal(discountOn(300, fixed(500), 'USD'), 300, 'capped')
    assert.equal(discountOn(0, fixed(500), 'USD'), 0)
    assert.equal(discountOn(1000, fixed(500, 'EUR'), 'USD'), 0, 'another currency takes nothing off')
    assert.equal(discountOn(1000, null, 'USD'), 0)
    const capped = renewalAmounts(sub(300, 1, fixed(5000)))
    assert.deepEqual([capped.subtotal, capped.discountAmount, capped.amount], [300, 300, 0])
  })

  test('the discount is on the subscription line only: add-ons are charged in full', () => {
    const amounts = renewalAmounts(sub(1000, 2, percent(10)), [addOn('ot_1', 350, 2), addOn('ot_2', 99, 1)])
    assert.deepEqual([amounts.subtotal, amounts.discountAmount, amounts.amount, amounts.discountId], [2000 + 700 + 99, 200, 2599, 'disc_1'])
    assert.deepEqual(amounts.lineItems.map((line) => [line.type, line.onetime_id, line.quantity, line.unit_amount, line.amount, line.discount_amount]), [
      ['subscription', null, 2, 1000, 2000, 200],
      ['onetime', 'ot_1', 2, 350, 700, 0],
      ['onetime', 'ot_2', 1, 99, 99, 0],
    ])
    const fixedOff = renewalAmounts(sub(300, 1, fixed(1000)), [addOn('ot_1', 500, 1)])
    assert.deepEqual([fixedOff.subtotal, fixedOff.discountAmount, fixedOff.amount], [800, 300, 500], 'a fixed amount never eats into an add-on')
    const otherCurrency = renewalAmounts(sub(1000, 1, null), [addOn('ot_1', 500, 1, 'EUR')])
    assert.deepEqual([otherCurrency.subtotal, otherCurrency.lineItems.length], [1000, 1], 'an add-on in another currency is not on this charge')
  })

  test('every amount is an integer and amount = subtotal - discount, never below 0', () => {
    for (let base = 0; base <= 2000; base += 7) {
      for (const value of [1, 3, 15, 33, 50, 66, 99, 100]) {
        const amounts = renewalAmounts(sub(base, 1, percent(value)), [addOn('ot', 13, 3)])
        assert.ok(Number.isInteger(amounts.discountAmount) && amounts.discountAmount >= 0 && amounts.discountAmount <= base)
        assert.equal(amounts.amount, amounts.subtotal - amounts.discountAmount)
        assert.ok(amounts.amount >= 0)
        assert.ok(Math.abs(amounts.discountAmount - (base * value) / 100) <= 0.5)
      }
    }
  })

  test('a succeeded charge uses one cycle of the discount it applied, and the last one ends it', () => {
    assert.deepEqual(discountCycleUsed({ discount_id: 'disc_1', discount_cycles_remaining: 2 }, 'disc_1'), { discount_cycles_remaining: 1 })
    assert.deepEqual(discountCycleUsed({ discount_id: 'disc_1', discount_cycles_remaining: 1 }, 'disc_1'), { discount_id: null, discount: null, discount_cycles_remaining: null })
    assert.deepEqual(discountCycleUsed({ discount_id: 'disc_1', discount_cycles_remaining: null }, 'disc_1'), {}, 'forever')
    assert.deepEqual(discountCycleUsed({ discount_id: 'disc_3', discount_cycles_remaining: 2 }, 'disc_1'), {}, 'replaced meanwhile: the new one is untouched')
    assert.deepEqual(discountCycleUsed({ discount_id: 'disc_1', discount_cycles_remaining: 2 }, null), {}, 'a charge made without it')
  })
})
