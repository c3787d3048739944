import { all, api, forgetPlans } from '../api.ts'
import type { ConsoleApp } from '../app.ts'
import { h, replaceChildren } from '../../shared/dom.ts'
import { currency, minorDigits, money, toMinor } from '../format.ts'
import type { Plan, Product } from '../types.ts'
import { actionForm, badge, errorBox, field, input, loading, pageHeader, section, select, table } from '../ui.ts'
import { forgetPlanList } from './subscriptions.ts'
import { planPriceText } from '../../shared/plan-format.ts'

/** Products and their plans: create, edit every field the API lets change, archive and restore (archived plans take no new subscriptions). */
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

  /** Everything of a product the API lets change: its name, description and one-time price. */
  const editProduct = (p: Product) => {
    const name = input({ type: 'text', name: 'name', value: p.name, maxlength: 200, autocomplete: 'off' })
    const description = h('textarea', { name: 'description', rows: 2, maxlength: 5000 }, p.description ?? '')
    const once = oneTimePriceFields(p.one_time_price)
    return h(
      'details',
      { class: 'disclosure' },
      h('summary', null, 'Edit…'),
      actionForm({
        label: 'Save product',
        className: 'compact',
        fields: [field('Name', name), field('Description', description), ...once.fields],
        confirm: () => {
          if (!name.value.trim()) return 'Enter a name.'
          const price = once.read()
          if (typeof price === 'string') return price
          return { title: `Save ${p.name}?`, body: [h('p', null, `${name.value.trim()}${price ? `, also sold once at ${money(price.amount, price.currency)}` : ', not sold once'}.`)], confirmLabel: 'Save product' }
        },
        run: async () => {
          const price = once.read()
          await api.updateProduct(p.id, { name: name.value.trim(), description: description.value.trim() || null, one_time_price: typeof price === 'string' ? null : price })
          return `${name.value.trim()} is saved.`
        },
        done: reload,
      }),
    )
  }
  /** Everything of a plan the API lets change: name, trial, variant, business. Price and cadence are fixed once made. */
  const editPlan = (plan: Plan) => {
    const name = input({ type: 'text', name: 'name', value: plan.name, maxlength: 200, autocomplete: 'off' })
    const trial = input({ type: 'number', name: 'trial_days', value: plan.trial_days, min: 0, max: 730, step: 1, inputmode: 'numeric' })
    const variant = input({ type: 'text', name: 'platform_variant_id', value: plan.platform_variant_id ?? '', inputmode: 'numeric', maxlength: 10, autocomplete: 'off' })
    const b2b = h('input', { type: 'checkbox', name: 'b2b', id: `b2b-${plan.id}`, checked: plan.b2b })
    // Only what was changed is sent.
    const changes = (): Record<string, unknown> => {
      const next = { name: name.value.trim(), trial_days: whole(trial.value, 0), platform_variant_id: variant.value.trim() || null, b2b: b2b.checked }
      const was: Record<string, unknown> = { name: plan.name, trial_days: plan.trial_days, platform_variant_id: plan.platform_variant_id, b2b: plan.b2b }
      return Object.fromEntries(Object.entries(next).filter(([key, value]) => value !== was[key]))
    }
    return h(
      'details',
      { class: 'disclosure' },
      h('summary', null, 'Edit…'),
      actionForm({
        label: 'Save plan',
        className: 'compact',
        fields: [
          field('Name', name),
          field('Trial (days)', trial, { hint: 'For new subscriptions.' }),
          field('Platform variant id', variant, { hint: 'Empty: none. Subscriptions made before keep theirs.' }),
          h('div', { class: 'field checkbox' }, b2b, h('label', { for: b2b.id }, 'Business plan')),
        ],
        confirm: () => {
          const days = whole(trial.value, 0)
          if (!name.value.trim()) return 'Enter a name.'
          if (days === null || days < 0 || days > 730) return 'The trial is a whole number of days from 0 to 730.'
          if (variant.value.trim() && !/^[1-9][0-9]{0,9}$/.test(variant.value.trim())) return 'The variant id is the number BigCommerce gives the variant, or empty.'
          if (Object.keys(changes()).length === 0) return 'Nothing is changed.'
          return { title: `Save the plan ${plan.name}?`, body: [h('p', null, 'Price, currency and cadence stay as they are: subscribers agreed to them.')], confirmLabel: 'Save plan' }
        },
        run: async () => {
          await api.updatePlan(plan.id, changes())
          return `The plan ${name.value.trim()} is saved.`
        },
        done: reload,
      }),
    )
  }

  const productRows = products.map((p) => [
    h('span', { class: 'who' }, p.name, h('code', null, p.platform_product_id)),
    p.active ? badge('Active', 'good') : badge('Archived', 'muted'),
    p.one_time_price ? money(p.one_time_price.amount, p.one_time_price.currency) : '—',
    String(plans.filter((plan) => plan.product_id === p.id).length),
    h('div', { class: 'inline-actions' }, editProduct(p), archive('product', p, (active) => api.updateProduct(p.id, { active }))),
  ])
  const productName = new Map(products.map((p) => [p.id, p.name]))
  // Each plan under its product's name first: two products' "Every month" plans never read alike.
  const byProduct = [...plans].sort((a, b) => (productName.get(a.product_id) ?? '').localeCompare(productName.get(b.product_id) ?? '') || a.name.localeCompare(b.name))
  const planRows = byProduct.map((plan) => [
    productName.get(plan.product_id) ?? plan.product_id,
    plan.name,
    `${planPriceText(plan)}${plan.trial_days ? `, ${plan.trial_days}-day trial` : ''}${plan.b2b ? ', business' : ''}`,
    plan.active ? badge('Active', 'good') : badge('Archived', 'muted'),
    h('div', { class: 'inline-actions' }, editPlan(plan), archive('plan', plan, (active) => api.updatePlan(plan.id, { active }))),
  ])

  const pName = input({ type: 'text', name: 'name', maxlength: 200, autocomplete: 'off' })
  const pPlatform = input({ type: 'text', name: 'platform_product_id', maxlength: 64, autocomplete: 'off' })
  const pDescription = h('textarea', { name: 'description', rows: 2, maxlength: 5000 })
  const pOnce = oneTimePriceFields(null)
  const newProduct = actionForm({
    label: 'Create product',
    fields: [
      field('Product name', pName),
      field('Platform product id', pPlatform, { hint: 'The BigCommerce product this subscription product sells.' }),
      field('Description (optional)', pDescription),
      ...pOnce.fields,
    ],
    confirm: () => {
      if (!pName.value.trim() || !pPlatform.value.trim()) return 'Enter the product name and its platform product id.'
      const once = pOnce.read()
      if (typeof once === 'string') return once
      return { title: 'Create this product?', body: [h('p', null, `${pName.value.trim()}${once ? `, also sold once at ${money(once.amount, once.currency)}` : ''}.`)], confirmLabel: 'Create product' }
    },
    run: async () => {
      const once = pOnce.read()
      const created = await api.createProduct({
        name: pName.value.trim(),
        platform_product_id: pPlatform.value.trim(),
        ...(pDescription.value.trim() ? { description: pDescription.value.trim() } : {}),
        ...(once && typeof once !== 'string' ? { one_time_price: once } : {}),
      })
      return `Product ${created.name} created.`
    },
    done: reload,
  })

  const planProduct = select('product_id', [['', 'Choose a product'], ...products.filter((p) => p.active).map((p) => [p.id, p.name] as [string, string])])
  const planName = input({ type: 'text', name: 'plan_name', maxlength: 200, autocomplete: 'off' })
  const planAmount = input({ type: 'text', name: 'amount', inputmode: 'decimal', autocomplete: 'off' })
  const planCurrency = input({ type: 'text', name: 'currency', value: currency(), maxlength: 3, size: 4, autocomplete: 'off' })
  const planInterval = select('interval', [['month', 'Month'], ['week', 'Week'], ['day', 'Day'], ['year', 'Year']], 'month')
  const planCount = input({ type: 'number', name: 'interval_count', value: 1, min: 1, max: 365, step: 1, inputmode: 'numeric' })
  const planTrial = input({ type: 'number', name: 'trial_days', value: 0, min: 0, max: 730, step: 1, inputmode: 'numeric' })
  const planPrepaid = input({ type: 'number', name: 'prepaid_cycles', min: 2, max: 120, step: 1, inputmode: 'numeric' })
  const planVariant = input({ type: 'text', name: 'platform_variant_id', inputmode: 'numeric', maxlength: 10, autocomplete: 'off' })
  const planB2b = h('input', { type: 'checkbox', name: 'b2b', id: 'new-plan-b2b' })
  /** The new plan as typed, or what is wrong with it. */
  const planInput = (): Record<string, unknown> & { amount: number; currency: string; interval: Plan['interval']; interval_count: number; prepaid_cycles: number | null } | string => {
    const code = planCurrency.value.trim().toUpperCase()
    const minor = toMinor(planAmount.value, code)
    if (!planProduct.value || !planName.value.trim()) return 'Choose the product and name the plan.'
    if (!/^[A-Z]{3}$/.test(code)) return 'The currency is a three-letter code, such as USD.'
    if (!Number.isInteger(minor) || minor <= 0) return 'Enter the price as a number, such as 12.50.'
    const count = whole(planCount.value, 1)
    if (count === null || count < 1 || count > 365) return 'Every is a whole number from 1 to 365.'
    const trial = whole(planTrial.value, 0)
    if (trial === null || trial < 0 || trial > 730) return 'The trial is a whole number of days from 0 to 730.'
    const prepaid = whole(planPrepaid.value, null)
    if (prepaid === null && planPrepaid.value.trim()) return 'Prepaid cycles is a whole number from 2 to 120, or empty.'
    if (prepaid !== null && (prepaid < 2 || prepaid > 120)) return 'Prepaid cycles is a whole number from 2 to 120, or empty.'
    const variant = planVariant.value.trim()
    if (variant && !/^[1-9][0-9]{0,9}$/.test(variant)) return 'The variant id is the number BigCommerce gives the variant, or empty.'
    return {
      product_id: planProduct.value,
      name: planName.value.trim(),
      amount: minor,
      currency: code,
      interval: planInterval.value as Plan['interval'],
      interval_count: count,
      trial_days: trial,
      prepaid_cycles: prepaid,
      ...(variant ? { platform_variant_id: variant } : {}),
      b2b: planB2b.checked,
    }
  }
  const newPlan = actionForm({
    label: 'Create plan',
    fields: [
      field('Product', planProduct),
      field('Plan name', planName),
      h('div', { class: 'two-col' }, field('Price per charge', planAmount, { hint: 'With prepaid cycles: the price of the whole block.' }), field('Currency', planCurrency)),
      h('div', { class: 'two-col' }, field('Every', planCount), field('Interval', planInterval)),
      h('div', { class: 'two-col' }, field('Trial (days)', planTrial, { hint: '0: no trial; the checkout pays the first period.' }), field('Prepaid cycles (optional)', planPrepaid, { hint: 'Cycles paid at once per charge, 2 to 120; empty: each cycle is charged.' })),
      field('Platform variant id (optional)', planVariant, { hint: 'The BigCommerce variant the plan sells (a size, a grind).' }),
      h('div', { class: 'field checkbox' }, planB2b, h('label', { for: planB2b.id }, 'Business plan: subscribers propose changes for you to approve')),
    ],
    confirm: () => {
      const plan = planInput()
      if (typeof plan === 'string') return plan
      const terms = [planPriceText(plan), Number(plan.trial_days) ? `${plan.trial_days}-day trial` : null, plan.b2b ? 'business plan' : null].filter(Boolean).join(', ')
      return { title: 'Create this plan?', body: [h('p', null, `${planName.value.trim()}: ${terms}.`)], confirmLabel: 'Create plan' }
    },
    run: async () => {
      const plan = planInput()
      if (typeof plan === 'string') throw new Error(plan)
      const created = await api.createPlan(plan)
      return `Plan ${created.name} created.`
    },
    done: reload,
  })

  replaceChildren(
    app.main,
    pageHeader('Catalogue', h('p', { class: 'subtitle' }, 'Subscription products and their plans.')),
    section(`Products (${products.length})`, products.length ? table('Products', ['Product', 'Status', 'Bought once', 'Plans', 'Actions'], productRows, { captionHidden: true }) : h('p', null, 'No products yet.')),
    section(`Plans (${plans.length})`, plans.length ? table('Plans', ['Product', 'Plan', 'Price', 'Status', 'Actions'], planRows, { captionHidden: true }) : h('p', null, 'No plans yet.')),
    h('div', { class: 'two-col' }, section('New product', newProduct), section('New plan', newPlan)),
  )
  if (focus) app.refocusHeading()
}

