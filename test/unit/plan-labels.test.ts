import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { planLabel, planPriceText } from '../../src/web/shared/plan-format.ts'

/**
 * How a plan is named in the console and the portal (issue 26 points 2 and 4): product, plan and
 * price, so two products' "Every month" plans never read alike; a prepaid plan per cycle and per
 * charge with the span the charge pays for. Before, a prepaid plan read "$20.40 every month, $61.20
 * per charge" (and "$61.20 every month" in the console before that) and no label named the product.
 */
const plan = (fields: Partial<Parameters<typeof planPriceText>[0]> & { name?: string }) => ({
  name: 'Every month',
  amount: 1800,
  currency: 'USD',
  interval: 'month' as const,
  interval_count: 1,
  prepaid_cycles: null,
  ...fields,
})

describe('plan labels', () => {
  test('a plan is named with its product and price: "Coffee · Every month · $18.00 every month"', () => {
    assert.equal(planLabel('Coffee', plan({}), 'en-US'), 'Coffee · Every month · $18.00 every month')
    assert.equal(planLabel('Tea', plan({ amount: 1500 }), 'en-US'), 'Tea · Every month · $15.00 every month')
    assert.notEqual(planLabel('Coffee', plan({}), 'en-US'), planLabel('Tea', plan({}), 'en-US'), 'two products\' "Every month" plans are told apart')
  })

  test('without a product name (unreadable), the plan and its price', () => {
    assert.equal(planLabel(null, plan({ name: 'Every 2 weeks', amount: 900, interval: 'week', interval_count: 2 }), 'en-US'), 'Every 2 weeks · $9.00 every 2 weeks')
    assert.equal(planLabel('', plan({}), 'en-US'), 'Every month · $18.00 every month')
  })

  test('a prepaid plan: "$20.40 a month, $61.20 every 3 months"', () => {
    assert.equal(planPriceText(plan({ amount: 6120, prepaid_cycles: 3 }), 'en-US'), '$20.40 a month, $61.20 every 3 months')
    assert.equal(planLabel('Darjeeling Tea', plan({ name: 'Three tins prepaid', amount: 6120, prepaid_cycles: 3 }), 'en-US'), 'Darjeeling Tea · Three tins prepaid · $20.40 a month, $61.20 every 3 months')
    assert.equal(planPriceText(plan({ amount: 1800, interval: 'week', prepaid_cycles: 2 }), 'en-US'), '$9.00 a week, $18.00 every 2 weeks')
    assert.equal(planPriceText(plan({ amount: 24000, interval: 'year', prepaid_cycles: 2 }), 'en-US'), '$120.00 a year, $240.00 every 2 years')
    // A cycle of several intervals: per cycle "every 2 weeks", the charge the weeks it pays for.
    assert.equal(planPriceText(plan({ amount: 3600, interval: 'week', interval_count: 2, prepaid_cycles: 4 }), 'en-US'), '$9.00 every 2 weeks, $36.00 every 8 weeks')
  })

  test('a plan charged each cycle: "$X every N"', () => {
    assert.equal(planPriceText(plan({}), 'en-US'), '$18.00 every month')
    assert.equal(planPriceText(plan({ amount: 2100, interval: 'week', interval_count: 6 }), 'en-US'), '$21.00 every 6 weeks')
    assert.equal(planPriceText(plan({ amount: 1350, currency: 'JPY', interval: 'day' }), 'en-US'), '¥1,350 every day')
  })
})
