/**
 * How a plan's price is put in words, shared by the storefront widget, the subscriber portal and the
 * merchant console (so a prepaid plan reads "$20.40 a month, $61.20 every 3 months" in each, and a
 * plan is named with its product: "Coffee · Every month · $18.00 every month"). No DOM, no dependencies.
 */
import { formatMoney } from './money.ts'

/** The plan fields the widget reads (the `Plan` schema of openapi.json; more fields arrive and pass through). */
export interface Plan {
  id: string
  name: string
  amount: number
  currency: string
  interval: 'day' | 'week' | 'month' | 'year'
  interval_count: number
  trial_days: number
  prepaid_cycles: number | null
  [field: string]: unknown
}

/** Money in integer minor units of an ISO 4217 currency, as the API sends it. */
export interface Money {
  amount: number
  currency: string
}

export { formatMoney }

/** `n` intervals in words: (1, "week") -> "week", (2, "week") -> "2 weeks". */
export function span(count: number, interval: string): string {
  return count === 1 ? interval : `${count} ${interval}s`
}

/** How often a plan delivers: "every month", "every 2 weeks". */
export function intervalText(plan: Plan): string {
  return `every ${span(plan.interval_count, plan.interval)}`
}

/**
 * What one cycle costs. A prepaid plan's amount pays for its whole block of `prepaid_cycles`
 * cycles in one charge, so per cycle it is that amount divided (minor units, possibly fractional).
 */
export function perCycle(plan: Pick<Plan, 'amount' | 'prepaid_cycles'>): number {
  return plan.amount / (plan.prepaid_cycles ?? 1)
}

/**
 * Whole percent a cycle saves against buying once, rounded down so the widget never overstates it;
 * null when there is nothing to compare (no one-time price, another currency, no saving).
 */
export function savingsPercent(plan: Plan, oneTime: Money | null): number | null {
  if (!oneTime || oneTime.amount <= 0 || oneTime.currency !== plan.currency) return null
  const cycles = plan.prepaid_cycles ?? 1
  // Integers only: (one-time price of the block - the block's price) / one-time price of the block.
  const percent = Math.floor(((oneTime.amount * cycles - plan.amount) * 100) / (oneTime.amount * cycles))
  return percent >= 1 ? percent : null
}

/** The small print under a plan's price: trial, prepaid block, and what one charge is. */
export function planNotes(plan: Plan, locale?: string): string[] {
  const notes: string[] = []
  if (plan.trial_days > 0) notes.push(`${plan.trial_days}-day free trial`)
  if (plan.prepaid_cycles) {
    notes.push(`${span(plan.prepaid_cycles * plan.interval_count, plan.interval)} prepaid: ${formatMoney(plan.amount, plan.currency, locale)} per charge`)
  }
  return notes
}

/**
 * A plan's price in one line: "$18.00 every month", "$9.00 every 2 weeks"; a prepaid plan per cycle
 * and per charge, the charge with the span it pays for: "$20.40 a month, $61.20 every 3 months"
 * ("$9.00 every 2 weeks, $36.00 every 8 weeks" when a cycle is several intervals). One item: what a
 * subscription charges is the service's to say (GET .../upcoming).
 */
export function planPriceText(plan: Pick<Plan, 'amount' | 'currency' | 'interval' | 'interval_count' | 'prepaid_cycles'>, locale?: string): string {
  const charge = formatMoney(plan.amount, plan.currency, locale)
  if (!plan.prepaid_cycles) return `${charge} ${intervalText(plan as Plan)}`
  const cycle = plan.interval_count === 1 ? `a ${plan.interval}` : intervalText(plan as Plan)
  return `${formatMoney(perCycle(plan), plan.currency, locale)} ${cycle}, ${charge} every ${span(plan.prepaid_cycles * plan.interval_count, plan.interval)}`
}

/**
 * A plan named so that no two products' plans read alike: "Coffee · Every month · $18.00 every month"
 * (product, plan, price). Without the product's name (not readable), the plan and its price.
 */
export function planLabel(productName: string | null | undefined, plan: Pick<Plan, 'name' | 'amount' | 'currency' | 'interval' | 'interval_count' | 'prepaid_cycles'>, locale?: string): string {
  return [productName, plan.name, planPriceText(plan, locale)].filter((part) => part !== null && part !== undefined && part !== '').join(' · ')
}
