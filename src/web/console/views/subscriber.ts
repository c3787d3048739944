import { api, errorText } from '../api.ts'
import type { ConsoleApp } from '../app.ts'
import { h, replaceChildren, type Child } from '../../shared/dom.ts'
import { date, dateTime, money, STATUS_LABEL } from '../format.ts'
import { paths } from '../router.ts'
import type { Charge, Notification, Page, Plan, Product, SubscriberDetail, Subscription } from '../types.ts'
import { badge, definitionList, errorBox, loading, pageHeader, section, table } from '../ui.ts'
import { planPriceText } from '../../shared/plan-format.ts'
import { chargeBadge } from './subscription.ts'
import { allPlans, allProducts, STATUS_TONE } from './subscriptions.ts'

/** The emails' names as the settings page lists them, and the one an admin sends by hand. */
const EMAIL_LABEL: Record<string, string> = {
  subscription_created: 'Subscription started',
  renewal_upcoming: 'Renewal reminder',
  payment_failed: 'Payment failed',
  past_due: 'Past due',
  cancelled: 'Cancelled',
  payment_instrument_expiring: 'Card expiring',
  renewal_skipped: 'Renewal skipped (out of stock)',
  price_change_notice: 'Price change notice',
  payment_update_link: 'Payment update link',
}
const EMAIL_TONE: Record<string, string> = { sent: 'good', pending: 'info', failed: 'bad' }

type ShippingAddress = SubscriberDetail['shipping_addresses'][number]['address']

/**
 * One subscriber (GET /subscribers/{id}): who they are, every subscription in any state, where they
 * ship, what pays (as stored), their charges and the emails sent to them; older charges and emails a
 * page at a time.
 */
export async function renderSubscriber(app: ConsoleApp, isCurrent: () => boolean, id: string): Promise<void> {
  const back = h('p', null, h('a', { href: paths.subscriptions(), class: 'back' }, '← Subscriptions'))
  replaceChildren(app.main, back, pageHeader('Subscriber'), loading())
  let subscriber: SubscriberDetail
  let plans = new Map<string, Plan>()
  let products = new Map<string, Product>()
  try {
    ;[subscriber] = await Promise.all([
      api.subscriber(id),
      allPlans().then((found) => (plans = new Map(found.map((plan) => [plan.id, plan]))), () => {}),
      allProducts().then((found) => (products = found), () => {}),
    ])
  } catch (error) {
    if (!isCurrent()) return
    replaceChildren(app.main, back, pageHeader('Subscriber'), errorBox(error))
    app.finishRender('Subscriber')
    return
  }
  if (!isCurrent()) return
  const s = subscriber
  const heading = s.name || s.email
  /** "House Blend Coffee · Every month": the product and the plan, as the list names them. */
  const planName = (sub: { plan_id: string; product_id: string }) => [products.get(sub.product_id)?.name, plans.get(sub.plan_id)?.name ?? sub.plan_id].filter(Boolean).join(' · ')
  const byId = new Map(s.subscriptions.data.map((sub) => [sub.id, sub]))
  /** A subscription named by its plan, linked to its page. */
  const subscriptionLink = (subscriptionId: string) => {
    const sub = byId.get(subscriptionId)
    return h('a', { href: paths.subscription(subscriptionId) }, sub ? planName(sub) : subscriptionId)
  }
  const usedBy = (ids: string[]) => h('span', { class: 'used-by' }, ids.flatMap((subscriptionId, index) => (index === 0 ? [subscriptionLink(subscriptionId)] : [', ', subscriptionLink(subscriptionId)])))

  const facts: [string, Child][] = [
    ['Email', h('a', { href: `mailto:${s.email}` }, s.email)],
    ['Name', s.name ?? '—'],
    ['Subscriber since', date(s.created_at)],
    ['BigCommerce customer', s.platform_customer_id ?? '—'],
    ['Address on file', s.shipping_address ? addressText(s.shipping_address) : '—'],
  ]
  // "2 subscriptions: 1 active, 1 cancelled."
  const byStatus = new Map<string, number>()
  for (const sub of s.subscriptions.data) byStatus.set(sub.status, (byStatus.get(sub.status) ?? 0) + 1)
  const total = s.subscriptions.data.length
  const counts = `${s.subscriptions.next_cursor ? 'The 100 newest of more' : `${total} ${total === 1 ? 'subscription' : 'subscriptions'}`}: ${[...byStatus].map(([status, n]) => `${n} ${(STATUS_LABEL[status] ?? status).toLowerCase()}`).join(', ')}.`

  replaceChildren(
    app.main,
    back,
    pageHeader(heading, h('p', { class: 'subtitle' }, s.name ? `${s.email} · ` : '', h('code', null, s.id))),
    h(
      'div',
      { class: 'detail-grid' },
      section('Details', definitionList(facts)),
      section(
        'Payment methods',
        s.payment_instruments.length === 0
          ? h('p', null, 'None stored.')
          : h(
              'ul',
              { class: 'plain-list' },
              s.payment_instruments.map((instrument) =>
                h(
                  'li',
                  null,
                  h('strong', null, instrument.last4 ? `${instrument.brand ?? 'Card'} ending in ${instrument.last4}` : h('code', null, instrument.id)),
                  instrument.expiry_month && instrument.expiry_year ? `, expires ${String(instrument.expiry_month).padStart(2, '0')}/${instrument.expiry_year}` : '',
                  h('br'),
                  h('span', { class: 'hint' }, 'Pays: '),
                  usedBy(instrument.subscription_ids),
                ),
              ),
            ),
      ),
    ),
    section('Subscriptions', total ? h('p', { class: 'hint' }, counts) : null, subscriptionsTable(s.subscriptions.data, planName)),
    section(
      'Shipping addresses',
      s.shipping_addresses.length === 0
        ? h('p', null, 'No subscription ships anywhere.')
        : h('ul', { class: 'plain-list' }, s.shipping_addresses.map((entry) => h('li', null, h('strong', null, addressText(entry.address)), h('br'), h('span', { class: 'hint' }, 'Ships: '), usedBy(entry.subscription_ids)))),
    ),
    section('Charges', pagedTable(isCurrent, s.charges, 'charge', (cursor) => api.charges({ subscriber_id: s.id, cursor, limit: 20 }), ['Date', 'Subscription', 'Status', 'Amount', 'Period'], (c: Charge) => [
      dateTime(c.created_at),
      subscriptionLink(c.subscription_id),
      chargeBadge(c),
      `${money(c.amount, c.currency)}${c.amount_refunded ? `, ${money(c.amount_refunded, c.currency)} refunded` : ''}`,
      `${date(c.period_start)} to ${date(c.period_end)}`,
    ])),
    section('Emails sent', pagedTable(isCurrent, s.notifications, 'email', (cursor) => api.notifications({ subscriber_id: s.id, cursor, limit: 20 }), ['Date', 'Email', 'Subscription', 'Status'], (n: Notification) => [
      dateTime(n.sent_at ?? n.created_at),
      EMAIL_LABEL[n.template] ?? n.template,
      n.subscription_id ? subscriptionLink(n.subscription_id) : '—',
      badge(n.status === 'pending' ? 'Sending' : n.status === 'sent' ? 'Sent' : `Failed${n.error ? `: ${n.error}` : ''}`, EMAIL_TONE[n.status] ?? 'neutral'),
    ])),
  )
  app.finishRender(heading)
}

