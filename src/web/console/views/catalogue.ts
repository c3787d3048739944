import { all, api, forgetPlans } from '../api.ts'
import type { ConsoleApp } from '../app.ts'
import { h, replaceChildren } from '../../shared/dom.ts'
import { currency, interval, money, toMinor } from '../format.ts'
import type { Plan, Product } from '../types.ts'
import { actionForm, badge, errorBox, field, input, loading, pageHeader, section, select, table } from '../ui.ts'
import { forgetPlanList } from './subscriptions.ts'
import { planPriceText } from '../../shared/plan-format.ts'

/** Products and their plans: create, rename, archive and restore (archived plans take no new subscriptions). */
export async function renderCatalogue(app: ConsoleApp, isCurrent: () => boolean, { focus = true }: { focus?: boolean } = {}): Promise<void> {
  if (focus) {
    replaceChildren(app.main, pageHeader('Catalogue'), loading())
    app.finishRender('Catalogue')
  }
  let products: Product[], plans: Plan[]
  try {
    ;[products, plans] = await Promise.all([all((cursor) => api.products(cursor)), all((cursor) => api.plans({ cursor }))])
  } catch (error) {
    if (!isCurrent()) return
    replaceChildren(app.main, pageHeader('Catalogue'), errorBox(error))
    return
  }
  if (!isCurrent()) return
  const reload = () => {
    forgetPlans()
    forgetPlanList()
    return renderCatalogue(app, isCurrent, { focus: false }).then(() => {
      if (!isCurrent()) return
      app.focusHeading()
      app.announce(app.takeFlash() ?? 'Updated.')
    })
  }
  const rename = (what: string, current: string, save: (name: string) => Promise<unknown>) => {
    const name = input({ type: 'text', name: 'name', value: current, maxlength: 200, autocomplete: 'off' })
    return h(
      'details',
      { class: 'disclosure' },
      h('summary', null, 'Rename…'),
      actionForm({
        label: 'Save name',
        className: 'compact',
        fields: [field(`New name of the ${what}`, name)],
        confirm: () => (name.value.trim() ? { title: `Rename the ${what}?`, body: [h('p', null, `“${current}” becomes “${name.value.trim()}”.`)], confirmLabel: 'Rename' } : 'Enter a name.'),
        run: async () => {
          await save(name.value.trim())
          return `Renamed to ${name.value.trim()}.`
        },
        done: reload,
      }),
    )
  }
  const archive = (what: string, item: { name: string; active: boolean }, save: (active: boolean) => Promise<unknown>) =>
    actionForm({
      label: item.active ? 'Archive' : 'Restore',
      className: 'compact',
      danger: item.active,
      confirm: () => ({
        title: item.active ? `Archive the ${what} ${item.name}?` : `Restore the ${what} ${item.name}?`,
        body: [h('p', null, item.active ? 'It takes no new subscriptions; existing ones go on renewing.' : 'It takes new subscriptions again.')],
        confirmLabel: item.active ? 'Archive' : 'Restore',
      }),
      run: async () => {
        await save(!item.active)
        return `${item.name} is ${item.active ? 'archived' : 'active again'}.`
      },
      done: reload,
    })

  const productRows = products.map((p) => [
    h('span', { class: 'who' }, p.name, h('code', null, p.platform_product_id)),
    p.active ? badge('Active', 'good') : badge('Archived', 'muted'),
    String(plans.filter((plan) => plan.product_id === p.id).length),
    h('div', { class: 'inline-actions' }, rename('product', p.name, (name) => api.updateProduct(p.id, { name })), archive('product', p, (active) => api.updateProduct(p.id, { active }))),
  ])
  const productName = new Map(products.map((p) => [p.id, p.name]))
  const planRows = plans.map((plan) => [
    plan.name,
    productName.get(plan.product_id) ?? plan.product_id,
    `${planPriceText(plan)}${plan.trial_days ? `, ${plan.trial_days}-day trial` : ''}${plan.b2b ? ', business' : ''}`,
    plan.active ? badge('Active', 'good') : badge('Archived', 'muted'),
    h('div', { class: 'inline-actions' }, rename('plan', plan.name, (name) => api.updatePlan(plan.id, { name })), archive('plan', plan, (active) => api.updatePlan(plan.id, { active }))),
  ])

  const pName = input({ type: 'text', name: 'name', maxlength: 200, autocomplete: 'off' })
  const pPlatform = input({ type: 'text', name: 'platform_product_id', maxlength: 200, autocomplete: 'off' })
  const newProduct = actionForm({
    label: 'Create product',
    fields: [field('Product name', pName), field('Platform product id', pPlatform, { hint: 'The BigCommerce product this subscription product sells.' })],
    confirm: () => (pName.value.trim() && pPlatform.value.trim() ? { title: 'Create this product?', body: [h('p', null, pName.value.trim())], confirmLabel: 'Create product' } : 'Enter the product name and its platform product id.'),
    run: async () => {
      const created = await api.createProduct({ name: pName.value.trim(), platform_product_id: pPlatform.value.trim() })
      return `Product ${created.name} created.`
    },
    done: reload,
  })

  const planProduct = select('product_id', [['', 'Choose a product'], ...products.filter((p) => p.active).map((p) => [p.id, p.name] as [string, string])])
  const planName = input({ type: 'text', name: 'plan_name', maxlength: 200, autocomplete: 'off' })
  const planAmount = input({ type: 'text', name: 'amount', inputmode: 'decimal', autocomplete: 'off' })
  const planCurrency = input({ type: 'text', name: 'currency', value: currency(), maxlength: 3, size: 4, autocomplete: 'off' })
  const planInterval = select('interval', [['month', 'Month'], ['week', 'Week'], ['day', 'Day'], ['year', 'Year']], 'month')
  const planCount = input({ type: 'number', name: 'interval_count', value: 1, min: 1, step: 1 })
  const newPlan = actionForm({
    label: 'Create plan',
    fields: [
      field('Product', planProduct),
      field('Plan name', planName),
      h('div', { class: 'two-col' }, field('Price', planAmount), field('Currency', planCurrency)),
      h('div', { class: 'two-col' }, field('Every', planCount), field('Interval', planInterval)),
    ],
    confirm: () => {
      const minor = toMinor(planAmount.value, planCurrency.value.trim().toUpperCase())
      if (!planProduct.value || !planName.value.trim()) return 'Choose the product and name the plan.'
      if (!Number.isInteger(minor) || minor <= 0) return 'Enter the price as a number, such as 12.50.'
      return { title: 'Create this plan?', body: [h('p', null, `${planName.value.trim()}: ${money(minor, planCurrency.value.trim().toUpperCase())} ${interval(planInterval.value as Plan['interval'], Number(planCount.value) || 1)}.`)], confirmLabel: 'Create plan' }
    },
    run: async () => {
      const code = planCurrency.value.trim().toUpperCase()
      const created = await api.createPlan({ product_id: planProduct.value, name: planName.value.trim(), amount: toMinor(planAmount.value, code), currency: code, interval: planInterval.value, interval_count: Number(planCount.value) || 1 })
      return `Plan ${created.name} created.`
    },
    done: reload,
  })

  replaceChildren(
    app.main,
    pageHeader('Catalogue', h('p', { class: 'subtitle' }, 'Subscription products and their plans.')),
    section(`Products (${products.length})`, products.length ? table('Products', ['Product', 'Status', 'Plans', 'Actions'], productRows, { captionHidden: true }) : h('p', null, 'No products yet.')),
    section(`Plans (${plans.length})`, plans.length ? table('Plans', ['Plan', 'Product', 'Price', 'Status', 'Actions'], planRows, { captionHidden: true }) : h('p', null, 'No plans yet.')),
    h('div', { class: 'two-col' }, section('New product', newProduct), section('New plan', newPlan)),
  )
  if (focus) app.refocusHeading()
}