/** A whole number typed in a box; `empty` when nothing is typed, null when it is not a whole number. */
function whole<T extends number | null>(text: string, empty: T): number | T | null {
  if (!text.trim()) return empty
  const value = Number(text.trim())
  return Number.isInteger(value) ? value : null
}

/** The one-time price of a product: an amount and its currency, both empty for none. */
function oneTimePriceFields(current: Product['one_time_price']): { fields: HTMLElement[]; read: () => { amount: number; currency: string } | null | string } {
  const digits = current ? minorDigits(current.currency) : 0
  const amount = input({ type: 'text', name: 'one_time_amount', inputmode: 'decimal', autocomplete: 'off', value: current ? (current.amount / 10 ** digits).toFixed(digits) : '' })
  const code = input({ type: 'text', name: 'one_time_currency', maxlength: 3, size: 4, autocomplete: 'off', value: current?.currency ?? currency() })
  return {
    fields: [h('div', { class: 'two-col' }, field('One-time price (optional)', amount, { hint: 'Bought once, or added to a renewal; empty: not sold once.' }), field('One-time currency', code))],
    read: () => {
      if (!amount.value.trim()) return null
      const unit = code.value.trim().toUpperCase()
      if (!/^[A-Z]{3}$/.test(unit)) return 'The one-time currency is a three-letter code, such as USD.'
      const minor = toMinor(amount.value, unit)
      if (!Number.isInteger(minor) || minor <= 0) return 'Enter the one-time price as a number, such as 12.50, or leave it empty.'
      return { amount: minor, currency: unit }
    },
  }
}
