import { allProducts, api, ApiError, errorText, productById } from '../api.ts'
import type { PortalApp } from '../app.ts'
import { h, replaceChildren, uid } from '../../shared/dom.ts'
import { planLabel } from '../../shared/plan-format.ts'
import {
  CHANGE_REQUEST_STATUS_LABEL,
  CHARGE_STATUS_LABEL,
  chargeStatusClass,
  chargeStatusLabel,
  failureReason,
  formatAddress,
  formatDate,
  formatDateTime,
  storeZoneNote,
  formatMoney,
  isoDate,
  nextChargeText,
  paymentMethodText,
  statusText,
  unitPriceText,
} from '../format.ts'
import { ROOT } from '../router.ts'
import type { ChangeRequest, Charge, Onetime, Page, Plan, PortalStore, Product, Subscription, UpcomingRenewal } from '../types.ts'
import { actionsSection, describeChanges } from './actions.ts'
import { productName, subscriptionTag, withNames } from './subscriptions.ts'

/** One subscription: what it is, what it costs, every change it allows, and its charges. */
export async function renderDetail(app: PortalApp, isCurrent: () => boolean, id: string, after?: string): Promise<void> {
  let named
  try {
    named = await withNames(await api.subscription(id))
  } catch (failure) {
    if (!isCurrent()) return
    if (failure instanceof ApiError && failure.status === 401) return
    if (failure instanceof ApiError && (failure.status === 404 || failure.status === 400)) {
      replaceChildren(
        app.main,
        h('h1', null, 'Subscription not found'),
        h('div', { class: 'card' }, h('p', null, 'There is no subscription at this address in your account.'), h('p', null, h('a', { href: ROOT }, 'See your subscriptions'))),
      )
    } else {
      replaceChildren(app.main, h('h1', null, 'Subscription'), h('p', { class: 'alert error', role: 'alert' }, errorText(failure)))
    }
    app.finishRender('Subscription not found')
    return
  }
  void app.me().catch(() => {})
  const { subscription: s, plan } = named
  const live = ['pending', 'active', 'paused', 'past_due'].includes(s.status)
  const canAddOns = ['active', 'paused', 'past_due'].includes(s.status)
  const [charges, swapOptions, changeRequests, instruments, store, onetimes, addOnProducts, upcoming, variants] = await Promise.all([
    api.charges(s.id).catch((failure: unknown) => failure),
    live ? loadSwapOptions(s.id) : Promise.resolve(null),
    plan?.b2b ? api.changeRequests(s.id).catch((failure: unknown) => failure) : Promise.resolve(null),
    // The saved cards the payment method can change to (a platform store); an error is shown in that panel.
    live ? api.paymentInstruments().catch((failure: unknown) => (failure instanceof Error ? failure : new Error('The saved cards could not be read.'))) : Promise.resolve(null),
    app.portalStore(),
    canAddOns ? api.onetimes(s.id).then((page) => page.data, (failure: unknown) => asError(failure)) : Promise.resolve(null),
    canAddOns ? loadAddOnProducts(s) : Promise.resolve(null),
    // The next charge as the service prices it; an ended subscription has none to ask for.
    live ? api.upcoming(s.id).catch((failure: unknown) => asError(failure)) : Promise.resolve(asError(null)),
    // Other sizes or grinds of the product (a business plan changes by request); none offered when they cannot be read.
    live && !plan?.b2b ? api.variants(s.id).then((list) => list.data, () => null) : Promise.resolve(null),
  ])
  const productNames = await namesOf(upcoming, named.product)
  if (!isCurrent()) return

  const reload = async (message: string) => {
    // Unless the subscriber has gone to another page meanwhile.
    if (!isCurrent()) return
    const current = app.beginRender()
    await renderDetail(app, current, id, message)
  }
  const title = productName(named)
  const price = unitPriceText(s)

  const summaryId = uid('summary')
  // The badge in the heading says the status, the price says how often: neither is repeated here.
  const summary = h(
    'section',
    { class: 'card summary', 'aria-labelledby': summaryId },
    h('h2', { id: summaryId }, 'Details'),
    h(
      'dl',
      { class: 'facts' },
      // Named with its product and price, as everywhere a plan is named: "Coffee · Every month · $18.00 every month".
      fact('Plan', plan ? planLabel(named.product?.name, plan) : s.plan_id),
      fact('Price', s.quantity > 1 ? `${price} each` : price),
      // A price change announced with notice: the renewal on that date is the first at the new price.
      s.scheduled_price && live
        ? fact('Price change', `Price changes to ${formatMoney(s.scheduled_price.amount, s.scheduled_price.currency)}${s.quantity > 1 ? ' each' : ''} on ${formatDate(s.scheduled_price.effective_at)}`)
        : null,
      fact('Quantity', String(s.quantity)),
      fact('Next charge', nextChargeText(s, upcoming)),
      s.discount ? fact('Discount', `${s.discount.code}: ${s.discount.type === 'percentage' ? `${s.discount.value}%` : formatMoney(s.discount.value, s.currency)} off${s.discount.cycles_remaining === null ? '' : `, ${s.discount.cycles_remaining} more ${s.discount.cycles_remaining === 1 ? 'renewal' : 'renewals'}`}`) : null,
      s.current_period_start && s.current_period_end && live ? fact('Current period', `${formatDate(s.current_period_start)} to ${formatDate(s.current_period_end)}`) : null,
      s.prepaid ? fact('Prepaid', `${s.prepaid.cycles_remaining} of ${s.prepaid.cycles_total} periods left`) : null,
      s.gift ? fact('Gift', `From ${s.gift.gifter_email}${s.gift.message ? `: “${s.gift.message}”` : ''}`) : null,
      fact('Payment method', paymentMethodText(s)),
      fact('Ships to', h('span', { class: 'address' }, formatAddress(s.shipping_address).flatMap((line, index) => (index === 0 ? [line] : [h('br'), line])))),
      s.cancelled_at ? fact('Cancelled', formatDateTime(s.cancelled_at)) : null,
      s.cancellation_reason_code ? fact('Reason given', store?.cancellation_reasons.find((item) => item.code === s.cancellation_reason_code)?.label ?? s.cancellation_reason_code) : null,
      s.cancellation_reason ? fact(s.cancellation_reason_code ? 'Your words' : 'Reason given', s.cancellation_reason) : null,
      fact('Started', formatDate(s.start_at)),
      fact('Reference', s.id),
      storeZoneNote() ? fact('Time zone', storeZoneNote()!) : null,
    ),
  )

  replaceChildren(
    app.main,
    h('p', { class: 'back' }, h('a', { href: ROOT }, h('span', { 'aria-hidden': 'true' }, '← '), 'All subscriptions')),
    h(
      'div',
      { class: 'detail-head' },
      h('h1', null, title),
      h('span', { class: `badge status-${s.status}` }, statusText(s)),
    ),
    h('p', { class: 'detail-lead' }, [plan?.name, price, s.quantity > 1 ? `quantity ${s.quantity}` : null, subscriptionTag(s)].filter(Boolean).join(' · ')),
    paymentCallout(s, charges, store),
    // Reading and focus order on every width: what can be done first (on a phone it comes before the
    // long list of details), then the details, then the history. Wide screens put the actions beside.
    h(
      'div',
      { class: plan?.b2b ? 'detail-grid with-requests' : 'detail-grid' },
      nextOrderSection(s, upcoming, productNames),
      h('div', { class: 'detail-side card' }, actionsSection({ app, subscription: s, plan, swapOptions, variants, instruments, store, onetimes, addOnProducts, upcoming, productNames, reload })),
      summary,
      chargesSection(app, s, charges),
      plan?.b2b ? changeRequestsSection(changeRequests, swapOptions ?? []) : null,
    ),
  )
  if (after) {
    app.finishRender(title, { focus: false })
    app.announce(after, { focus: true })
  } else {
    app.finishRender(title)
  }
}

