import { api } from '../api.ts'
import type { ConsoleApp } from '../app.ts'
import { h, replaceChildren, type Child } from '../../shared/dom.ts'
import { date, dateTime, money } from '../format.ts'
import { paths } from '../router.ts'
import type { AttentionItem, AttentionList } from '../types.ts'
import { badge, errorBox, loading, pageHeader } from '../ui.ts'
import { retryNowForm, sendLinkForm } from './payment-recovery.ts'
import { resolveForms } from './subscription.ts'

const REASON: Record<AttentionItem['reason'], [string, string]> = {
  charge_requires_review: ['Charge to review', 'warn'],
  billing_issue: ['Billing issue', 'bad'],
  past_due: ['Past due', 'bad'],
  dunning: ['Payment failed', 'warn'],
}

/**
 * What needs a person now (docs/contract.md, Payment recovery; GET /attention): one row per
 * subscription, the one waiting longest first, read by the service from current state: a subscription
 * in dunning once (its latest failure, attempts and next retry), past due, a charge under review, a
 * renewal set aside. Nothing cancelled or already recovered. The action is beside each row.
 */
export async function renderAttention(app: ConsoleApp, isCurrent: () => boolean, { focus = true }: { focus?: boolean } = {}): Promise<void> {
  if (focus) {
    replaceChildren(app.main, pageHeader('Needs attention'), loading())
    app.finishRender('Needs attention')
  }
  let list: AttentionList
  try {
    list = await api.attention()
  } catch (error) {
    if (!isCurrent()) return
    replaceChildren(app.main, pageHeader('Needs attention'), errorBox(error))
    return
  }
  if (!isCurrent()) return
  const reload = () =>
    renderAttention(app, isCurrent, { focus: false }).then(() => {
      if (!isCurrent()) return
      app.focusHeading()
      app.announce(app.takeFlash() ?? 'Updated.')
    })
  const items = list.data
  const count = `${items.length} subscription${items.length === 1 ? '' : 's'}`
  replaceChildren(
    app.main,
    pageHeader(
      'Needs attention',
      h('p', { class: 'subtitle' }, items.length === 0 ? 'Nothing needs attention.' : `${count} to look at, the one waiting longest first.${list.has_more ? ' Only the longest waiting are shown.' : ''}`),
    ),
    items.length === 0
      ? h('section', { class: 'panel', 'aria-label': 'Nothing to do' }, h('p', null, 'No failed payments, past due subscriptions, charges to review or billing issues. Failed payments appear here until they are paid.'))
      : h('ol', { class: 'attention-list', 'aria-label': 'Subscriptions that need attention, the one waiting longest first' }, items.map((item) => row(app, item, reload))),
  )
  if (focus) app.refocusHeading()
}

function row(app: ConsoleApp, item: AttentionItem, reload: () => Promise<unknown>): HTMLElement {
  const [label, tone] = REASON[item.reason]
  const c = item.charge
  const amount = c ? `${money(c.amount, c.currency)} for the renewal of ${date(c.period_start)}` : 'The renewal'
  const failedAt = c ? dateTime(c.settled_at ?? c.created_at) : null
  const why = item.message.replace(/\.+$/, '')
  const attempts = `${item.failed_attempts} failed attempt${item.failed_attempts === 1 ? '' : 's'}`
  let what: Child
  switch (item.reason) {
    case 'dunning':
      what = `${amount}: ${attempts}, the last on ${failedAt}: ${why}. Next retry ${dateTime(item.next_retry_at)}.`
      break
    case 'past_due': {
      const cancelDays = app.store?.past_due_cancel_days
      const pastDueAt = item.charge?.settled_at ?? null
      const cancels = cancelDays && pastDueAt ? ` Cancelled on ${date(new Date(Date.parse(pastDueAt) + cancelDays * 86_400_000).toISOString())} unless paid.` : ''
      what = `${amount}: ${attempts}, the last on ${failedAt}: ${why}. No retries left.${cancels}`
      break
    }
    case 'charge_requires_review':
      what = `${c ? `The ${money(c.amount, c.currency)} charge of ${dateTime(c.created_at)}` : 'A charge'}: ${why}. Check the payment in the gateway’s dashboard, then resolve it as paid or failed.`
      break
    case 'billing_issue':
      what = `${why}. The renewal is set aside until the subscription is changed.`
      break
  }
  const target = { id: item.subscription_id, email: item.subscriber.email, charge: c, card: undefined }
  const actions: HTMLElement[] = []
  if (item.actions.includes('resolve_charge') && c) actions.push(resolveForms(c, reload))
  if (item.actions.includes('retry_charge')) actions.push(retryNowForm(target, reload, { compact: true }))
  if (item.actions.includes('payment_update_link')) actions.push(sendLinkForm(target, reload, { compact: true, billingOff: app.store?.billing_enabled === false }))
  return h(
    'li',
    { class: 'attention-item', 'data-subscription': item.subscription_id, 'data-reason': item.reason },
    h(
      'div',
      { class: 'attention-main' },
      h(
        'p',
        { class: 'attention-who' },
        h('a', { href: paths.subscription(item.subscription_id) }, item.subscriber.name ? `${item.subscriber.name} (${item.subscriber.email})` : item.subscriber.email),
        ' ',
        badge(label, tone),
      ),
      h('p', { class: 'attention-what' }, what),
      h('p', { class: 'attention-since' }, `Waiting since ${dateTime(item.since)}`, ' · ', h('code', null, item.subscription_id)),
    ),
    h('div', { class: 'attention-actions inline-actions' }, actions.length ? actions : h('a', { href: paths.subscription(item.subscription_id), class: 'button secondary compact-link' }, 'Open the subscription')),
  )
}
