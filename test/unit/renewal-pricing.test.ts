import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import fc from 'fast-check'
import { MAX_AMOUNT, MAX_CHARGE_AMOUNT, MAX_RENEWAL_AMOUNT } from '../../src/lib/money.ts'
import { renewalAmounts, renewalShipping, testTax, type RenewalPricing } from '../../src/modules/billing/renewal-plan.ts'
import { estimatedPlatformTax } from '../../src/modules/billing/upcoming-renewal.ts'

/**
 * How a renewal is priced beyond its lines (docs/contract.md, Renewal pricing): the shipping policy,
 * the test gateway's tax, and the sum the charge collects. Pure functions, so every rule is checked
 * here by hand and the sum over generated inputs.
 */
const ADDRESS = { name: 'Ada Lovelace', line1: '1 Analytical Street', city: 'London', postal_code: 'N1 9GU', country: 'GB' }
const line = { amount: 1800, quantity: 2, currency: 'USD', product_id: 'prod_1', discount: null }
const pricing = (overrides: Partial<RenewalPricing> = {}): RenewalPricing => ({ gateway: 'test', currency: 'USD', renewal_shipping: 'checkout_rate', renewal_shipping_amount: null, test_tax_rate_bps: 0, ...overrides })
const shipped = { ...line, shipping_address: ADDRESS, shipping_method: 'Ground', shipping_amount: 599 }