/** Says so when the last payment failed, and what happens next (for an overdue one: when it is cancelled). */
function paymentCallout(s: Subscription, charges: Page<Charge> | unknown, store: PortalStore | null): HTMLElement | null {
  if (s.status === 'past_due') {
    const cancelAt = s.past_due_at && store ? new Date(Date.parse(s.past_due_at) + store.past_due_cancel_days * 86_400_000).toISOString() : null
    return h(
      'p',
      { class: 'alert error callout' },
      'Payment overdue: the last payments failed. ',
      cancelAt ? h('strong', null, `Unless it is paid, the subscription will be cancelled on ${formatDate(cancelAt)}. `) : 'Unless it is paid, the store will cancel the subscription. ',
      'Update the payment method under “Manage subscription” so the store can charge it again.',
    )
  }
  const latest = charges && typeof charges === 'object' && 'data' in charges ? (charges as Page<Charge>).data[0] : undefined
  // An item out of stock is not a payment problem: the card was never asked, and changing it helps nothing.
  if (s.status === 'active' && latest?.status === 'failed' && latest.failure_code === 'out_of_stock') {
    if (!s.out_of_stock_since) return null
    return h(
      'p',
      { class: 'alert info callout' },
      'An item of your next order is out of stock, so nothing was charged. ',
      s.next_charge_at ? `We'll try again on ${formatDate(s.next_charge_at)}; if it is still out of stock, this order is skipped.` : '',
    )
  }
  if (s.status === 'active' && latest?.status === 'failed') {
    return h(
      'p',
      { class: 'alert warning callout' },
      `The last payment failed: ${failureReason(latest).replace(/^./, (c) => c.toLowerCase())} `,
      latest.next_retry_at ? `We'll try again on ${formatDate(latest.next_retry_at)}; ` : '',
      'you can change the payment method under “Manage subscription”.',
    )
  }
  return null
}

