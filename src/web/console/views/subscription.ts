import { all, api, ApiError, errorText, planById } from '../api.ts'
import type { ConsoleApp } from '../app.ts'
import { h, replaceChildren, type Child } from '../../shared/dom.ts'
import { CHARGE_STATUS_LABEL, chargeStatusLabel, currentTimeZone, date, dateTime, eventLabel, isoToStoreInput, money, STATUS_LABEL, storeTimeToIso, toMinor } from '../format.ts'
import { paths } from '../router.ts'
import type { Charge, Discount, Event, Onetime, Plan, Product, Subscription, SubscriptionWithSubscriber, UpcomingRenewal } from '../types.ts'
import { discountTerms } from './discounts.ts'
import { changeCardForm, paymentRecoverySection, recoveryState } from './payment-recovery.ts'
import { actionForm, badge, definitionList, errorBox, field, input, loading, pageHeader, section, select, table } from '../ui.ts'
import { allPlans, allProducts, consolePlanLabel, plansByProduct, STATUS_TONE } from './subscriptions.ts'
import { planPriceText } from '../../shared/plan-format.ts'

export const CHARGE_TONE: Record<string, string> = { succeeded: 'good', pending: 'info', failed: 'bad', requires_review: 'warn' }

/** A charge's status badge: a refunded charge says so ("Refunded", "Partly refunded ($5.00)") instead of "Succeeded". */
export function chargeBadge(c: Charge): HTMLElement {
  const tone = c.status === 'succeeded' && (c.refund_status === 'partial' || c.refund_status === 'full') ? 'neutral' : (CHARGE_TONE[c.status] ?? 'neutral')
  return badge(chargeStatusLabel(c), tone)
}

