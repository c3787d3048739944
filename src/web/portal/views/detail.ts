import { api, ApiError, errorText, productById } from '../api.ts'
import type { PortalApp } from '../app.ts'
import { h, replaceChildren, uid } from '../dom.ts'
import {
  CHANGE_REQUEST_STATUS_LABEL,
  CHARGE_STATUS_LABEL,
  failureReason,
  formatAddress,
  formatDate,
  formatDateTime,
  formatInterval,
  formatMoney,
  isoDate,
  nextChargeText,
  paymentMethodText,
  statusText,
} from '../format.ts'
import { ROOT } from '../router.ts'
import type { ChangeRequest, Charge, Page, Plan, Product, Subscription } from '../types.ts'
import { actionsSection, describeChanges } from './actions.ts'
import { capitalize, productName, withNames } from './subscriptions.ts'

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
  const [charges, swapOptions, changeRequests, instruments] = await Promise.all([
    api.charges(s.id).catch((failure: unknown) => failure),
    live ? loadSwapOptions(s.id) : Promise.resolve(null),
    plan?.b2b ? api.changeRequests(s.id).catch((failure: unknown) => failure) : Promise.resolve(null),
    // The saved cards the payment method can change to (a platform store); an error is shown in that panel.
    live ? api.paymentInstruments().catch((failure: unknown) => (failure instanceof Error ? failure : new Error('The saved cards could not be read.'))) : Promise.resolve(null),
  ])
  if (!isCurrent()) return

  const reload = async (message: string) => {
    // Unless the subscriber has gone to another page meanwhile.
    if (!isCurrent()) return
    const current = app.beginRender()
    await renderDetail(app, current, id, message)
  }
  const title = productName(named)
  const total = formatMoney(s.amount * s.quantity, s.currency)

  const summaryId = uid('summary')
  const summary = h(
    'section',
    { class: 'card summary', 'aria-labelledby': summaryId },
    h('h2', { id: summaryId }, 'Details'),
    h(
      'dl',
      { class: 'facts' },
      fact('Status', statusText(s)),
      fact('Plan', plan?.name ?? s.plan_id),
      fact('Price', [total, s.quantity > 1 ? h('span', { class: 'muted' }, ` (${s.quantity} × ${formatMoney(s.amount, s.currency)})`) : null]),
      fact('Renews', capitalize(formatInterval(s.interval, s.interval_count))),
      fact('Quantity', String(s.quantity)),
      fact('Next charge', nextChargeText(s)),
      s.current_period_start && s.current_period_end && live ? fact('Current period', `${formatDate(s.current_period_start)} to ${formatDate(s.current_period_end)}`) : null,
      s.prepaid ? fact('Prepaid', `${s.prepaid.cycles_remaining} of ${s.prepaid.cycles_total} periods left`) : null,
      s.gift ? fact('Gift', `From ${s.gift.gifter_email}${s.gift.message ? `: “${s.gift.message}”` : ''}`) : null,
      fact('Payment method', paymentMethodText(s)),
      fact('Ships to', h('span', { class: 'address' }, formatAddress(s.shipping_address).flatMap((line, index) => (index === 0 ? [line] : [h('br'), line])))),
      s.cancelled_at ? fact('Cancelled', formatDateTime(s.cancelled_at)) : null,
      s.cancellation_reason ? fact('Reason given', s.cancellation_reason) : null,
      fact('Started', formatDate(s.start_at)),
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
    paymentCallout(s, charges),
    // Source order is reading and focus order on every width: details, what can be done, history.
    h(
      'div',
      { class: plan?.b2b ? 'detail-grid with-requests' : 'detail-grid' },
      summary,
      h('div', { class: 'detail-side card' }, actionsSection({ app, subscription: s, plan, swapOptions, instruments, reload })),
      chargesSection(app, s.id, charges),
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

/** Says so when the last payment failed, and what happens next. */
function paymentCallout(s: Subscription, charges: Page<Charge> | unknown): HTMLElement | null {
  if (s.status === 'past_due') {
    return h('p', { class: 'alert error callout' }, 'Payment overdue: the last payments failed. Update the payment method under “Manage subscription” so the store can charge it again.')
  }
  const latest = charges && typeof charges === 'object' && 'data' in charges ? (charges as Page<Charge>).data[0] : undefined
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

function chargeRow(charge: Charge): HTMLTableRowElement {
  const details: (string | Node)[] = []
  if (charge.status === 'failed') {
    details.push(failureReason(charge))
    if (charge.next_retry_at) details.push(h('br'), `We'll try again on ${formatDate(charge.next_retry_at)}.`)
  } else if (charge.status === 'succeeded') {
    details.push(charge.period_start && charge.period_end ? `For ${formatDate(charge.period_start)} to ${formatDate(charge.period_end)}` : 'Paid')
    if (charge.amount_refunded > 0) {
      details.push(h('br'), charge.amount_refunded >= charge.amount ? 'Refunded in full.' : `${formatMoney(charge.amount_refunded, charge.currency)} refunded.`)
    }
  } else if (charge.status === 'requires_review') {
    details.push('The store is checking whether this payment went through. You will not be charged twice.')
  } else {
    details.push('The payment is being processed.')
  }
  if (charge.attempt > 1) details.push(h('br'), h('span', { class: 'muted' }, `Attempt ${charge.attempt}`))
  return h(
    'tr',
    { class: `charge charge-${charge.status}` },
    h('td', { 'data-label': 'Date' }, h('time', { datetime: isoDate(charge.created_at) }, formatDate(charge.created_at))),
    h('td', { 'data-label': 'Amount' }, formatMoney(charge.amount, charge.currency)),
    h('td', { 'data-label': 'Status' }, h('span', { class: `badge charge-status-${charge.status}` }, CHARGE_STATUS_LABEL[charge.status])),
    h('td', { 'data-label': 'Details' }, details),
  )
}

function chargesSection(app: PortalApp, id: string, charges: Page<Charge> | unknown): HTMLElement {
  const headingId = uid('charges')
  const section = h('section', { class: 'card history', 'aria-labelledby': headingId }, h('h2', { id: headingId }, 'Charge history'))
  if (!charges || typeof charges !== 'object' || !('data' in charges)) {
    section.appendChild(h('p', { class: 'alert error', role: 'alert' }, `The charges could not be loaded. ${errorText(charges)}`))
    return section
  }
  const page = charges as Page<Charge>
  if (page.data.length === 0) {
    section.appendChild(h('p', null, 'No renewal charges yet. The first period was paid at checkout.'))
    return section
  }
  const body = h('tbody')
  for (const charge of page.data) body.appendChild(chargeRow(charge))
  const table = h(
    'table',
    { class: 'charges' },
    h('caption', { class: 'visually-hidden' }, 'Charges, newest first'),
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
        for (const charge of next.data) body.appendChild(chargeRow(charge))
        cursor = next.next_cursor
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
