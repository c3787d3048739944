import { all, api, ApiError, planById } from '../api.ts'
import type { ConsoleApp } from '../app.ts'
import { h, replaceChildren } from '../../shared/dom.ts'
import { date, money, STATUS_LABEL } from '../format.ts'
import { navigate, paths } from '../router.ts'
import type { Page, Plan, Subscription } from '../types.ts'
import { badge, errorBox, field, loading, pageHeader, select, table } from '../ui.ts'
import { planPriceText } from '../../shared/plan-format.ts'

export const STATUS_TONE: Record<string, string> = { active: 'good', pending: 'info', paused: 'neutral', past_due: 'bad', cancelled: 'muted', expired: 'muted' }

let planList: Promise<Plan[]> | null = null
export function allPlans(): Promise<Plan[]> {
  if (!planList) {
    planList = all((cursor) => api.plans({ cursor }))
    planList.catch(() => (planList = null))
  }
  return planList
}
export function forgetPlanList(): void {
  planList = null
}

/**
 * The subscription list: search by email (exact, as the API filters) or by id (sub_... opens it),
 * filters by status and plan, 20 a page with the API's cursor in the address.
 */
export async function renderSubscriptions(app: ConsoleApp, isCurrent: () => boolean, params: URLSearchParams): Promise<void> {
  const q = params.get('q')?.trim() ?? ''
  const status = params.get('status') ?? ''
  const planId = params.get('plan') ?? ''
  const cursor = params.get('cursor')
  const results = h('div', { class: 'results' }, loading('Loading subscriptions…'))
  const search = h('input', { type: 'search', name: 'q', value: q, autocomplete: 'off', spellcheck: 'false' })
  const statusSelect = select('status', [['', 'Any status'], ...Object.entries(STATUS_LABEL)], status)
  const planSelect = select('plan', [['', 'Any plan']], planId)
  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Find subscriptions' },
    field('Email or subscription id', search, { className: 'grow' }),
    field('Status', statusSelect),
    field('Plan', planSelect),
    h('div', { class: 'button-row' }, h('button', { type: 'submit', class: 'button primary' }, 'Search'), q || status || planId ? h('a', { href: paths.subscriptions(), class: 'button secondary' }, 'Clear') : null),
  )
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    navigate(paths.subscriptions({ q: search.value.trim(), status: statusSelect.value, plan: planSelect.value }))
  })
  replaceChildren(app.main, pageHeader('Subscriptions'), form, results)
  app.finishRender('Subscriptions')

  void allPlans().then((plans) => {
    if (!isCurrent()) return
    for (const plan of plans) planSelect.append(h('option', { value: plan.id, selected: plan.id === planId }, `${plan.name} (${planPriceText(plan)})${plan.active ? '' : ', archived'}`))
  }, () => {})

  // A search by id reads that one subscription, with its subscriber.
  let page: Page<Subscription & { subscriber?: { email: string } }>
  try {
    if (/^sub_[0-9A-Za-z]+$/.test(q)) {
      // An id: that one subscription (a 404 says there is none).
      try {
        page = { data: [await api.subscription(q)], next_cursor: null }
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) page = { data: [], next_cursor: null }
        else throw error
      }
    } else if (q && !q.includes('@')) {
      if (!isCurrent()) return
      replaceChildren(results, h('p', { class: 'error-box', role: 'alert' }, 'Search by a full email address (name@example.com) or a subscription id (sub_…).'))
      return
    } else {
      page = await api.subscriptions({ email: q || null, status: status || null, plan_id: planId || null, cursor })
    }
  } catch (error) {
    if (!isCurrent()) return
    replaceChildren(results, errorBox(error))
    app.announce('The subscriptions could not be loaded.', { kind: 'error' })
    return
  }
  if (!isCurrent()) return
  const plans = new Map<string, Plan | null>()
  // The list answers subscriptions without their subscriber: each row's email is read with the
  // subscription (20 reads a page at most, in parallel).
  const emails = new Map<string, string>()
  await Promise.all([
    ...[...new Set(page.data.map((s) => s.plan_id))].map(async (id) => plans.set(id, await planById(id))),
    ...page.data.map(async (s) => {
      if (s.subscriber) emails.set(s.id, s.subscriber.email)
      else if (q.includes('@')) emails.set(s.id, q.toLowerCase())
      else await api.subscription(s.id).then((full) => full.subscriber && emails.set(s.id, full.subscriber.email), () => {})
    }),
  ])
  if (!isCurrent()) return
  const filtered = Boolean(q || status || planId)
  const summary = page.data.length === 0 ? (filtered ? 'No subscriptions match.' : 'No subscriptions yet.') : `${page.data.length} subscription${page.data.length === 1 ? '' : 's'} shown${page.next_cursor ? ', more on the next page' : ''}.`
  replaceChildren(
    results,
    h('p', { class: 'result-count' }, summary),
    page.data.length === 0
      ? null
      : table(
          'Subscriptions',
          ['Subscriber', 'Status', 'Plan', 'Price', 'Next charge', 'Id'],
          page.data.map((s) => [
            h('a', { href: paths.subscription(s.id) }, emails.get(s.id) ?? s.subscriber_id),
            badge(STATUS_LABEL[s.status] ?? s.status, STATUS_TONE[s.status] ?? 'neutral'),
            plans.get(s.plan_id)?.name ?? s.plan_id,
            // The price of one renewal's items as the plan sets it; what a renewal charges is on the subscription's page.
            `${s.quantity > 1 ? `${s.quantity} × ` : ''}${money(s.amount, s.currency)}`,
            s.status === 'active' || s.status === 'past_due' ? date(s.next_charge_at) : '—',
            h('code', null, s.id),
          ]),
          { captionHidden: true },
        ),
    h(
      'nav',
      { class: 'pager', 'aria-label': 'Pages' },
      cursor ? h('a', { href: paths.subscriptions({ q, status, plan: planId }), class: 'button secondary' }, 'First page') : null,
      page.next_cursor ? h('a', { href: paths.subscriptions({ q, status, plan: planId, cursor: page.next_cursor }), class: 'button secondary', rel: 'next' }, 'Next page') : null,
    ),
  )
  app.announce(summary)
}