/** One subscription: its subscriber, plan, amounts, next charge, charges, event timeline and every admin action. */
export async function renderSubscription(app: ConsoleApp, isCurrent: () => boolean, id: string, { focus = true }: { focus?: boolean } = {}): Promise<void> {
  if (focus) {
    replaceChildren(app.main, h('p', null, h('a', { href: paths.subscriptions(), class: 'back' }, '← Subscriptions')), pageHeader('Subscription'), loading())
  }
  let subscription: SubscriptionWithSubscriber
  let charges: Charge[]
  let events: Event[]
  let plan: Plan | null
  let onetimes: Onetime[]
  let upcoming: UpcomingRenewal | ApiError
  let names: Map<string, string>
  let products: Map<string, Product>
  try {
    ;[subscription, charges, events, onetimes, upcoming] = await Promise.all([
      api.subscription(id),
      all((cursor) => api.charges({ subscription_id: id, cursor, limit: 100 }), 200),
      subscriptionEvents(id),
      api.onetimes(id).then((page) => page.data, () => []),
      // The next renewal as the service prices it; 409 says why there is none.
      api.upcoming(id).catch((error: unknown) => {
        if (error instanceof ApiError) return error
        throw error
      }),
    ])
    ;[plan, names, products] = await Promise.all([planById(subscription.plan_id), productNames(upcoming), allProducts().catch(() => new Map<string, Product>())])
    events = await withRefundEvents(events, charges)
  } catch (error) {
    if (!isCurrent()) return
    replaceChildren(app.main, h('p', null, h('a', { href: paths.subscriptions(), class: 'back' }, '← Subscriptions')), pageHeader('Subscription'), errorBox(error))
    app.finishRender('Subscription')
    return
  }
  if (!isCurrent()) return
  const s = subscription
  const email = s.subscriber?.email ?? s.subscriber_id
  // The product and plan in the heading ("Subscription of ada@example.com to Coffee · Every month"): two products' plans of one name are told apart.
  const named = [products.get(s.product_id)?.name, plan?.name].filter(Boolean).join(' · ')
  const heading = named ? `Subscription of ${email} to ${named}` : `Subscription of ${email}`
  const reload = () =>
    renderSubscription(app, isCurrent, id, { focus: false }).then(() => {
      if (!isCurrent()) return
      // The form that had the focus is gone: the heading takes it, and the result is read out.
      app.focusHeading()
      app.announce(app.takeFlash() ?? 'Updated.')
    })

  const facts: [string, Child][] = [
    ['Status', h('span', null, badge(STATUS_LABEL[s.status] ?? s.status, STATUS_TONE[s.status] ?? 'neutral'), s.cancel_at_period_end && s.status !== 'cancelled' ? ` cancels on ${date(s.current_period_end)}` : '', s.status === 'paused' && s.resume_at ? ` until ${date(s.resume_at)}` : '')],
    // Their page: every subscription, address, card, charge and email of theirs.
    ['Subscriber', h('span', null, h('a', { href: paths.subscriber(s.subscriber_id) }, s.subscriber?.name || email), s.subscriber?.name ? `, ${email}` : '')],
    ['Plan', plan ? consolePlanLabel(plan, products) : s.plan_id],
    ['Quantity', String(s.quantity)],
    // A prepaid subscription's amount pays its whole block: per cycle and per charge, as the portal says it.
    ['Price', `${s.quantity > 1 ? `${s.quantity} × ` : ''}${planPriceText({ amount: s.amount, currency: s.currency, interval: s.interval, interval_count: s.interval_count, prepaid_cycles: s.prepaid?.cycles_total ?? null })}`],
    ['Next charge', upcoming instanceof ApiError ? '—' : `${money(upcoming.amount, upcoming.currency)} on ${dateTime(upcoming.next_charge_at)}${s.skip_next ? ` (the renewal of ${date(s.next_charge_at)} is skipped)` : ''}`],
    ['Current period', s.current_period_start ? `${date(s.current_period_start)} to ${date(s.current_period_end)}` : '—'],
    ['Started', date(s.start_at)],
    ['Payment method', s.payment_instrument ? `${s.payment_instrument.brand ?? 'Card'} ending in ${s.payment_instrument.last_4 ?? '?'}` : s.payment_instrument_id],
  ]
  if (s.discount) facts.push(['Discount', `${s.discount.code}: ${discountTerms({ ...s.discount, currency: s.currency })}, ${s.discount.cycles_remaining === null ? 'every charge' : `${s.discount.cycles_remaining} more ${s.discount.cycles_remaining === 1 ? 'charge' : 'charges'}`}`])
  if (s.cancelled_at) {
    const reasonLabel = s.cancellation_reason_code ? (app.store?.cancellation_reasons.find((r) => r.code === s.cancellation_reason_code)?.label ?? s.cancellation_reason_code) : null
    facts.push(['Cancelled', `${dateTime(s.cancelled_at)}${[reasonLabel, s.cancellation_reason].filter(Boolean).length ? `: ${[reasonLabel, s.cancellation_reason].filter(Boolean).join('; ')}` : ''}`])
  }
  // A renewal waiting for stock (store policy `retry`) is no payment problem: it says when it is tried again.
  if (s.out_of_stock_since) facts.push(['Waiting for stock', `An item is out of stock since ${dateTime(s.out_of_stock_since)}; tried again ${dateTime(s.next_charge_at)}, then skipped if still out`])
  if (s.billing_issue) facts.push(['Billing issue', h('span', { class: 'issue' }, `${s.billing_issue.message} (since ${dateTime(s.billing_issue.since)})`)])
  if (s.shipping_address) facts.push(['Ships to', [s.shipping_address.name, s.shipping_address.line1, s.shipping_address.city, s.shipping_address.postal_code, s.shipping_address.country].filter(Boolean).join(', ')])

  replaceChildren(
    app.main,
    h('p', null, h('a', { href: paths.subscriptions(), class: 'back' }, '← Subscriptions')),
    pageHeader(heading, h('p', { class: 'subtitle' }, h('code', null, s.id))),
    // A failed renewal comes first: what failed, what comes next, and the ways out (payment-recovery.ts).
    paymentRecoverySection(app, s, email, charges, reload),
    h('div', { class: 'detail-grid' }, h('div', null, section('Next order', nextRenewal(s, upcoming, names)), section('Details', definitionList(facts))), section('Actions', ...actions(app, s, reload, recoveryState(s, charges) !== null))),
    section('One-time add-ons', addOns(s, onetimes, upcoming, reload)),
    section('Charges', chargesTable(app, charges, reload)),
    section('Timeline', timeline(events)),
  )
  if (focus) {
    app.finishRender(heading, { focus: false })
    app.refocusHeading()
  }
}

/** The names of the products on the next renewal (the admin catalogue, one read each). */
async function productNames(upcoming: UpcomingRenewal | ApiError): Promise<Map<string, string>> {
  const names = new Map<string, string>()
  if (upcoming instanceof ApiError) return names
  await Promise.all([...new Set(upcoming.line_items.map((line) => line.product_id))].map((id) => api.product(id).then((p) => names.set(id, p.name), () => {})))
  return names
}

/**
 * The next order as the service priced it (GET .../upcoming): when, its lines, discount, shipping,
 * tax and total, the same figures the charge will carry, shown as they are. Nothing is added up in
 * the browser.
 */