function addressText(address: ShippingAddress): string {
  return [address.name, address.line1, address.line2, address.city, address.state, address.postal_code, address.country].filter(Boolean).join(', ')
}

function subscriptionsTable(subscriptions: Subscription[], planName: (sub: Subscription) => string): HTMLElement {
  if (subscriptions.length === 0) return h('p', null, 'No subscriptions.')
  return table(
    'Subscriptions, newest first',
    ['Plan', 'Status', 'Price', 'Next charge', 'Started'],
    subscriptions.map((sub) => [
      h('a', { href: paths.subscription(sub.id) }, planName(sub)),
      h('span', null, badge(STATUS_LABEL[sub.status] ?? sub.status, STATUS_TONE[sub.status] ?? 'neutral'), sub.cancelled_at ? ` ${date(sub.cancelled_at)}` : ''),
      `${sub.quantity > 1 ? `${sub.quantity} × ` : ''}${planPriceText({ amount: sub.amount, currency: sub.currency, interval: sub.interval, interval_count: sub.interval_count, prepaid_cycles: sub.prepaid?.cycles_total ?? null })}`,
      sub.status === 'active' || sub.status === 'past_due' ? dateTime(sub.next_charge_at) : '—',
      date(sub.start_at),
    ]),
    { captionHidden: true },
  )
}

/** A table of the page's first rows, with "Show older" reading the next pages of its own list. */
function pagedTable<Row>(
  isCurrent: () => boolean,
  first: Page<Row>,
  noun: string,
  next: (cursor: string) => Promise<Page<Row>>,
  headings: string[],
  cells: (row: Row) => Child[],
): HTMLElement {
  if (first.data.length === 0) return h('p', null, `No ${noun}s yet.`)
  const wrap = table(`${noun[0]!.toUpperCase()}${noun.slice(1)}s, newest first`, headings, first.data.map(cells), { captionHidden: true })
  const tbody = wrap.querySelector('tbody')!
  let cursor = first.next_cursor
  let shown = first.data.length
  const said = () => `${shown} ${noun}${shown === 1 ? '' : 's'} shown${cursor ? '; older ones below' : ''}.`
  const status = h('p', { class: 'hint', role: 'status' }, said())
  // Only while there is more (a button's display would override `hidden`).
  const more = h('button', { type: 'button', class: 'button secondary' }, 'Show older')
  more.addEventListener('click', async () => {
    if (!cursor) return
    more.disabled = true
    try {
      const page = await next(cursor)
      if (!isCurrent()) return
      for (const row of page.data) tbody.append(h('tr', null, cells(row).map((cell, index) => (index === 0 ? h('th', { scope: 'row' }, cell) : h('td', null, cell)))))
      shown += page.data.length
      cursor = page.next_cursor
      if (!cursor) more.remove()
      status.textContent = said()
    } catch (error) {
      status.textContent = errorText(error)
    } finally {
      more.disabled = false
    }
  })
  return h('div', null, wrap, status, cursor ? more : null)
}
