import { all, api, downloadExport, errorText, planById } from '../api.ts'
import type { ConsoleApp } from '../app.ts'
import { h, replaceChildren } from '../../shared/dom.ts'
import { date, STATUS_LABEL } from '../format.ts'
import { navigate, paths } from '../router.ts'
import type { Page, Plan, Product, SubscriptionWithSubscriber } from '../types.ts'
import { badge, errorBox, field, loading, pageHeader, select, table } from '../ui.ts'
import { planLabel, planPriceText } from '../../shared/plan-format.ts'

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
  productList = null
}

let productList: Promise<Map<string, Product>> | null = null
/** Every product of the store by id, read once per page load: plans are named with their product. */
export function allProducts(): Promise<Map<string, Product>> {
  if (!productList) {
    productList = all((cursor) => api.products(cursor)).then((products) => new Map(products.map((p) => [p.id, p])))
    productList.catch(() => (productList = null))
  }
  return productList
}

/** "Coffee · Every month · $18.00 every month": a plan named with its product, whatever page names it. */
export function consolePlanLabel(plan: Plan, products: Map<string, Product>): string {
  return planLabel(products.get(plan.product_id)?.name, plan)
}

/** The plans, each group of a product together, products and then plans by name. */
export function plansByProduct(plans: readonly Plan[], products: Map<string, Product>): Plan[] {
  const name = (plan: Plan) => products.get(plan.product_id)?.name ?? ''
  return [...plans].sort((a, b) => name(a).localeCompare(name(b)) || a.name.localeCompare(b.name))
}

/**
 * The subscription list: search (`q`: part of an email or name, an order number, an id), filters by
 * status and plan, 20 a page with the API's cursor in the address. Each row names its subscriber,
 * linked to their page, and its plan, linked to the subscription.
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
    field('Email, name, order number or id', search, { className: 'grow' }),
    field('Status', statusSelect),
    field('Plan', planSelect),
    h('div', { class: 'button-row' }, h('button', { type: 'submit', class: 'button primary' }, 'Search'), q || status || planId ? h('a', { href: paths.subscriptions(), class: 'button secondary' }, 'Clear') : null),
  )
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    navigate(paths.subscriptions({ q: search.value.trim(), status: statusSelect.value, plan: planSelect.value }))
  })
  // Every subscription the filters select, not only this page: the same filters, as the API's CSV export.
  const exportButton = h('button', { type: 'button', class: 'button secondary' }, 'Export CSV')
  exportButton.addEventListener('click', () => {
    exportButton.disabled = true
    exportButton.textContent = 'Exporting…'
    downloadExport('subscriptions', { q: q || null, status: status || null, plan_id: planId || null }).then(
      (name) => app.announce(`Downloaded ${name}.`),
      (error: unknown) => app.announce(`The export failed: ${errorText(error)}`, { kind: 'error' }),
    ).finally(() => {
      exportButton.disabled = false
      exportButton.textContent = 'Export CSV'
    })
  })
  replaceChildren(app.main, pageHeader('Subscriptions', exportButton), form, results)
  app.finishRender('Subscriptions')

  // Each plan named with its product: two products' "Every month" plans are told apart.
  void Promise.all([allPlans(), allProducts().catch(() => new Map<string, Product>())]).then(([plans, products]) => {
    if (!isCurrent()) return
    for (const plan of plansByProduct(plans, products)) planSelect.append(h('option', { value: plan.id, selected: plan.id === planId }, `${consolePlanLabel(plan, products)}${plan.active ? '' : ', archived'}`))
  }, () => {})

  let page: Page<SubscriptionWithSubscriber>
  try {
    page = await api.subscriptions({ q: q || null, status: status || null, plan_id: planId || null, cursor })
  } catch (error) {
    if (!isCurrent()) return
    replaceChildren(results, errorBox(error))
    app.announce('The subscriptions could not be loaded.', { kind: 'error' })
    return
  }
  if (!isCurrent()) return
  const plans = new Map<string, Plan | null>()
  let products = new Map<string, Product>()
  await Promise.all([
    allProducts().then((found) => (products = found), () => {}),
    ...[...new Set(page.data.map((s) => s.plan_id))].map(async (id) => plans.set(id, await planById(id))),
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
            subscriberCell(s.subscriber),
            badge(STATUS_LABEL[s.status] ?? s.status, STATUS_TONE[s.status] ?? 'neutral'),
            // Product · plan, so two products' "Every month" are told apart, opening the subscription; the price beside it.
            h('a', { href: paths.subscription(s.id) }, [products.get(s.product_id)?.name, plans.get(s.plan_id)?.name ?? s.plan_id].filter(Boolean).join(' · ')),
            // The price of one renewal's items as the subscription has it (per cycle and per charge when prepaid); what a renewal charges is on its page.
            `${s.quantity > 1 ? `${s.quantity} × ` : ''}${planPriceText({ amount: s.amount, currency: s.currency, interval: s.interval, interval_count: s.interval_count, prepaid_cycles: s.prepaid?.cycles_total ?? null })}`,
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

/** A subscriber as a list shows them: the name (else the email) linked to their page, the email beneath. */
export function subscriberCell(subscriber: { id: string; name: string | null; email: string }): HTMLElement {
  return h('span', { class: 'person' }, h('a', { href: paths.subscriber(subscriber.id) }, subscriber.name || subscriber.email), subscriber.name ? h('span', { class: 'person-email' }, subscriber.email) : null)
}