function nextRenewal(s: Subscription, upcoming: UpcomingRenewal | ApiError, names: Map<string, string>): HTMLElement {
  if (upcoming instanceof ApiError) {
    return h('p', { 'data-upcoming': 'none' }, upcoming.code === 'invalid_state' ? `None. ${errorText(upcoming).replace(/^There is no upcoming renewal: /i, '').replace(/^./, (c) => c.toUpperCase())}` : errorText(upcoming))
  }
  const money$ = (minor: number) => money(minor, upcoming.currency)
  const row = (label: Child, amount: Child, className?: string) => h('li', className ? { class: className } : null, h('span', null, label), h('span', { class: 'amount' }, amount))
  return h(
    'div',
    { 'data-upcoming': upcoming.subscription_id },
    h(
      'p',
      { class: 'next-order-when' },
      h('strong', null, dateTime(upcoming.next_charge_at)),
      `, for ${date(upcoming.period_start)} to ${date(upcoming.period_end)}`,
      // A skipped renewal is not an order: the service's next one is the renewal after it.
      s.skip_next && s.next_charge_at ? ` (the renewal of ${date(s.next_charge_at)} is skipped)` : '',
    ),
    h(
      'ul',
      { class: 'order-lines', 'aria-label': 'The next order, line by line' },
      upcoming.line_items.map((line) =>
        row(`${names.get(line.product_id) ?? line.product_id}, ${line.quantity} × ${money$(line.unit_amount)}${line.type === 'onetime' ? ' (add-on, once)' : ''}`, money$(line.amount)),
      ),
      row('Subtotal', money$(upcoming.subtotal), 'subtotal'),
      row(`Discount${s.discount && upcoming.discount_amount > 0 ? ` ${s.discount.code}` : ''}`, upcoming.discount_amount > 0 ? `− ${money$(upcoming.discount_amount)}` : money$(0)),
      row('Shipping', money$(upcoming.shipping_amount)),
      row('Tax', money$(upcoming.tax_amount)),
      row('Total', h('strong', { 'data-figure': 'upcoming-amount' }, money$(upcoming.amount)), 'total'),
    ),
  )
}

async function subscriptionEvents(id: string): Promise<Event[]> {
  const page = await api.events({ entity_id: id, limit: 100 })
  return page.data
}

/**
 * The subscription's events with the refunds of its charges (`charge.refunded` is about the charge,
 * so the subscription's own list leaves it out), newest first: event ids sort in recorded order.
 */
async function withRefundEvents(events: Event[], charges: Charge[]): Promise<Event[]> {
  const refunded = charges.filter((c) => c.amount_refunded > 0)
  if (refunded.length === 0) return events
  const pages = await Promise.all(refunded.map((c) => api.events({ entity_id: c.id, event_type: 'charge.refunded', limit: 100 })))
  return [...events, ...pages.flatMap((page) => page.data)].sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
}

/**
 * What a `charge.refunded` event says: how much went back, of which charge, why. Its charge lists the
 * refunds as they stood then, so the one it is about is the latest that succeeded.
 */
function refundText(event: Event): string | null {
  if (event.event_type !== 'charge.refunded') return null
  const charge = event.data as Charge
  const refund = (charge.refunds ?? []).filter((r) => r.status === 'succeeded').sort((a, b) => (a.settled_at ?? '').localeCompare(b.settled_at ?? '')).at(-1)
  const amount = money(refund?.amount ?? charge.amount_refunded, charge.currency)
  const of = `of the ${money(charge.amount, charge.currency)} charge of ${date(charge.created_at)}`
  const why = refund?.reason ? `${refund.automatic ? 'refunded by the service: ' : 'reason: '}${refund.reason}` : 'no reason given'
  const total = charge.refund_status === 'full' ? 'now refunded in full' : `${money(charge.amount_refunded, charge.currency)} refunded in all`
  return `${amount} ${of} (${why}); ${total}.`
}

function timeline(events: Event[]): HTMLElement {
  if (events.length === 0) return h('p', null, 'No events yet.')
  return h(
    'ol',
    { class: 'timeline', 'aria-label': 'Events, newest first' },
    events.map((event) => {
      const refund = refundText(event)
      return h(
        'li',
        refund ? { 'data-refund': (event.data as Charge).id } : null,
        h('time', { datetime: event.timestamp }, dateTime(event.timestamp)),
        ' ',
        h('span', { class: 'event-type' }, eventLabel(event.event_type)),
        event.actor ? h('span', { class: 'event-actor' }, ` ${actorText(event.actor)}`) : null,
        refund ? h('span', { class: 'event-detail' }, `: ${refund}`) : null,
        ' ',
        h('code', { class: 'event-code' }, event.event_type),
      )
    }),
  )
}