function asError(failure: unknown): Error {
  return failure instanceof Error ? failure : new Error('It could not be read.')
}

/** The names of the products on the next charge (public catalogue reads, cached). */
async function namesOf(upcoming: UpcomingRenewal | Error, product: Product | null): Promise<Map<string, string>> {
  const names = new Map<string, string>(product ? [[product.id, product.name]] : [])
  if (upcoming instanceof Error) return names
  await Promise.all(upcoming.line_items.filter((line) => !names.has(line.product_id)).map(async (line) => {
    const found = await productById(line.product_id)
    if (found) names.set(line.product_id, found.name)
  }))
  return names
}

/**
 * The next order as the service priced it (GET .../upcoming): its date, each line, the discount,
 * shipping, tax and the total, the same figures the charge will carry; nothing is added up here.
 * Without one (paused, overdue, ending, ended) it says why.
 */
function nextOrderSection(s: Subscription, upcoming: UpcomingRenewal | Error, names: Map<string, string>): HTMLElement {
  const titleId = uid('next-order')
  const body = upcoming instanceof Error ? [h('p', null, nextChargeText(s, upcoming))] : [
    h(
      'p',
      { class: 'next-order-when' },
      h('strong', null, formatDate(upcoming.next_charge_at)),
      // A skipped renewal is not an order: the service's next one is the renewal after it.
      s.skip_next && s.next_charge_at ? ` (the ${formatDate(s.next_charge_at)} renewal is skipped)` : '',
    ),
    chargeLines(upcoming, s, names),
  ]
  return h('section', { class: 'card next-order', 'aria-labelledby': titleId }, h('h2', { id: titleId }, 'Your next order'), ...body)
}

/**
 * What the next order is made of, line by line, exactly as the service priced it (the same figures
 * the charge will carry): nothing is added up here.
 */
function chargeLines(upcoming: UpcomingRenewal, s: Subscription, names: Map<string, string>): HTMLElement {
  const money = (minor: number) => formatMoney(minor, upcoming.currency)
  const row = (label: string, amount: string, className?: string) => h('li', className ? { class: className } : null, h('span', null, label), h('span', { class: 'amount' }, amount))
  return h(
    'ul',
    { class: 'charge-lines', 'aria-label': 'Your next order, line by line' },
    upcoming.line_items.map((line) => [
      row(`${names.get(line.product_id) ?? (line.type === 'onetime' ? 'Add-on' : 'Subscription')} × ${line.quantity}${line.type === 'onetime' ? ' (once)' : ''}`, money(line.amount)),
      line.discount_amount > 0 ? row(`Discount${s.discount ? ` ${s.discount.code}` : ''}`, `− ${money(line.discount_amount)}`, 'discount') : null,
    ]),
    row('Shipping', upcoming.shipping_amount > 0 ? money(upcoming.shipping_amount) : 'Free'),
    row('Tax', money(upcoming.tax_amount)),
    row('Total', money(upcoming.amount), 'total'),
  )
}

/** The store's active products with a one-time price in the subscription's currency: what can be added to an order. */
async function loadAddOnProducts(s: Subscription): Promise<Product[] | Error> {
  try {
    const products = await allProducts(s.store_hash)
    return products.filter((product) => product.active && product.one_time_price && product.one_time_price.currency === s.currency)
  } catch (failure) {
    return asError(failure)
  }
}

async function loadSwapOptions(id: string): Promise<{ plan: Plan; product: Product | null }[] | null> {
  try {
    const page = await api.swapOptions(id)
    return Promise.all(page.data.map(async (plan) => ({ plan, product: await productById(plan.product_id) })))
  } catch {
    return null
  }
}

