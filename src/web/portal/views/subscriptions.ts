import { api, errorText, planById, productById } from '../api.ts'
import type { PortalApp } from '../app.ts'
import { h, replaceChildren } from '../../shared/dom.ts'
import { formatDate, nextChargeText, statusText, subscriptionPriceText } from '../format.ts'
import { subscriptionPath } from '../router.ts'
import type { Plan, Product, Subscription, UpcomingRenewal } from '../types.ts'

export interface Named {
  subscription: Subscription
  plan: Plan | null
  product: Product | null
}

/** A subscription with the names of its plan and product (public catalogue reads, cached). */
export async function withNames(subscription: Subscription): Promise<Named> {
  const [plan, product] = await Promise.all([planById(subscription.plan_id), productById(subscription.product_id)])
  return { subscription, plan, product }
}

const LIVE = ['pending', 'active', 'paused', 'past_due']

/** A list entry: its names and its next charge as the service prices it (an Error when there is none). */
async function withNextCharge(subscription: Subscription): Promise<Named & { upcoming: UpcomingRenewal | Error | null }> {
  const [named, upcoming] = await Promise.all([
    withNames(subscription),
    LIVE.includes(subscription.status) && !subscription.cancel_at_period_end
      ? api.upcoming(subscription.id).catch((failure: unknown) => (failure instanceof Error ? failure : new Error(String(failure))))
      : Promise.resolve(null),
  ])
  return { ...named, upcoming }
}

export function productName(named: Named): string {
  return named.product?.name ?? named.plan?.name ?? 'Subscription'
}

/** What tells two subscriptions of the same product apart: when it started and the end of its reference. */
export function subscriptionTag(s: Subscription): string {
  return `started ${formatDate(s.start_at)} · ref …${s.id.slice(-6)}`
}

/** The subscriber's subscriptions, newest first, each linking to its page. */
export async function renderSubscriptions(app: PortalApp, isCurrent: () => boolean): Promise<void> {
  let page
  try {
    ;[page] = await Promise.all([api.subscriptions(), app.me()])
  } catch (failure) {
    if (!isCurrent()) return
    replaceChildren(app.main, h('h1', null, 'Your subscriptions'), h('p', { class: 'alert error', role: 'alert' }, errorText(failure)))
    app.finishRender('Your subscriptions')
    return
  }
  const named = await Promise.all(page.data.map(withNextCharge))
  if (!isCurrent()) return

  const list = h('ul', { class: 'subscription-list', 'aria-label': 'Subscriptions' })
  for (const entry of named) list.appendChild(card(entry))
  let cursor = page.next_cursor
  const more = h('button', { type: 'button', class: 'button secondary' }, 'Show more subscriptions')
  more.addEventListener('click', async () => {
    if (!cursor) return
    more.setAttribute('aria-busy', 'true')
    try {
      const next = await api.subscriptions(cursor)
      const cards = (await Promise.all(next.data.map(withNextCharge))).map(card)
      list.append(...cards)
      cursor = next.next_cursor
      if (!cursor) more.remove()
      // The first new one takes the focus, so the keyboard carries on where the list grew.
      cards[0]?.querySelector('a')?.focus()
    } catch (failure) {
      app.announce(errorText(failure))
    } finally {
      more.removeAttribute('aria-busy')
    }
  })

  const hasB2b = named.some((entry) => entry.plan?.b2b)
  replaceChildren(
    app.main,
    h('h1', null, 'Your subscriptions'),
    named.length === 0
      ? h('div', { class: 'card empty' }, h('p', null, `You have no subscriptions with ${app.storeDisplayName} yet.`))
      : [list, cursor ? h('div', { class: 'button-row' }, more) : null],
    hasB2b ? h('p', { class: 'aside-link' }, h('a', { href: '/portal/change-requests' }, 'Your change requests')) : null,
  )
  app.finishRender('Your subscriptions')
}

function card(entry: Named & { upcoming: UpcomingRenewal | Error | null }): HTMLLIElement {
  const { subscription, plan, upcoming } = entry
  const titleId = `sub-title-${subscription.id}`
  // The badge says the status and the price says how often: each once.
  return h(
    'li',
    { class: 'card subscription-card', 'data-subscription-id': subscription.id },
    h(
      'article',
      { 'aria-labelledby': titleId },
      h(
        'div',
        { class: 'card-head' },
        h(
          'h2',
          { id: titleId },
          h('a', { href: subscriptionPath(subscription.id) }, productName(entry), h('span', { class: 'title-tag' }, ` ×${subscription.quantity}, since ${formatDate(subscription.start_at)}`)),
        ),
        h('span', { class: `badge status-${subscription.status}` }, statusText(subscription)),
      ),
      h('p', { class: 'plan-name' }, [plan?.name, `ref …${subscription.id.slice(-6)}`].filter(Boolean).join(' · ')),
      h(
        'dl',
        { class: 'facts' },
        h('div', null, h('dt', null, 'Price'), h('dd', null, subscriptionPriceText(subscription))),
        h('div', null, h('dt', null, 'Next charge'), h('dd', { 'data-next-charge': '' }, nextChargeText(subscription, upcoming))),
      ),
    ),
  )
}

export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}