/** Who did it, as the timeline says it: "by the console", "by key Support bot", "by the subscriber", "by the renewal worker". */
export function actorText(actor: NonNullable<Event['actor']>): string {
  switch (actor.type) {
    case 'admin_key':
      return `by key ${actor.label ?? actor.id ?? ''}`.trimEnd()
    case 'console':
      return 'by the console'
    case 'subscriber':
      return actor.label ? `by the subscriber (${actor.label})` : 'by the subscriber'
    case 'platform':
      return 'by BigCommerce'
    case 'system':
      return actor.label ? `by the ${actor.label.toLowerCase()}` : 'by the service'
  }
}

function chargesTable(app: ConsoleApp, charges: Charge[], reload: () => Promise<unknown>): HTMLElement {
  if (charges.length === 0) return h('p', null, 'No charges yet.')
  return table(
    'Charges, newest first',
    ['Date', 'Status', 'Amount', 'Period', 'Details', 'Actions'],
    charges.map((c) => [
      dateTime(c.created_at),
      chargeBadge(c),
      `${money(c.amount, c.currency)}${c.amount_refunded ? `, ${money(c.amount_refunded, c.currency)} refunded` : ''}`,
      `${date(c.period_start)} to ${date(c.period_end)}`,
      [
        chargeBreakdown(c),
        c.attempt > 1 ? `Retry ${c.attempt - 1}. ` : '',
        c.failure_code ? `${(c.failure_message ?? c.failure_code).replace(/\.+$/, '')}. ` : '',
        c.next_retry_at ? `Next retry ${dateTime(c.next_retry_at)}. ` : '',
        c.review ? `${c.review.message}` : '',
        refundsWaiting(c),
      ].join('') || '—',
      c.status === 'succeeded' && c.amount_refunded < c.amount ? refundForm(app, c, reload) : c.status === 'requires_review' ? resolveForms(c, reload) : '—',
    ]),
    { captionHidden: true },
  )
}

/** Refunds the gateway has not carried out: still awaited, or refused (nothing moved). */
function refundsWaiting(c: Charge): string {
  return (c.refunds ?? [])
    .map((r) =>
      r.status === 'pending' ? `A refund of ${money(r.amount, r.currency)} awaits the gateway. `
      : r.status === 'failed' ? `A refund of ${money(r.amount, r.currency)} was refused${r.failure_message ? `: ${r.failure_message.replace(/\.+$/, '')}` : ''}. `
      : '',
    )
    .join('')
}

/** "Items $36.00 − $3.60 discount + $5.99 shipping (Ground) + $2.67 tax. ", the server's figures; empty when the items are the whole. */
function chargeBreakdown(c: Charge): string {
  if (c.discount_amount === 0 && c.shipping_amount === 0 && c.tax_amount === 0) return ''
  const parts = [`Items ${money(c.subtotal, c.currency)}`]
  if (c.discount_amount > 0) parts.push(`− ${money(c.discount_amount, c.currency)} discount`)
  if (c.shipping_amount > 0) parts.push(`+ ${money(c.shipping_amount, c.currency)} shipping${c.shipping_method ? ` (${c.shipping_method})` : ''}`)
  if (c.tax_amount > 0) parts.push(`+ ${money(c.tax_amount, c.currency)} tax`)
  return `${parts.join(' ')}. `
}

export function refundForm(app: ConsoleApp, charge: Charge, reload: () => Promise<unknown>): HTMLElement {
  const amount = input({ type: 'text', inputmode: 'decimal', name: 'amount', autocomplete: 'off', size: 8 })
  const reason = input({ type: 'text', name: 'reason', maxlength: 500, autocomplete: 'off' })
  void app
  const form = actionForm({
    requires: 'support',
    label: 'Refund',
    className: 'compact',
    danger: true,
    // What is left to refund is the service's to work out: empty asks for all of it.
    fields: [field(`Amount (empty: all that is left of ${money(charge.amount, charge.currency)}${charge.amount_refunded ? `, ${money(charge.amount_refunded, charge.currency)} refunded` : ''})`, amount), field('Reason (optional)', reason)],
    confirm: () => {
      const minor = amount.value.trim() ? toMinor(amount.value, charge.currency) : null
      if (minor !== null && (!Number.isInteger(minor) || minor <= 0)) return 'Enter the amount to refund as a number, or leave it empty to refund all that is left.'
      const what = minor === null ? 'All that is left' : money(minor, charge.currency)
      return { title: 'Refund this charge?', body: [h('p', null, `${what} of the charge of ${dateTime(charge.created_at)} goes back to the subscriber's payment method.`)], confirmLabel: minor === null ? 'Refund all that is left' : `Refund ${money(minor, charge.currency)}`, danger: true }
    },
    run: async () => {
      const minor = amount.value.trim() ? toMinor(amount.value, charge.currency) : undefined
      const answer = await api.refund(charge.id, { ...(minor === undefined ? {} : { amount: minor }), ...(reason.value.trim() ? { reason: reason.value.trim() } : {}) })
      return answer.amount_refunded > charge.amount_refunded ? `Refunded: ${money(answer.amount_refunded, answer.currency)} of this charge is refunded now.` : 'The refund was sent; the gateway has not answered yet.'
    },
    done: reload,
  })
  // Folded away until asked for: a table row stays one line high.
  return h('details', { class: 'disclosure' }, h('summary', null, 'Refund…'), form)
}