function fact(term: string, value: string | Node | (Node | string | null)[]): HTMLDivElement {
  return h('div', null, h('dt', null, term), h('dd', null, value))
}

/** Attempts of one renewal (the same period), newest first: retries are shown under their renewal. */
function groupByRenewal(charges: Charge[]): Charge[][] {
  const groups: Charge[][] = []
  for (const charge of charges) {
    const last = groups[groups.length - 1]
    const key = (c: Charge) => c.period_start ?? c.id
    if (last && key(last[0]!) === key(charge)) last.push(charge)
    else groups.push([charge])
  }
  return groups
}

function chargeDetails(charge: Charge): (string | Node)[] {
  const details: (string | Node)[] = []
  if (charge.status === 'failed') {
    details.push(failureReason(charge))
    if (charge.next_retry_at) details.push(h('br'), `We'll try again on ${formatDate(charge.next_retry_at)}.`)
  } else if (charge.status === 'succeeded') {
    details.push(charge.period_start && charge.period_end ? `For ${formatDate(charge.period_start)} to ${formatDate(charge.period_end)}` : 'Paid')
    if (charge.discount_amount > 0) details.push(h('br'), h('span', { class: 'muted' }, `${formatMoney(charge.discount_amount, charge.currency)} discount`))
    if (charge.shipping_amount > 0) details.push(h('br'), h('span', { class: 'muted' }, `${formatMoney(charge.shipping_amount, charge.currency)} shipping${charge.shipping_method ? ` (${charge.shipping_method})` : ''}`))
    if (charge.tax_amount > 0) details.push(h('br'), h('span', { class: 'muted' }, `${formatMoney(charge.tax_amount, charge.currency)} tax`))
    if (charge.line_items.length > 1) details.push(h('br'), h('span', { class: 'muted' }, `${charge.line_items.length - 1} add-on${charge.line_items.length > 2 ? 's' : ''} included`))
    if (charge.amount_refunded > 0) {
      details.push(h('br'), charge.amount_refunded >= charge.amount ? 'Refunded in full.' : `${formatMoney(charge.amount_refunded, charge.currency)} refunded.`)
    }
  } else if (charge.status === 'requires_review') {
    details.push('The store is checking whether this payment went through. You will not be charged twice.')
  } else {
    details.push('The payment is being processed.')
  }
  return details
}

/** One renewal: its latest attempt, with the earlier failed attempts listed under it. */
function renewalRow(attempts: Charge[]): HTMLTableRowElement {
  const [charge, ...earlier] = attempts as [Charge, ...Charge[]]
  const details = chargeDetails(charge)
  if (earlier.length > 0) {
    details.push(
      h(
        'details',
        { class: 'attempts' },
        h('summary', null, `${earlier.length} earlier ${earlier.length === 1 ? 'attempt' : 'attempts'} for this renewal`),
        h(
          'ul',
          null,
          earlier.map((attempt) =>
            h('li', null, h('time', { datetime: isoDate(attempt.created_at) }, formatDate(attempt.created_at)), `: ${CHARGE_STATUS_LABEL[attempt.status]}, ${attempt.status === 'failed' ? failureReason(attempt) : formatMoney(attempt.amount, attempt.currency)}`),
          ),
        ),
      ),
    )
  }
  return h(
    'tr',
    { class: `charge charge-${charge.status}`, 'data-attempts': attempts.length },
    h('td', { 'data-label': 'Date' }, h('time', { datetime: isoDate(charge.created_at) }, formatDate(charge.created_at))),
    h('td', { 'data-label': 'Amount' }, formatMoney(charge.amount, charge.currency)),
    h('td', { 'data-label': 'Status' }, h('span', { class: `badge ${chargeStatusClass(charge)}` }, chargeStatusLabel(charge))),
    // One element: at narrow widths the cell is a grid (label | value), and loose lines would fall into the label column.
    h('td', { 'data-label': 'Details' }, h('div', { class: 'charge-details' }, details)),
  )
}

/**
 * The checkout's own payment: the first order was paid at the store's checkout, not by this service,
 * which keeps its order number and date but not its amount (the checkout tells it neither total nor tax).
 */