describe('renewal pricing', () => {
  test('test tax: basis points of the taxable amount, rounded half up, in integers', () => {
    assert.equal(testTax(1000, 825), 83, '82.5 rounds up')
    assert.equal(testTax(999, 825), 82, '82.4175 rounds down')
    assert.equal(testTax(1, 5000), 1, '0.5 rounds up')
    assert.equal(testTax(1, 4999), 0)
    assert.equal(testTax(3240, 825), 267)
    assert.equal(testTax(0, 825), 0)
    assert.equal(testTax(1000, 0), 0)
    assert.equal(testTax(1000, 10_000), 1000, '100% doubles it')
    // The largest renewal at the largest rate stays an exact integer.
    assert.equal(testTax(MAX_RENEWAL_AMOUNT, 10_000), MAX_RENEWAL_AMOUNT)
    assert.ok(Number.isSafeInteger(MAX_RENEWAL_AMOUNT * 10_000 + 5_000))
  })

  test('shipping by policy: checkout_rate and requote keep the checkout\'s rate, flat is the store\'s, free is 0; nothing ships without an address', () => {
    assert.deepEqual(renewalShipping(shipped, pricing()), { amount: 599, method: 'Ground' })
    assert.deepEqual(renewalShipping(shipped, pricing({ renewal_shipping: 'requote' })), { amount: 599, method: 'Ground' })
    assert.deepEqual(renewalShipping(shipped, pricing({ renewal_shipping: 'flat', renewal_shipping_amount: 450 })), { amount: 450, method: 'Ground' })
    assert.deepEqual(renewalShipping(shipped, pricing({ renewal_shipping: 'free' })), { amount: 0, method: 'Ground' })
    assert.deepEqual(renewalShipping({ ...shipped, shipping_address: null }, pricing({ renewal_shipping: 'flat', renewal_shipping_amount: 450 })), { amount: 0, method: null })
    assert.deepEqual(renewalShipping({ ...shipped, currency: 'EUR' }, pricing({ renewal_shipping: 'flat', renewal_shipping_amount: 450 })), { amount: 599, method: 'Ground' }, "a flat rate in dollars is not a euro subscription's: it keeps its checkout's")
    assert.deepEqual(renewalShipping({ ...shipped, shipping_method: null, shipping_amount: null }, pricing()), { amount: 0, method: null }, 'a checkout that named no shipping keeps none')
  })

  test('the sum: tax on the discounted goods only, shipping neither taxed nor discounted; the platform gateway adds no tax of its own', () => {
    const discounted = { ...shipped, discount: { id: 'dsc_1', code: 'TEN', type: 'percentage' as const, value: 10, currency: null, duration: 'forever' as const } }
    const amounts = renewalAmounts(discounted, [], pricing({ test_tax_rate_bps: 825 }))
    assert.deepEqual([amounts.subtotal, amounts.discountAmount, amounts.shippingAmount, amounts.taxAmount, amounts.amount], [3600, 360, 599, 267, 4106])
    const platform = renewalAmounts(discounted, [], pricing({ gateway: 'platform', test_tax_rate_bps: 825 }))
    assert.deepEqual([platform.shippingAmount, platform.taxAmount, platform.amount], [599, 0, 3839])
    const unpriced = renewalAmounts(discounted)
    assert.deepEqual([unpriced.shippingAmount, unpriced.taxAmount, unpriced.amount], [0, 0, 3240], 'without the store, the lines alone')
  })

  test('for any lines, discount, rate and policy: amount = subtotal - discount + shipping + tax, every part a non-negative integer within its bound', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: MAX_AMOUNT }),
        fc.integer({ min: 1, max: 100 }),
        fc.option(fc.oneof(fc.record({ type: fc.constant('percentage' as const), value: fc.integer({ min: 1, max: 100 }) }), fc.record({ type: fc.constant('fixed_amount' as const), value: fc.integer({ min: 1, max: MAX_AMOUNT }) }))),
        fc.integer({ min: 0, max: 10_000 }),
        fc.constantFrom('checkout_rate', 'requote', 'flat', 'free'),
        fc.integer({ min: 0, max: MAX_AMOUNT }),
        fc.option(fc.integer({ min: 0, max: MAX_AMOUNT })),
        fc.boolean(),
        (amount, quantity, discount, bps, policy, flat, kept, hasAddress) => {
          const subscription = {
            ...line,
            amount,
            quantity,
            discount: discount ? { id: 'dsc_1', code: 'ANY', duration: 'forever' as const, currency: discount.type === 'fixed_amount' ? 'USD' : null, ...discount } : null,
            shipping_address: hasAddress ? ADDRESS : null,
            shipping_method: kept === null ? null : 'Ground',
            shipping_amount: kept,
          }
          const a = renewalAmounts(subscription, [], pricing({ test_tax_rate_bps: bps, renewal_shipping: policy, renewal_shipping_amount: flat }))
          assert.equal(a.amount, a.subtotal - a.discountAmount + a.shippingAmount + a.taxAmount)
          for (const part of [a.subtotal, a.discountAmount, a.shippingAmount, a.taxAmount, a.amount]) assert.ok(Number.isSafeInteger(part) && part >= 0)
          assert.ok(a.discountAmount <= a.subtotal)
          assert.ok(a.taxAmount <= a.subtotal - a.discountAmount, 'at most 100% of the goods')
          assert.ok(a.amount <= MAX_CHARGE_AMOUNT)
          if (!hasAddress) assert.equal(a.shippingAmount, 0)
        },
      ),
      { numRuns: 500 },
    )
  })
})

describe('the upcoming renewal\'s tax estimate on a platform store', () => {
  test('the rate the latest paid renewal was taxed at over its goods and shipping, on this one\'s, rounded half up; none without one', () => {
    assert.equal(estimatedPlatformTax(3399, { base: 3399, tax: 168 }), 168, 'the same goods and shipping: the same tax')
    assert.equal(estimatedPlatformTax(1400, { base: 2800, tax: 167 }), 84, '83.5 rounds up')
    // $10 goods + $10 shipping both taxed 10% ($2): three units and the same shipping ($40) estimate $4, not $6.
    assert.equal(estimatedPlatformTax(4000, { base: 2000, tax: 200 }), 400)
    assert.equal(estimatedPlatformTax(2800, undefined), 0)
    assert.equal(estimatedPlatformTax(2800, { base: 2800, tax: 0 }), 0)
    assert.equal(estimatedPlatformTax(0, { base: 2800, tax: 168 }), 0)
  })
})