export function resolveForms(charge: Charge, reload: () => Promise<unknown>): HTMLElement {
  const make = (outcome: 'succeeded' | 'failed') =>
    actionForm({
      requires: 'support',
      label: outcome === 'succeeded' ? 'Resolve as paid' : 'Resolve as failed',
      className: 'compact inline',
      danger: outcome === 'failed',
      confirm: () => ({
        title: outcome === 'succeeded' ? 'Mark this charge as paid?' : 'Mark this charge as failed?',
        body: [
          h('p', null, `Only do this when the gateway (its dashboard, or the bank) shows that the payment of ${money(charge.amount, charge.currency)} ${outcome === 'succeeded' ? 'went through' : 'did not go through'}.`),
          h('p', null, outcome === 'succeeded' ? 'The subscription moves on to its next period.' : 'The subscription goes into dunning: the payment is retried on the store’s schedule.'),
        ],
        confirmLabel: outcome === 'succeeded' ? 'Mark as paid' : 'Mark as failed',
      }),
      run: async () => {
        const answer = await api.resolve(charge.id, outcome)
        return `The charge is now ${(CHARGE_STATUS_LABEL[answer.status] ?? answer.status).toLowerCase()}.`
      },
      done: reload,
    })
  return h('div', { class: 'inline-actions' }, make('succeeded'), make('failed'))
}