function checkoutRow(s: Subscription): HTMLTableRowElement {
  return h(
    'tr',
    { class: 'charge charge-checkout' },
    h('td', { 'data-label': 'Date' }, h('time', { datetime: isoDate(s.created_at) }, formatDate(s.created_at))),
    h('td', { 'data-label': 'Amount' }, h('span', { 'aria-hidden': 'true' }, '—'), h('span', { class: 'visually-hidden' }, 'Not recorded here')),
    h('td', { 'data-label': 'Status' }, h('span', { class: 'badge charge-status-succeeded' }, 'Paid at checkout')),
    h('td', { 'data-label': 'Details' }, `First order${s.platform_order_id ? ` #${s.platform_order_id}` : ''}, paid at the store's checkout. Its amount is on the store's order confirmation.`),
  )
}

function chargesSection(app: PortalApp, s: Subscription, charges: Page<Charge> | unknown): HTMLElement {
  const id = s.id
  const headingId = uid('charges')
  const section = h('section', { class: 'card history', 'aria-labelledby': headingId }, h('h2', { id: headingId }, 'Charge history'))
  if (!charges || typeof charges !== 'object' || !('data' in charges)) {
    section.appendChild(h('p', { class: 'alert error', role: 'alert' }, `The charges could not be loaded. ${errorText(charges)}`))
    return section
  }
  const page = charges as Page<Charge>
  const body = h('tbody')
  // Attempts arrive newest first; a renewal whose attempts straddle two pages is regrouped as they come.
  const shown: Charge[] = []
  const redraw = (done: boolean) => {
    body.replaceChildren(...groupByRenewal(shown).map(renewalRow), ...(done ? [checkoutRow(s)] : []))
  }
  shown.push(...page.data)
  redraw(!page.next_cursor)
  const table = h(
    'table',
    { class: 'charges' },
    h('caption', { class: 'visually-hidden' }, 'Charges, newest first; retries under their renewal'),
    h('thead', null, h('tr', null, ...['Date', 'Amount', 'Status', 'Details'].map((label) => h('th', { scope: 'col' }, label)))),
    body,
  )
  section.appendChild(h('div', { class: 'table-wrap' }, table))
  let cursor = page.next_cursor
  if (cursor) {
    const more = h('button', { type: 'button', class: 'button secondary' }, 'Show older charges')
    more.addEventListener('click', async () => {
      if (!cursor) return
      more.setAttribute('aria-busy', 'true')
      try {
        const next = await api.charges(id, cursor)
        shown.push(...next.data)
        cursor = next.next_cursor
        redraw(!cursor)
        app.announce(`${next.data.length} older charges shown.`)
        if (!cursor) more.remove()
      } catch (failure) {
        app.announce(errorText(failure))
      } finally {
        more.removeAttribute('aria-busy')
      }
    })
    section.appendChild(h('div', { class: 'button-row' }, more))
  }
  return section
}

export function changeRequestItem(request: ChangeRequest, plans: { plan: Plan }[], extra?: Node | null): HTMLLIElement {
  return h(
    'li',
    { class: 'change-request' },
    h(
      'div',
      { class: 'card-head' },
      h('p', { class: 'change-summary' }, describeChanges(request.changes, plans)),
      h('span', { class: `badge request-${request.status}` }, CHANGE_REQUEST_STATUS_LABEL[request.status]),
    ),
    extra ?? null,
    h('p', { class: 'muted' }, `Requested ${formatDate(request.created_at)}`, request.decided_at ? `, decided ${formatDate(request.decided_at)}` : ''),
    request.note ? h('p', null, 'Your note: ', request.note) : null,
    request.decision_reason ? h('p', null, 'The store said: ', request.decision_reason) : null,
    request.status === 'approved' && request.effective_at ? h('p', null, `Takes effect on ${formatDate(request.effective_at)}.`) : null,
  )
}

function changeRequestsSection(requests: Page<ChangeRequest> | unknown, plans: { plan: Plan }[]): HTMLElement {
  const headingId = uid('requests')
  const section = h('section', { class: 'card requests', 'aria-labelledby': headingId }, h('h2', { id: headingId }, 'Change requests'))
  if (!requests || typeof requests !== 'object' || !('data' in requests)) {
    section.appendChild(h('p', { class: 'alert error', role: 'alert' }, `The change requests could not be loaded. ${errorText(requests)}`))
    return section
  }
  const page = requests as Page<ChangeRequest>
  if (page.data.length === 0) {
    section.appendChild(h('p', null, 'No change requests yet. Use “Request a change” to propose one.'))
    return section
  }
  section.appendChild(h('ul', { class: 'request-list' }, page.data.map((request) => changeRequestItem(request, plans))))
  return section
}