function actions(app: ConsoleApp, s: Subscription, reload: () => Promise<unknown>, owesPayment = false): HTMLElement[] {
  const forms: HTMLElement[] = []
  const ended = s.status === 'cancelled' || s.status === 'expired'
  const zone = currentTimeZone()
  const simple = (action: string, label: string, question: string, body: string, done: string, danger = false) =>
    actionForm({
      requires: 'support',
      label,
      danger,
      confirm: () => ({ title: question, body: [h('p', null, body)], confirmLabel: label }),
      run: async () => {
        await api.action(s.id, action)
        return done
      },
      done: reload,
    })

  if (s.status === 'cancelled') return [group('Reactivate', reactivateForm(s, reload))]
  if (ended) return [h('p', null, 'This subscription has ended: nothing more can be changed.')]

  if (s.status === 'paused') {
    forms.push(group('Resume', simple('resume', 'Resume', 'Resume this subscription?', 'Renewals start again from now on.', 'Resumed: the subscription is active again.')))
  } else {
    const until = input({ type: 'date', name: 'resume_at' })
    forms.push(
      group(
        'Pause',
        actionForm({
          requires: 'support',
          label: 'Pause',
          fields: [field(`Resume on (optional, ${zone})`, until, { hint: 'Empty: paused until resumed here or by the subscriber.' })],
          confirm: () => {
            if (until.value && !storeTimeToIso(until.value)) return 'Enter the date to resume on, or leave it empty.'
            return { title: 'Pause this subscription?', body: [h('p', null, until.value ? `No renewals until ${date(storeTimeToIso(until.value))}; it resumes by itself then.` : 'No renewals until it is resumed.')], confirmLabel: 'Pause' }
          },
          run: async () => {
            const resumeAt = until.value ? storeTimeToIso(until.value) : null
            await api.action(s.id, 'pause', resumeAt ? { resume_at: resumeAt } : {})
            return resumeAt ? `Paused until ${date(resumeAt)}.` : 'Paused: no renewals until it is resumed.'
          },
          done: reload,
        }),
      ),
    )
  }

  if (s.status === 'active' || s.status === 'pending') {
    forms.push(
      group(
        s.skip_next ? 'Undo skip' : 'Skip',
        s.skip_next
          ? simple('unskip', 'Undo the skip', 'Charge the next renewal after all?', `The renewal on ${date(s.next_charge_at)} is charged as usual.`, 'The next renewal will be charged.')
          : simple('skip', 'Skip the next renewal', 'Skip the next renewal?', `The renewal on ${date(s.next_charge_at)} is not charged and the period moves on.`, 'The next renewal is skipped.'),
      ),
    )
  }

  // Each plan named with its product ("Tea · Every month · $18.00 every month"): a swap to another
  // product's plan of the same name cannot pass unseen.
  const planSelect = select('plan_id', [['', 'Choose a plan']])
  let products = new Map<string, Product>()
  let planList: Plan[] = []
  void Promise.all([allPlans(), allProducts().catch(() => products)]).then(([plans, found]) => {
    products = found
    planList = plans
    for (const plan of plansByProduct(plans.filter((p) => p.active && p.id !== s.plan_id && p.currency === s.currency), products)) {
      planSelect.append(h('option', { value: plan.id }, consolePlanLabel(plan, products)))
    }
  }, () => {})
  forms.push(
    group(
      'Change plan',
      actionForm({
        requires: 'support',
        label: 'Change plan',
        fields: [field('New plan', planSelect, { hint: 'From the next charge.' })],
        confirm: () => {
          if (!planSelect.value) return 'Choose the plan to move to.'
          const label = planSelect.selectedOptions[0]?.textContent ?? planSelect.value
          const current = planList.find((p) => p.id === s.plan_id)
          const chosen = planList.find((p) => p.id === planSelect.value)
          const body = [
            ...(current ? [h('p', null, `Now: ${consolePlanLabel(current, products)}.`)] : []),
            h('p', null, `From the next charge: ${label}.`),
          ]
          // Another product's plan: said in so many words, so coffee is never swapped to tea unseen.
          if (chosen && chosen.product_id !== s.product_id) {
            body.push(h('p', { 'data-product-change': '' }, h('strong', null, `This changes the product: ${products.get(s.product_id)?.name ?? 'the current product'} becomes ${products.get(chosen.product_id)?.name ?? 'another product'}.`)))
          }
          return { title: 'Change the plan?', body, confirmLabel: 'Change plan' }
        },
        run: async () => {
          await api.action(s.id, 'swap', { plan_id: planSelect.value })
          return 'The plan is changed from the next charge.'
        },
        done: reload,
      }),
    ),
  )

  const quantity = input({ type: 'number', name: 'quantity', min: 1, max: 10000, step: 1, value: s.quantity, inputmode: 'numeric' })
  forms.push(
    group(
      'Quantity',
      actionForm({
        requires: 'support',
        label: 'Change quantity',
        fields: [field('New quantity', quantity, { hint: 'From the next charge.' })],
        confirm: () => {
          const value = Number(quantity.value)
          if (!Number.isInteger(value) || value < 1) return 'Enter a whole number of at least 1.'
          return { title: 'Change the quantity?', body: [h('p', null, `From the next charge: ${value} × ${money(s.amount, s.currency)} each renewal.`)], confirmLabel: 'Change quantity' }
        },
        run: async () => {
          await api.action(s.id, 'quantity', { quantity: Number(quantity.value) })
          return `The quantity is ${quantity.value} from the next charge.`
        },
        done: reload,
      }),
    ),
  )

  if (s.status === 'active' && owesPayment) {
    // Order now is refused in dunning: the failed renewal is what to charge (Payment recovery, above).
    forms.push(group('Order now', h('p', { class: 'hint', 'data-order-now': 'dunning' }, 'Not while a failed payment is retried. Use Payment recovery above: Retry now, Send update-card link or Change card.')))
  } else if (s.status === 'active') {
    forms.push(
      group(
        'Order now',
        simple('charge-now', 'Charge the renewal now', 'Charge the next renewal now?', `The renewal of ${date(s.next_charge_at)} is charged now, and the next one follows ${lengthText(s)} after today.`, 'The renewal was charged now: its outcome shows under Charges.'),
      ),
    )
    const when = input({ type: 'datetime-local', name: 'next_charge_at', value: s.next_charge_at ? isoToStoreInput(s.next_charge_at) : '' })
    forms.push(
      group(
        'Reschedule',
        actionForm({
          requires: 'support',
          label: 'Reschedule',
          fields: [field(`Next charge on (${zone})`, when, { hint: 'Later renewals follow one interval apart from it; at most a year ahead.' })],
          confirm: () => {
            const at = storeTimeToIso(when.value)
            if (!at) return 'Choose the date and time of the next charge.'
            return { title: 'Move the next charge?', body: [h('p', null, `The next renewal is charged on ${dateTime(at)} instead of ${dateTime(s.next_charge_at)}.`)], confirmLabel: 'Reschedule' }
          },
          run: async () => {
            const answer = await api.action(s.id, 'reschedule', { next_charge_at: storeTimeToIso(when.value) })
            return `The next charge is on ${dateTime(answer.next_charge_at)}.`
          },
          done: reload,
        }),
      ),
    )
  }

  // Another card of the subscriber; in dunning it is one of the Payment recovery actions instead.
  if (!owesPayment) forms.push(group('Payment method', changeCardForm(s, reload, { owesPayment: false, storeGateway: app.store?.gateway })))

  forms.push(group('Discount', discountForm(s, reload)))

  const reasons = app.store?.cancellation_reasons ?? []
  const reasonCode = select('reason_code', [['', reasons.length ? 'Choose a reason' : 'No reasons set (Settings)'], ...reasons.map((r) => [r.code, r.label] as [string, string])])
  const reason = h('textarea', { name: 'reason', rows: 2, maxlength: 500 })
  const atEnd = h('input', { type: 'checkbox', name: 'at_period_end' })
  forms.push(
    group(
      'Cancel',
      actionForm({
        requires: 'support',
        label: 'Cancel subscription',
        danger: true,
        fields: [
          field('Reason', reasonCode, { hint: 'The store’s cancellation reasons (Settings).' }),
          field('Note (optional with a reason)', reason, { hint: 'Kept with the subscription and sent in its events.' }),
          h('div', { class: 'field checkbox' }, atEnd, h('label', { for: (atEnd.id = `at-end-${s.id}`) }, 'At the end of the paid period')),
        ],
        confirm: () => {
          if (!reasonCode.value && !reason.value.trim()) return 'Choose the reason for cancelling, or write it.'
          const label = reasonCode.value ? reasonCode.selectedOptions[0]?.textContent : null
          return {
            title: 'Cancel this subscription?',
            body: [h('p', null, atEnd.checked ? `It stays active until ${date(s.current_period_end)} and then ends.` : 'It ends now: no more renewals.'), h('p', null, `Reason: ${[label, reason.value.trim()].filter(Boolean).join('; ')}`)],
            confirmLabel: 'Cancel subscription',
            danger: true,
          }
        },
        run: async () => {
          await api.action(s.id, 'cancel', { ...(reason.value.trim() ? { reason: reason.value.trim() } : {}), ...(reasonCode.value ? { reason_code: reasonCode.value } : {}), at_period_end: atEnd.checked })
          return atEnd.checked ? 'It will be cancelled at the end of the period.' : 'Cancelled.'
        },
        done: reload,
      }),
    ),
  )
  void app
  return forms
}

/**
 * Reactivate a cancelled subscription on its plan and card: charged now (a new period starts today),
 * or from a chosen date with nothing charged until then (e.g. the end of the period already paid).
 */
function reactivateForm(s: Subscription, reload: () => Promise<unknown>): HTMLElement {
  const zone = currentTimeZone()
  const paidUntil = s.current_period_end && s.cancelled_at && s.current_period_end > s.cancelled_at ? s.current_period_end : null
  const when = input({ type: 'datetime-local', name: 'reactivate_at' })
  return actionForm({
    requires: 'support',
    label: 'Reactivate',
    fields: [
      field(`First charge on (optional, ${zone})`, when, {
        hint: `Empty: charged now, a new period starts today.${paidUntil ? ` The period it paid for before it was cancelled ends ${dateTime(paidUntil)}: choose that to charge nothing until then.` : ''}`,
      }),
    ],
    confirm: () => {
      const at = when.value ? storeTimeToIso(when.value) : null
      if (when.value && !at) return 'Choose the date and time of the first charge, or leave it empty to charge now.'
      return {
        title: 'Reactivate this subscription?',
        body: [
          h('p', null, at ? `It is active again now, on the same plan and card; nothing is charged until ${dateTime(at)}.` : 'It is active again now, on the same plan and card, and a new period is charged now.'),
        ],
        confirmLabel: at ? 'Reactivate' : 'Reactivate and charge now',
      }
    },
    run: async () => {
      const at = when.value ? storeTimeToIso(when.value) : null
      const answer = await api.action(s.id, 'reactivate', at ? { next_charge_at: at } : {})
      return at ? `Reactivated: the first charge is on ${dateTime(answer.next_charge_at)}.` : 'Reactivated: the renewal was charged now; its outcome shows under Charges.'
    },
    done: reload,
  })
}

function discountForm(s: Subscription, reload: () => Promise<unknown>): HTMLElement {
  if (s.discount) {
    const current = s.discount
    return actionForm({
      requires: 'support',
      label: 'Remove discount',
      danger: true,
      confirm: () => ({ title: `Remove ${current.code}?`, body: [h('p', null, 'From the next charge on the subscription pays its full price.')], confirmLabel: 'Remove discount', danger: true }),
      run: async () => {
        await api.removeDiscount(s.id)
        return `${current.code} is removed.`
      },
      done: reload,
    })
  }
  const code = select('discount_code', [['', 'Choose a code']])
  void all((cursor) => api.discounts({ active: true, cursor })).then((discounts: Discount[]) => {
    for (const d of discounts) code.append(h('option', { value: d.code }, `${d.code} (${discountTerms(d)})`))
  }, () => {})
  return actionForm({
    requires: 'support',
    label: 'Apply discount',
    fields: [field('Discount code', code, { hint: 'Active codes of the store (Discounts); from the next charge.' })],
    confirm: () => (code.value ? { title: `Apply ${code.value}?`, body: [h('p', null, `${code.selectedOptions[0]?.textContent ?? code.value} from the next charge; it counts as one redemption.`)], confirmLabel: 'Apply discount' } : 'Choose the discount code.'),
    run: async () => {
      const answer = await api.applyDiscount(s.id, code.value)
      return `${answer.discount?.code ?? code.value} is applied from the next charge.`
    },
    done: reload,
  })
}

const ONETIME_STATUS: Record<string, [string, string]> = { pending: ['Next renewal', 'info'], charged: ['Charged', 'good'], removed: ['Removed', 'muted'] }

function addOns(s: Subscription, onetimes: Onetime[], upcoming: UpcomingRenewal | ApiError, reload: () => Promise<unknown>): HTMLElement {
  const products = new Map<string, Product>()
  const ended = s.status === 'cancelled' || s.status === 'expired'
  const rows = onetimes.map((o) => {
    const name = h('span', null, o.product_id)
    void api.product(o.product_id).then((p) => (name.textContent = p.name), () => {})
    const [label, tone] = ONETIME_STATUS[o.status] ?? [o.status, 'neutral']
    return [
      name,
      String(o.quantity),
      money(o.unit_amount, o.currency),
      // A pending add-on's amount as the next renewal carries it; a charged one's is on its charge.
      (() => {
        const line = upcoming instanceof ApiError ? undefined : upcoming.line_items.find((entry) => entry.onetime_id === o.id)
        return line ? money(line.amount, o.currency) : '—'
      })(),
      badge(label, tone),
      dateTime(o.created_at),
      o.status === 'pending'
        ? actionForm({
            requires: 'support',
            label: 'Remove',
            className: 'compact',
            danger: true,
            confirm: () => ({ title: 'Remove this add-on?', body: [h('p', null, `${name.textContent} × ${o.quantity} is not charged with the next renewal.`)], confirmLabel: 'Remove add-on', danger: true }),
            run: async () => {
              await api.removeOnetime(s.id, o.id)
              return 'The add-on is removed.'
            },
            done: reload,
          })
        : '—',
    ]
  })
  const list = onetimes.length ? table('One-time add-ons', ['Product', 'Quantity', 'Unit price', 'On the next renewal', 'Status', 'Added', 'Actions'], rows, { captionHidden: true }) : h('p', null, 'No add-ons.')
  if (ended) return list
  const product = select('product_id', [['', 'Choose a product']])
  void all((cursor) => api.products(cursor)).then((all) => {
    for (const p of all.filter((p) => p.active && p.one_time_price?.currency === s.currency)) {
      products.set(p.id, p)
      product.append(h('option', { value: p.id }, `${p.name} (${money(p.one_time_price!.amount, p.one_time_price!.currency)})`))
    }
  }, () => {})
  const quantity = input({ type: 'number', name: 'onetime_quantity', min: 1, max: 100, step: 1, value: 1, inputmode: 'numeric' })
  const add = actionForm({
    requires: 'support',
    label: 'Add to the next renewal',
    fields: [h('div', { class: 'two-col' }, field('Add-on product', product, { hint: 'Products with a one-time price in the subscription’s currency.' }), field('Add-on quantity', quantity))],
    confirm: () => {
      const count = Number(quantity.value)
      if (!product.value) return 'Choose the product to add.'
      if (!Number.isInteger(count) || count < 1 || count > 100) return 'The quantity is a whole number from 1 to 100.'
      const p = products.get(product.value)
      return { title: 'Add this to the next renewal?', body: [h('p', null, `${p?.name ?? product.value} × ${count}${p?.one_time_price ? ` at ${money(p.one_time_price.amount, s.currency)} each` : ''}, charged once with the next renewal${upcoming instanceof ApiError ? '' : ` on ${date(upcoming.next_charge_at)}`}.`)], confirmLabel: 'Add' }
    },
    run: async () => {
      await api.addOnetime(s.id, { product_id: product.value, quantity: Number(quantity.value) })
      return 'Added to the next renewal.'
    },
    done: reload,
  })
  return h('div', null, list, h('div', { class: 'form-panel' }, add))
}

/** What one charge of the subscription covers: "one month", "3 months" (a prepaid block counts its cycles). */
function lengthText(s: Subscription): string {
  const count = s.interval_count * (s.prepaid?.cycles_total ?? 1)
  return count === 1 ? `one ${s.interval}` : `${count} ${s.interval}s`
}

function group(title: string, form: HTMLElement): HTMLElement {
  return h('div', { class: 'action-group' }, h('h3', null, title), form)
}

export { errorText }
