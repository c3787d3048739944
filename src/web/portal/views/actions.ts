import { api, ApiError, errorText } from '../api.ts'
import type { PortalApp } from '../app.ts'
import { confirmAction, type Confirmation } from '../../shared/confirm.ts'
import { checkboxField, field, h, uid, type Child } from '../../shared/dom.ts'
import { formatDate, formatInterval, formatLength, formatMoney, formatPlanPrice, instrumentLabel, paymentMethodText } from '../format.ts'
import { shiftDay, zonedDay, zonedInstant, zonedTime } from '../zoned.ts'
import { planLabel } from '../../shared/plan-format.ts'
import type { Address, ChangeRequest, Interval, Onetime, PaymentInstrumentList, Plan, PortalStore, Product, RetentionOffer, Subscription, SubscriptionVariant, UpcomingRenewal } from '../types.ts'

export interface ActionContext {
  app: PortalApp
  subscription: Subscription
  plan: Plan | null
  /** Plans it may move to, each with its product (null when they could not be read). */
  swapOptions: { plan: Plan; product: Product | null }[] | null
  /** The variants of the product the store's catalogue lists now (GET .../variants); null when not read or unreadable. */
  variants: SubscriptionVariant[] | null
  /**
   * The subscriber's stored instruments (GET /portal/payment-instruments); an Error when they could
   * not be read, null when not asked (nothing left to change).
   */
  instruments: PaymentInstrumentList | Error | null
  /** The store's clock, time zone and cancellation reasons (GET /portal/store); null when it could not be read. */
  store: PortalStore | null
  /** The add-ons waiting for the next renewal; an Error when they could not be read. */
  onetimes: Onetime[] | Error | null
  /**
   * The next renewal as the server prices it (GET .../upcoming): every amount the page shows about
   * the next charge comes from here, none is worked out in the browser. An Error when there is none
   * (the service says why) or it could not be read.
   */
  upcoming: UpcomingRenewal | Error
  /** Product names by id, for the renewal's lines. */
  productNames: Map<string, string>
  /** Active products with a one-time price in the subscription's currency (the public catalogue); an Error when it could not be read. */
  addOnProducts: Product[] | Error | null
  /** Shows the page again with fresh data and says what happened. */
  reload: (message: string) => Promise<void>
}

interface Run {
  error: HTMLElement
  reload: (message: string) => Promise<void>
  confirm: () => Confirmation
  perform: () => Promise<unknown>
  success: () => string
  fieldNames?: Record<string, string>
}

const busy = new WeakSet<HTMLElement>()

/**
 * Every change goes the same way: ask first, then call the API; a refusal shows the service's words
 * beside the control (role=alert), success reloads the page and announces what changed.
 */
async function run(trigger: HTMLElement, action: Run): Promise<void> {
  if (busy.has(trigger)) return
  action.error.replaceChildren()
  if (!(await confirmAction(action.confirm()))) return
  busy.add(trigger)
  trigger.setAttribute('aria-busy', 'true')
  try {
    await action.perform()
  } catch (failure) {
    busy.delete(trigger)
    trigger.removeAttribute('aria-busy')
    // A 401 has already sent the subscriber to sign-in.
    if (failure instanceof ApiError && failure.status === 401) return
    action.error.replaceChildren(h('p', null, h('strong', null, 'Not changed: '), errorText(failure, action.fieldNames)))
    return
  }
  busy.delete(trigger)
  trigger.removeAttribute('aria-busy')
  await action.reload(action.success())
}

function alertBox(): HTMLDivElement {
  return h('div', { class: 'alert error', role: 'alert' })
}

/** A disclosure with a form inside: the summary names the change, the form asks for its details. */
function panel(options: {
  summary: string
  intro?: Child
  fields: Child[]
  submitLabel: string
  danger?: boolean
  open?: boolean
  validate?: () => string | null
  action: Omit<Run, 'error' | 'reload'>
  reload: (message: string) => Promise<void>
}): HTMLDetailsElement {
  const error = alertBox()
  const submit = h('button', { type: 'submit', class: options.danger ? 'button danger' : 'button primary' }, options.submitLabel)
  const form = h(
    'form',
    {
      class: 'action-form',
      onsubmit: (event: Event) => {
        event.preventDefault()
        const problem = options.validate?.() ?? null
        if (problem) {
          error.replaceChildren(h('p', null, problem))
          return
        }
        void run(submit, { ...options.action, error, reload: options.reload })
      },
    },
    options.intro ? h('p', { class: 'hint' }, options.intro) : null,
    options.fields,
    error,
    h('div', { class: 'button-row' }, submit),
  )
  return h('details', { class: options.danger ? 'action danger-zone' : 'action', open: options.open ?? false }, h('summary', null, options.summary), form)
}

function tomorrow(): string {
  const date = new Date()
  date.setDate(date.getDate() + 1)
  return localDate(date)
}

function localDate(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`
}

const LIVE = ['pending', 'active', 'paused', 'past_due']

function intervalSelect(selected: Interval | '', allowNone: boolean): HTMLSelectElement {
  const select = h('select', { name: 'interval' })
  if (allowNone) select.appendChild(h('option', { value: '' }, 'No change'))
  for (const unit of ['day', 'week', 'month', 'year'] as const) {
    select.appendChild(h('option', { value: unit, selected: unit === selected }, `${unit}s`.replace(/^./, (c) => c.toUpperCase())))
  }
  return select
}

/** A plan with its product, so two products' "Every month" never read alike: "Coffee · Every month · $18.00 every month". */
function optionLabel(option: { plan: Plan; product: Product | null }): string {
  return planLabel(option.product?.name, option.plan)
}

/**
 * The next charge in words, from the server's preview: "$40.80 ($36.00 − $7.20 (code SAVE20) + $12.00
 * Enamel Mug)". Only the service's figures, formatted.
 */
export function upcomingText(upcoming: UpcomingRenewal, s: Subscription, productNames: Map<string, string>): string {
  const money = (minor: number) => formatMoney(minor, upcoming.currency)
  const parts: string[] = []
  for (const line of upcoming.line_items) {
    if (line.type === 'subscription') parts.push(money(line.amount))
    else parts.push(`+ ${money(line.amount)} ${productNames.get(line.product_id) ?? 'add-on'}`)
    if (line.discount_amount > 0) parts.push(`− ${money(line.discount_amount)}${s.discount ? ` (code ${s.discount.code})` : ''}`)
  }
  if (upcoming.shipping_amount > 0) parts.push(`+ ${money(upcoming.shipping_amount)} shipping`)
  if (upcoming.tax_amount > 0) parts.push(`+ ${money(upcoming.tax_amount)} tax`)
  return parts.length > 1 ? `${money(upcoming.amount)} (${parts.join(' ')})` : money(upcoming.amount)
}

/** The preview when the service gave one. */
function preview(ctx: ActionContext): UpcomingRenewal | null {
  return ctx.upcoming instanceof Error ? null : ctx.upcoming
}

/** The "Manage" section: the changes this subscription's status allows, each confirmed first. */
export function actionsSection(ctx: ActionContext): HTMLElement {
  const { subscription: s, plan } = ctx
  const b2b = plan?.b2b ?? false
  const sectionTitle = uid('manage')
  const section = h('section', { class: 'manage', 'aria-labelledby': sectionTitle }, h('h2', { id: sectionTitle }, 'Manage subscription'))

  if (!LIVE.includes(s.status)) {
    // A cancelled subscription may be started again here when the store allows it (its setting portal_reactivation).
    if (s.status === 'cancelled' && ctx.store?.reactivation) {
      section.append(h('p', null, 'This subscription has been cancelled. You can start it again on the same plan.'), reactivateButton(ctx))
      return section
    }
    section.appendChild(h('p', null, `This subscription has ${s.status === 'expired' ? 'ended' : 'been cancelled'}, so there is nothing left to change.`))
    return section
  }

  // Quick actions: one button each, no details to fill in.
  const quickError = alertBox()
  const quick = h('div', { class: 'button-row quick-actions' })
  const quickButton = (label: string, kind: string, action: Omit<Run, 'error' | 'reload'>) => {
    const button = h('button', { type: 'button', class: `button ${kind}` }, label)
    button.addEventListener('click', () => void run(button, { ...action, error: quickError, reload: ctx.reload }))
    quick.appendChild(button)
  }
  if (s.status === 'paused') {
    quickButton('Resume subscription', 'primary', {
      confirm: () => ({
        title: 'Resume this subscription?',
        body: [h('p', null, 'Renewals and charges start again.')],
        confirmLabel: 'Resume subscription',
      }),
      perform: () => api.action(s.id, 'resume'),
      success: () => 'Your subscription is active again.',
    })
  }
  if (s.status === 'active' && !s.skip_next) {
    quickButton('Skip next renewal', 'secondary', {
      confirm: () => ({
        title: 'Skip the next renewal?',
        body: [
          h('p', null, s.next_charge_at ? `You won't be charged on ${formatDate(s.next_charge_at)}, and nothing ships for that period. The renewal after it goes ahead as usual.` : 'You will not be charged for the next period.'),
          // Add-ons follow the renewal that is actually charged: they move with the skip, they are not lost.
          Array.isArray(ctx.onetimes) && ctx.onetimes.length > 0 ? h('p', null, 'What you added to the next order comes with the renewal after it instead.') : null,
        ],
        confirmLabel: 'Skip it',
      }),
      perform: () => api.action(s.id, 'skip'),
      success: () => 'The next renewal will be skipped.',
    })
  }
  if (s.skip_next && (s.status === 'active' || s.status === 'paused')) {
    quickButton('Undo skip', 'secondary', {
      confirm: () => ({
        title: 'Undo the skip?',
        body: [h('p', null, s.next_charge_at ? `The renewal on ${formatDate(s.next_charge_at)} goes ahead and is charged.` : 'The next renewal goes ahead and is charged.')],
        confirmLabel: 'Undo skip',
      }),
      perform: () => api.action(s.id, 'unskip'),
      success: () => 'The next renewal is no longer skipped.',
    })
  }
  if (s.status === 'active' && !s.cancel_at_period_end) {
    quickButton('Order now', 'secondary', {
      confirm: () => ({
        title: 'Order now?',
        body: [
          h('p', null, `${preview(ctx) ? upcomingText(preview(ctx)!, s, ctx.productNames) : 'The next renewal'} is charged now to ${paymentMethodText(s)}, and the order ships as a normal renewal.`),
          h('p', null, `The next renewal then follows ${formatLength(s.interval, s.interval_count * (s.prepaid?.cycles_total ?? 1))} after today, instead of on ${formatDate(s.next_charge_at)}.`),
        ],
        confirmLabel: 'Order and pay now',
      }),
      perform: () => api.action(s.id, 'charge-now'),
      success: () => 'Your order is placed: the next renewal was charged now.',
    })
  }
  if (quick.childElementCount > 0) section.append(quick, quickError)

  if (s.status === 'active' && !s.cancel_at_period_end && s.next_charge_at) section.appendChild(reschedulePanel(ctx))
  if (s.status === 'active' || s.status === 'paused' || s.status === 'past_due') section.append(discountPanel(ctx), addOnPanel(ctx))
  if (s.status === 'active') section.appendChild(pausePanel(ctx))
  if (!b2b) {
    section.appendChild(swapPanel(ctx))
    const variant = variantPanel(ctx)
    if (variant) section.appendChild(variant)
    section.append(quantityPanel(ctx), intervalPanel(ctx))
  } else {
    section.appendChild(changeRequestPanel(ctx))
  }
  section.append(addressPanel(ctx), paymentPanel(ctx), cancelPanel(ctx))
  return section
}

function pausePanel(ctx: ActionContext): HTMLDetailsElement {
  const { subscription: s } = ctx
  const date = h('input', { type: 'date', name: 'resume_at', min: tomorrow() }) as HTMLInputElement
  const resumeAt = () => (date.value ? new Date(`${date.value}T00:00:00`).toISOString() : null)
  return panel({
    reload: ctx.reload,
    summary: 'Pause',
    intro: 'No renewals or charges while paused. Resume whenever you like, or pick a date to resume by itself.',
    fields: [field('Resume automatically on (optional)', date, { hint: 'Leave empty to stay paused until you resume.' })],
    submitLabel: 'Pause subscription',
    action: {
      confirm: () => ({
        title: 'Pause this subscription?',
        body: [h('p', null, date.value ? `Nothing is charged until it resumes on ${formatDate(resumeAt())}.` : 'Nothing is charged until you resume it.')],
        confirmLabel: 'Pause subscription',
      }),
      perform: () => api.action(s.id, 'pause', date.value ? { resume_at: resumeAt() } : undefined),
      success: () => (date.value ? `Your subscription is paused until ${formatDate(resumeAt())}.` : 'Your subscription is paused.'),
      fieldNames: { resume_at: 'The resume date' },
    },
  })
}

/** Plans grouped by product (this subscription's product first), each group sorted by price per cycle, then name. */
function groupedPlans(options: { plan: Plan; product: Product | null }[], currentProductId: string): { name: string; options: { plan: Plan; product: Product | null }[] }[] {
  const groups = new Map<string, { name: string; options: { plan: Plan; product: Product | null }[] }>()
  for (const option of options) {
    const key = option.plan.product_id
    if (!groups.has(key)) groups.set(key, { name: option.product?.name ?? 'Other plans', options: [] })
    groups.get(key)!.options.push(option)
  }
  const perCycle = (plan: Plan) => plan.amount / (plan.prepaid_cycles ?? 1)
  const list = [...groups.entries()].map(([key, group]) => ({
    key,
    ...group,
    options: group.options.sort((a, b) => perCycle(a.plan) - perCycle(b.plan) || a.plan.name.localeCompare(b.plan.name)),
  }))
  return list.sort((a, b) => (a.key === currentProductId ? -1 : b.key === currentProductId ? 1 : a.name.localeCompare(b.name)))
}

function swapPanel(ctx: ActionContext): HTMLDetailsElement {
  const { subscription: s } = ctx
  const options = ctx.swapOptions ?? []
  const name = uid('plan')
  const radios: { option: { plan: Plan; product: Product | null }; radio: HTMLInputElement }[] = []
  const groups = groupedPlans(options, s.product_id).map((group) =>
    h(
      'fieldset',
      { class: 'plan-group' },
      h('legend', null, group.name),
      group.options.map((option) => {
        const radio = h('input', { type: 'radio', name, value: option.plan.id }) as HTMLInputElement
        radios.push({ option, radio })
        if (!radio.id) radio.id = uid('field')
        return h(
          'div',
          { class: 'field checkbox plan-choice' },
          radio,
          h('label', { for: radio.id }, h('span', { class: 'plan-choice-name' }, option.plan.name), h('span', { class: 'plan-choice-price' }, formatPlanPrice(option.plan))),
        )
      }),
    ),
  )
  const chosen = () => radios.find((entry) => entry.radio.checked)?.option
  const from = () => (s.status === 'active' && preview(ctx) ? formatDate(preview(ctx)!.next_charge_at) : null)
  return panel({
    reload: ctx.reload,
    summary: 'Change plan',
    intro: options.length ? 'The new plan applies from your next renewal.' : 'There are no other plans to change to.',
    fields: options.length ? [h('div', { class: 'plan-groups', role: 'group', 'aria-label': 'New plan' }, groups)] : [],
    submitLabel: 'Change plan',
    validate: () => (chosen() ? null : options.length ? 'Choose a plan first.' : 'There are no other plans to change to.'),
    action: {
      confirm: () => {
        const option = chosen()!
        return {
          title: 'Change your plan?',
          body: [
            h('p', null, `${from() ? `From ${from()}` : 'From the next renewal'}: ${optionLabel(option)}.`),
            h('p', null, `New price: ${formatPlanPrice(option.plan)}${s.quantity > 1 ? `, for each of your ${s.quantity}` : ''}.`),
          ],
          confirmLabel: 'Change plan',
        }
      },
      perform: () => api.action(s.id, 'swap', { plan_id: chosen()!.plan.id }),
      success: () => `Your plan changes to ${chosen() ? optionLabel(chosen()!) : 'the new plan'} from ${from() ?? 'the next renewal'}.`,
      fieldNames: { plan_id: 'The plan' },
    },
  })
}

/**
 * Another variant of the same product (size, grind...) on the same plan and price: a select of the
 * variants the store sells now, the current one selected. Nothing when there are fewer than two.
 */
function variantPanel(ctx: ActionContext): HTMLDetailsElement | null {
  const { subscription: s } = ctx
  const variants = ctx.variants ?? []
  if (variants.length < 2) return null
  const choices = variants.filter((variant) => variant.purchasable || variant.current)
  const select = h('select', { name: 'platform_variant_id' }) as HTMLSelectElement
  if (!choices.some((variant) => variant.current)) select.appendChild(h('option', { value: '' }, 'Choose one'))
  for (const variant of choices) {
    select.appendChild(h('option', { value: variant.platform_variant_id, selected: variant.current }, variant.current ? `${variant.label} (current)` : variant.label))
  }
  const chosen = () => choices.find((variant) => variant.platform_variant_id === select.value)
  return panel({
    reload: ctx.reload,
    summary: 'Change variant',
    intro: 'Same plan, same price. The new choice ships from your next renewal.',
    fields: [field('Variant', select, { hint: 'Size, grind or other option.' })],
    submitLabel: 'Change variant',
    validate: () => {
      const variant = chosen()
      if (!variant) return 'Choose a variant first.'
      return variant.current ? 'This is already your choice. Pick another one.' : null
    },
    action: {
      confirm: () => ({
        title: 'Change the variant?',
        body: [h('p', null, `From your next renewal: ${chosen()!.label}. The price stays the same.`)],
        confirmLabel: 'Change variant',
      }),
      perform: () => api.action(s.id, 'swap', { plan_id: s.plan_id, platform_variant_id: chosen()!.platform_variant_id }),
      success: () => `Changed to ${chosen()?.label ?? 'the new variant'} from your next renewal.`,
      fieldNames: { platform_variant_id: 'Your choice', plan_id: 'The plan' },
    },
  })
}

/** Moves the next renewal to a day on the store's calendar: from tomorrow to one year ahead. */
function reschedulePanel(ctx: ActionContext): HTMLDetailsElement {
  const { subscription: s, store } = ctx
  const zone = store?.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone
  const now = store ? new Date(store.now) : new Date()
  const today = zonedDay(now, zone)
  const min = shiftDay(today, { days: 1 })
  const max = shiftDay(today, { years: 1 })
  const date = h('input', { type: 'date', name: 'next_charge_at', min, max, required: true }) as HTMLInputElement
  // The renewal keeps its time of day; on the last allowed day no later than now's (one year exactly).
  const at = (): string => {
    const time = zonedTime(new Date(s.next_charge_at!), zone)
    const instant = zonedInstant(date.value, time, zone)
    const limit = zonedInstant(max, zonedTime(now, zone), zone)
    return (instant > limit ? limit : instant).toISOString()
  }
  return panel({
    reload: ctx.reload,
    summary: 'Change the next order date',
    intro: `Now ${formatDate(s.next_charge_at)}. Pick a day from tomorrow to one year ahead; later renewals follow on from it.`,
    fields: [field('Next order on', date, { hint: `Between ${formatDate(`${min}T12:00:00Z`)} and ${formatDate(`${max}T12:00:00Z`)}.` })],
    submitLabel: 'Move next order',
    validate: () => {
      if (!date.value) return 'Choose a date.'
      if (date.value < min || date.value > max) return `Choose a date between ${formatDate(`${min}T12:00:00Z`)} and ${formatDate(`${max}T12:00:00Z`)}.`
      return null
    },
    action: {
      confirm: () => ({
        title: 'Move your next order?',
        body: [h('p', null, `The next renewal moves from ${formatDate(s.next_charge_at)} to ${formatDate(at())}${preview(ctx) ? `, charging ${upcomingText(preview(ctx)!, s, ctx.productNames)} then` : ''}. Nothing is charged on ${formatDate(s.next_charge_at)}.`)],
        confirmLabel: 'Move next order',
      }),
      perform: () => api.action(s.id, 'reschedule', { next_charge_at: at() }),
      success: () => `Your next order is now on ${formatDate(at())}.`,
      fieldNames: { next_charge_at: 'The date' },
    },
  })
}

function discountText(discount: NonNullable<Subscription['discount']>, currency: string): string {
  const off = discount.type === 'percentage' ? `${discount.value}% off` : `${formatMoney(discount.value, currency)} off`
  const cycles = discount.cycles_remaining === null ? 'every renewal' : discount.cycles_remaining === 1 ? 'the next renewal' : `the next ${discount.cycles_remaining} renewals`
  return `${discount.code}: ${off} ${cycles}`
}

/** A small button that asks first, runs, and shows a refusal in `error`. */
function inlineButton(label: string, error: HTMLElement, ctx: ActionContext, action: Omit<Run, 'error' | 'reload'>, accessibleName?: string): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'button secondary small', 'aria-label': accessibleName ?? null }, label)
  button.addEventListener('click', () => void run(button, { ...action, error, reload: ctx.reload }))
  return button
}

function discountPanel(ctx: ActionContext): HTMLDetailsElement {
  const { subscription: s } = ctx
  const input = h('input', { type: 'text', name: 'code', required: true, maxlength: 64, autocomplete: 'off', spellcheck: 'false', autocapitalize: 'characters' }) as HTMLInputElement
  const removeError = alertBox()
  const current = s.discount
    ? h(
        'div',
        { class: 'current-discount' },
        h('p', null, h('strong', null, 'Applied: '), discountText(s.discount, s.currency), ' '),
        inlineButton('Remove code', removeError, ctx, {
          confirm: () => ({
            title: 'Remove the discount code?',
            body: [h('p', null, `${s.discount!.code} no longer applies to your renewals. It may not be possible to add it again.`)],
            confirmLabel: 'Remove code',
            danger: true,
          }),
          perform: () => api.removeDiscount(s.id),
          success: () => `The code ${s.discount!.code} is removed.`,
        }),
        removeError,
      )
    : null
  return panel({
    reload: ctx.reload,
    summary: s.discount ? `Discount code: ${s.discount.code}` : 'Apply a discount code',
    intro: s.discount ? 'A new code replaces the one applied.' : 'A code applies to your next renewals (not to add-ons).',
    fields: [current, field('Discount code', input)],
    submitLabel: 'Apply code',
    validate: () => (input.value.trim() ? null : 'Enter a discount code.'),
    action: {
      confirm: () => ({
        title: 'Apply this code?',
        body: [h('p', null, `The code ${input.value.trim()} applies from your next renewal${s.discount ? `, replacing ${s.discount.code}` : ''}.`)],
        confirmLabel: 'Apply code',
      }),
      perform: () => api.applyDiscount(s.id, input.value.trim()),
      success: () => `The code ${input.value.trim().toUpperCase()} is applied.`,
      fieldNames: { code: 'The code' },
    },
  })
}

function addOnPanel(ctx: ActionContext): HTMLDetailsElement {
  const { subscription: s, onetimes, addOnProducts } = ctx
  const summary = 'Add something to the next order'
  const listError = alertBox()
  const pending = Array.isArray(onetimes) ? onetimes : []
  const names = new Map((Array.isArray(addOnProducts) ? addOnProducts : []).map((product) => [product.id, product.name]))
  const list = pending.length
    ? h(
        'ul',
        { class: 'addon-list', 'aria-label': 'Added to the next order' },
        pending.map((item) => {
          const name = names.get(item.product_id) ?? 'Add-on'
          // The line's amount as the next charge carries it; before the service priced it, the unit price.
          const line = preview(ctx)?.line_items.find((entry) => entry.onetime_id === item.id)
          return h(
            'li',
            null,
            // The renewal that will charge it, as the service says (past a skipped one): the promise names that date.
            h('span', null, `${item.quantity} × ${name}, ${line ? formatMoney(line.amount, item.currency) : `${formatMoney(item.unit_amount, item.currency)} each`}${item.renewal_at ? `, with the renewal of ${formatDate(item.renewal_at)}` : ''}`),
            inlineButton('Remove', listError, ctx, {
              confirm: () => ({
                title: `Remove ${name}?`,
                body: [h('p', null, `${item.quantity} × ${name} is taken off your next order.`)],
                confirmLabel: 'Remove',
                danger: true,
              }),
              perform: () => api.removeOnetime(s.id, item.id),
              success: () => `${name} is removed from your next order.`,
            }, `Remove ${name}`),
          )
        }),
      )
    : null
  const loadProblem = onetimes instanceof Error ? h('p', { class: 'alert error', role: 'alert' }, 'The add-ons could not be loaded: ', errorText(onetimes)) : null
  if (addOnProducts instanceof Error || !addOnProducts || addOnProducts.length === 0) {
    return h(
      'details',
      { class: 'action' },
      h('summary', null, summary),
      loadProblem,
      list,
      listError,
      h('p', { class: 'hint' }, addOnProducts instanceof Error ? `The products could not be loaded: ${errorText(addOnProducts)}` : `${ctx.app.storeDisplayName === 'the store' ? 'The store' : ctx.app.storeDisplayName} has no products to add to an order right now.`),
    )
  }
  const select = h('select', { name: 'product_id', required: true }) as HTMLSelectElement
  select.appendChild(h('option', { value: '' }, 'Choose a product'))
  for (const product of [...addOnProducts].sort((a, b) => a.name.localeCompare(b.name))) {
    select.appendChild(h('option', { value: product.id }, `${product.name}, ${formatMoney(product.one_time_price!.amount, product.one_time_price!.currency)}`))
  }
  const quantity = h('input', { type: 'number', name: 'quantity', min: 1, max: 100, step: 1, required: true, inputmode: 'numeric' }) as HTMLInputElement
  quantity.value = '1'
  const product = () => addOnProducts.find((item) => item.id === select.value)
  return panel({
    reload: ctx.reload,
    summary,
    intro: `Charged once with your next renewal${preview(ctx) ? ` on ${formatDate(preview(ctx)!.next_charge_at)}` : ''} and shipped in the same order.`,
    fields: [loadProblem, list, listError, field('Product', select), field('Quantity', quantity, { hint: 'From 1 to 100.', className: 'narrow' })],
    submitLabel: 'Add to next order',
    validate: () => {
      if (!select.value) return 'Choose a product.'
      const n = Number(quantity.value)
      return Number.isInteger(n) && n >= 1 && n <= 100 ? null : 'Enter a whole number from 1 to 100.'
    },
    action: {
      confirm: () => {
        const item = product()!
        const n = Number(quantity.value)
        return {
          title: 'Add to your next order?',
          body: [h('p', null, `${n} × ${item.name} at ${formatMoney(item.one_time_price!.amount, item.one_time_price!.currency)} each, charged once with your next renewal.`)],
          confirmLabel: 'Add to next order',
        }
      },
      perform: () => api.addOnetime(s.id, { product_id: select.value, quantity: Number(quantity.value) }),
      success: () => `${product()?.name ?? 'The product'} is added to your next order.`,
      fieldNames: { product_id: 'The product', quantity: 'The quantity' },
    },
  })
}

function quantityPanel(ctx: ActionContext): HTMLDetailsElement {
  const { subscription: s } = ctx
  const input = h('input', { type: 'number', name: 'quantity', min: 1, max: 10000, step: 1, required: true, inputmode: 'numeric' }) as HTMLInputElement
  input.value = String(s.quantity)
  const quantity = () => Number(input.value)
  return panel({
    reload: ctx.reload,
    summary: 'Change quantity',
    fields: [field('Quantity', input, { hint: `Each costs ${formatMoney(s.amount, s.currency)}.` })],
    submitLabel: 'Update quantity',
    validate: () => (Number.isInteger(quantity()) && quantity() >= 1 && quantity() <= 10000 ? null : 'Enter a whole number from 1 to 10,000.'),
    action: {
      confirm: () => ({
        title: `Change the quantity to ${quantity()}?`,
        body: [h('p', null, `From the next charge you get ${quantity()} at ${formatMoney(s.amount, s.currency)} each, ${formatInterval(s.interval, s.interval_count)}.`)],
        confirmLabel: 'Update quantity',
      }),
      perform: () => api.action(s.id, 'quantity', { quantity: quantity() }),
      success: () => `The quantity is now ${quantity()}.`,
      fieldNames: { quantity: 'The quantity' },
    },
  })
}

function intervalPanel(ctx: ActionContext): HTMLDetailsElement {
  const { subscription: s } = ctx
  const count = h('input', { type: 'number', name: 'interval_count', min: 1, max: 365, step: 1, required: true, inputmode: 'numeric' }) as HTMLInputElement
  count.value = String(s.interval_count)
  const unit = intervalSelect(s.interval, false)
  const chosen = () => formatInterval(unit.value as Interval, Number(count.value))
  return panel({
    reload: ctx.reload,
    summary: 'Change how often it renews',
    fields: [
      h(
        'fieldset',
        { class: 'inline-fields' },
        h('legend', null, 'Renew every'),
        field('Number', count, { className: 'narrow' }),
        field('Period', unit),
      ),
    ],
    submitLabel: 'Update frequency',
    validate: () => (Number.isInteger(Number(count.value)) && Number(count.value) >= 1 && Number(count.value) <= 365 ? null : 'Enter a whole number from 1 to 365.'),
    action: {
      confirm: () => ({
        title: 'Change how often it renews?',
        body: [h('p', null, `From the next charge it renews ${chosen()}, at the same price each time.`)],
        confirmLabel: 'Update frequency',
      }),
      perform: () => api.action(s.id, 'interval', { interval: unit.value, interval_count: Number(count.value) }),
      success: () => `It now renews ${chosen()}.`,
      fieldNames: { interval: 'The period', interval_count: 'The number' },
    },
  })
}

const ADDRESS_FIELDS: { key: keyof Address; label: string; autocomplete: string; required: boolean; max: number }[] = [
  { key: 'name', label: 'Full name', autocomplete: 'shipping name', required: true, max: 200 },
  { key: 'line1', label: 'Address line 1', autocomplete: 'shipping address-line1', required: true, max: 200 },
  { key: 'line2', label: 'Address line 2 (optional)', autocomplete: 'shipping address-line2', required: false, max: 200 },
  { key: 'city', label: 'City', autocomplete: 'shipping address-level2', required: true, max: 100 },
  { key: 'state', label: 'State, province or region (optional)', autocomplete: 'shipping address-level1', required: false, max: 100 },
  { key: 'postal_code', label: 'Postal code', autocomplete: 'shipping postal-code', required: true, max: 20 },
  { key: 'country', label: 'Country code', autocomplete: 'shipping country', required: true, max: 2 },
  { key: 'phone', label: 'Phone (optional)', autocomplete: 'shipping tel', required: false, max: 40 },
]

function addressPanel(ctx: ActionContext): HTMLDetailsElement {
  const { subscription: s } = ctx
  const inputs = new Map<keyof Address, HTMLInputElement>()
  const fields = ADDRESS_FIELDS.map((spec) => {
    const input = h('input', {
      type: spec.key === 'phone' ? 'tel' : 'text',
      name: spec.key,
      autocomplete: spec.autocomplete,
      required: spec.required,
      maxlength: spec.max,
      ...(spec.key === 'country' ? { pattern: '[A-Za-z]{2}', size: 4, spellcheck: 'false' } : {}),
    }) as HTMLInputElement
    input.value = (s.shipping_address?.[spec.key] as string | null | undefined) ?? ''
    inputs.set(spec.key, input)
    return field(spec.label, input, spec.key === 'country' ? { hint: 'Two letters, for example US, GB or DE.', className: 'narrow' } : {})
  })
  const value = (key: keyof Address) => inputs.get(key)!.value.trim()
  const address = (): Address => ({
    name: value('name'),
    line1: value('line1'),
    line2: value('line2') || null,
    city: value('city'),
    state: value('state') || null,
    postal_code: value('postal_code'),
    country: value('country').toUpperCase(),
    phone: value('phone') || null,
  })
  return panel({
    reload: ctx.reload,
    summary: 'Change shipping address',
    fields,
    submitLabel: 'Save address',
    validate: () => {
      const missing = ADDRESS_FIELDS.filter((spec) => spec.required && !value(spec.key)).map((spec) => spec.label)
      if (missing.length) return `Fill in: ${missing.join(', ')}.`
      if (!/^[A-Za-z]{2}$/.test(value('country'))) return 'Enter the country as two letters, for example US.'
      return null
    },
    action: {
      confirm: () => {
        const next = address()
        return {
          title: 'Ship to this address?',
          body: [h('p', { class: 'address' }, [next.name, next.line1, next.line2, [next.city, next.state, next.postal_code].filter(Boolean).join(' '), next.country].filter(Boolean).join(', '))],
          confirmLabel: 'Save address',
        }
      },
      perform: () => api.action(s.id, 'shipping-address', { shipping_address: address() }),
      success: () => 'The shipping address is updated.',
      fieldNames: Object.fromEntries(ADDRESS_FIELDS.map((spec) => [spec.key, spec.label.replace(' (optional)', '')])),
    },
  })
}

/** A payment-failed email's link opens the subscription with `?action=payment-instrument`: the change is open at once. */
function asksForInstrumentChange(): boolean {
  return new URLSearchParams(location.search).get('action') === 'payment-instrument'
}

function paymentPanel(ctx: ActionContext): HTMLDetailsElement {
  const { instruments } = ctx
  // A store that charges through BigCommerce takes only the subscriber's stored cards: pick one.
  if (instruments instanceof Error || instruments?.gateway === 'platform') return storedCardPanel(ctx)
  return instrumentIdPanel(ctx)
}

/** A platform store: the subscriber's stored cards as radio buttons (brand, last 4, expiry). */
function storedCardPanel(ctx: ActionContext): HTMLDetailsElement {
  const { subscription: s, instruments } = ctx
  const summary = 'Change payment method'
  const open = s.status === 'past_due' || asksForInstrumentChange()
  if (instruments instanceof Error || !instruments) {
    return h(
      'details',
      { class: 'action', open },
      h('summary', null, summary),
      h('p', { class: 'alert error', role: 'alert' }, 'Your saved cards could not be loaded right now: ', errorText(instruments ?? undefined), ' Try again in a moment.'),
    )
  }
  const cards = instruments.data
  if (cards.length === 0) {
    return h(
      'details',
      { class: 'action', open },
      h('summary', null, summary),
      h('p', { class: 'hint' }, `You have no saved cards in your ${ctx.app.storeDisplayName} account. Save a card in your account at the store, then come back here to use it.`),
    )
  }
  const name = uid('instrument')
  const radios = cards.map((card) => {
    const current = card.token === s.payment_instrument_id
    const radio = h('input', { type: 'radio', name, value: card.token, checked: current }) as HTMLInputElement
    return { card, radio, row: checkboxField(`${instrumentLabel(card)}${current ? ' (current)' : ''}`, radio) }
  })
  const chosen = () => radios.find((entry) => entry.radio.checked)?.card
  return panel({
    reload: ctx.reload,
    summary,
    open,
    intro: `Currently: ${paymentMethodText(s)}. Choose one of the cards saved in your ${ctx.app.storeDisplayName} account.`,
    fields: [h('fieldset', { class: 'instrument-choices' }, h('legend', null, 'Saved cards'), radios.map((entry) => entry.row))],
    submitLabel: 'Use this card',
    validate: () => {
      const card = chosen()
      if (!card) return 'Choose a card first.'
      return card.token === s.payment_instrument_id ? 'This card already pays for the subscription. Choose another one.' : null
    },
    action: {
      confirm: () => ({
        title: 'Use this card?',
        body: [h('p', null, `Future charges go to ${instrumentLabel(chosen()!)}.`)],
        confirmLabel: 'Use it',
      }),
      perform: () => api.action(s.id, 'payment-instrument', { payment_instrument_id: chosen()!.token }),
      success: () => `Future charges go to ${instrumentLabel(chosen()!)}.`,
      fieldNames: { payment_instrument_id: 'The card' },
    },
  })
}

/** A test-gateway store keeps no saved cards: the instrument id is typed in. */
function instrumentIdPanel(ctx: ActionContext): HTMLDetailsElement {
  const { subscription: s } = ctx
  const input = h('input', { type: 'text', name: 'payment_instrument_id', required: true, maxlength: 200, autocomplete: 'off', spellcheck: 'false' }) as HTMLInputElement
  return panel({
    reload: ctx.reload,
    summary: 'Change payment method',
    open: s.status === 'past_due' || asksForInstrumentChange(),
    intro: `Currently: ${s.payment_instrument_id}. Use the ID of a payment method saved in your store account. Never enter a card number here.`,
    fields: [field('Payment method ID', input, { hint: 'For example instr_9f8e7d.' })],
    submitLabel: 'Use this payment method',
    validate: () => (input.value.trim() ? null : 'Enter the payment method ID.'),
    action: {
      confirm: () => ({
        title: 'Use this payment method?',
        body: [h('p', null, `Future charges go to ${input.value.trim()}.`)],
        confirmLabel: 'Use it',
      }),
      perform: () => api.action(s.id, 'payment-instrument', { payment_instrument_id: input.value.trim() }),
      success: () => 'The payment method is updated.',
      fieldNames: { payment_instrument_id: 'The payment method ID' },
    },
  })
}

function changeRequestPanel(ctx: ActionContext): HTMLDetailsElement {
  const { subscription: s } = ctx
  const options = ctx.swapOptions ?? []
  const quantity = h('input', { type: 'number', name: 'quantity', min: 1, max: 10000, step: 1, inputmode: 'numeric' }) as HTMLInputElement
  const planSelect = h('select', { name: 'plan_id' }) as HTMLSelectElement
  planSelect.appendChild(h('option', { value: '' }, 'No change'))
  for (const option of options) planSelect.appendChild(h('option', { value: option.plan.id }, optionLabel(option)))
  const count = h('input', { type: 'number', name: 'interval_count', min: 1, max: 365, step: 1, inputmode: 'numeric' }) as HTMLInputElement
  const unit = intervalSelect('', true)
  const note = h('textarea', { name: 'note', rows: 3, maxlength: 1000 }) as HTMLTextAreaElement
  const changes = (): ChangeRequest['changes'] => {
    const result: ChangeRequest['changes'] = {}
    if (quantity.value) result.quantity = Number(quantity.value)
    if (planSelect.value) result.plan_id = planSelect.value
    if (unit.value) result.interval = unit.value as Interval
    if (unit.value && count.value) result.interval_count = Number(count.value)
    return result
  }
  return panel({
    reload: ctx.reload,
    summary: 'Request a change',
    intro: `This is a business plan: changes to it are proposed to ${ctx.app.storeDisplayName}, who approves or declines them. Nothing changes until then.`,
    fields: [
      field('New quantity (optional)', quantity, { hint: `Now ${s.quantity}.`, className: 'narrow' }),
      field('New plan (optional)', planSelect),
      h('fieldset', { class: 'inline-fields' }, h('legend', null, 'Renew every (optional)'), field('Number', count, { className: 'narrow' }), field('Period', unit)),
      field('Note for the store (optional)', note),
    ],
    submitLabel: 'Send request',
    validate: () => {
      if (Object.keys(changes()).length === 0) return 'Choose at least one change: quantity, plan or how often it renews.'
      if (count.value && !unit.value) return 'Choose the period (days, weeks, months or years) to go with the number.'
      return null
    },
    action: {
      confirm: () => ({
        title: 'Send this change request?',
        body: [h('p', null, `${describeChanges(changes(), options)}. ${ctx.app.storeDisplayName === 'the store' ? 'The store' : ctx.app.storeDisplayName} decides; you can follow the request below.`)],
        confirmLabel: 'Send request',
      }),
      perform: () => api.createChangeRequest(s.id, { changes: changes(), ...(note.value.trim() ? { note: note.value.trim() } : {}) }),
      success: () => 'Your change request was sent to the store.',
      fieldNames: { quantity: 'The quantity', plan_id: 'The plan', interval: 'The period', interval_count: 'The number', note: 'The note', changes: 'The request' },
    },
  })
}

/** "Quantity 10, plan Business quarterly, renews every 3 months". */
export function describeChanges(changes: ChangeRequest['changes'], plans: { plan: Plan }[] = []): string {
  const parts: string[] = []
  if (changes.quantity !== undefined) parts.push(`quantity ${changes.quantity}`)
  if (changes.plan_id) parts.push(`plan ${plans.find((option) => option.plan.id === changes.plan_id)?.plan.name ?? changes.plan_id}`)
  if (changes.interval) parts.push(`renews ${formatInterval(changes.interval, changes.interval_count ?? 1)}`)
  else if (changes.interval_count) parts.push(`renews every ${changes.interval_count} periods`)
  const text = parts.join(', ')
  return text.charAt(0).toUpperCase() + text.slice(1)
}

const OFFER_WORDS: Record<RetentionOffer['type'], (offer: RetentionOffer) => { title: string; text: string; button: string; success: string }> = {
  pause: (offer) => ({
    title: `Take a break for ${offer.type === 'pause' ? offer.days : ''} days`,
    text: 'Nothing is charged or shipped meanwhile; it resumes by itself.',
    button: `Pause for ${offer.type === 'pause' ? offer.days : ''} days instead`,
    success: `Your subscription is paused for ${offer.type === 'pause' ? offer.days : ''} days instead of cancelled.`,
  }),
  skip: () => ({
    title: 'Skip the next order',
    text: 'Nothing is charged for the next renewal; the one after it goes ahead.',
    button: 'Skip the next order instead',
    success: 'The next renewal will be skipped, and your subscription stays.',
  }),
  discount: (offer) => ({
    title: 'Stay for less',
    text: `The code ${offer.type === 'discount' ? offer.code : ''} is applied to your next renewals.`,
    button: `Apply ${offer.type === 'discount' ? offer.code : 'the code'} instead`,
    success: `The code ${offer.type === 'discount' ? offer.code : ''} is applied, and your subscription stays.`,
  }),
}

/**
 * Starts a cancelled subscription again on its plan and payment method (POST .../reactivate): while
 * the period it paid for before the cancellation still runs, its next charge is at that period's end;
 * otherwise it is charged now.
 */
function reactivateButton(ctx: ActionContext): HTMLElement {
  const { subscription: s, store } = ctx
  const now = store ? Date.parse(store.now) : Date.now()
  const paidUntil = s.current_period_end && Date.parse(s.current_period_end) > now ? s.current_period_end : null
  const error = alertBox()
  const button = h('button', { type: 'button', class: 'button primary' }, 'Reactivate subscription')
  button.addEventListener('click', () =>
    void run(button, {
      error,
      reload: ctx.reload,
      confirm: () => ({
        title: 'Reactivate this subscription?',
        body: paidUntil
          ? [h('p', null, `It starts again now on the same plan. The period you paid for runs until ${formatDate(paidUntil)}: the next charge is then, to ${paymentMethodText(s)}.`)]
          : [
              h('p', null, `It starts again now on the same plan, and a new period is charged now to ${paymentMethodText(s)}.`),
              h('p', null, `The next renewal follows ${formatLength(s.interval, s.interval_count * (s.prepaid?.cycles_total ?? 1))} later.`),
            ],
        confirmLabel: paidUntil ? 'Reactivate' : 'Reactivate and pay now',
      }),
      perform: () => api.action(s.id, 'reactivate', paidUntil ? { next_charge_at: paidUntil } : {}),
      success: () => 'Your subscription is active again.',
    }),
  )
  return h('div', null, h('div', { class: 'button-row quick-actions' }, button), error)
}

/**
 * Cancelling: first the store's offers (GET retention-offers); taking one performs it. Declining goes
 * on to the cancellation, with a reason picked from the store's list and optional words.
 */
function cancelPanel(ctx: ActionContext): HTMLDetailsElement {
  const { subscription: s } = ctx
  const reasons = ctx.store?.cancellation_reasons ?? []
  const reasonCode = h('select', { name: 'reason_code' }) as HTMLSelectElement
  reasonCode.appendChild(h('option', { value: '' }, 'Choose a reason (optional)'))
  for (const reason of reasons) reasonCode.appendChild(h('option', { value: reason.code }, reason.label))
  const reason = h('textarea', { name: 'reason', rows: 3, maxlength: 500 }) as HTMLTextAreaElement
  const canWait = Boolean(s.current_period_end) && !s.cancel_at_period_end && s.status !== 'pending'
  // Ticked by default: the subscriber keeps what they paid for unless they choose to end it now.
  const atPeriodEnd = h('input', { type: 'checkbox', name: 'at_period_end', checked: true }) as HTMLInputElement
  const later = () => canWait && atPeriodEnd.checked
  const details = panel({
    reload: ctx.reload,
    summary: s.cancel_at_period_end ? 'Cancel now instead' : 'Cancel subscription',
    danger: true,
    intro: s.cancel_at_period_end ? `It already cancels on ${formatDate(s.current_period_end)}. You can end it now instead.` : undefined,
    fields: [
      reasons.length ? field('Why are you cancelling?', reasonCode) : null,
      field(reasons.length ? 'Anything else? (optional)' : 'Reason (optional)', reason, { hint: 'Tell the store why you are cancelling.' }),
      canWait ? checkboxField(`Keep it until the paid period ends (${formatDate(s.current_period_end)})`, atPeriodEnd) : null,
    ],
    submitLabel: 'Cancel subscription',
    action: {
      confirm: () => ({
        title: 'Cancel this subscription?',
        body: [
          h('p', null, later() ? `It stays active until ${formatDate(s.current_period_end)} and is not renewed after that.` : 'It ends now and is not renewed.'),
          reasonCode.value ? h('p', null, `Reason: ${reasons.find((item) => item.code === reasonCode.value)?.label ?? reasonCode.value}.`) : null,
          h('p', null, ctx.store?.reactivation ? 'You can reactivate it here later.' : 'To restart it later, ask the store.'),
        ],
        confirmLabel: 'Yes, cancel it',
        backLabel: 'Keep subscription',
        danger: true,
      }),
      perform: () =>
        api.action(s.id, 'cancel', {
          at_period_end: later(),
          ...(reasonCode.value ? { reason_code: reasonCode.value } : {}),
          ...(reason.value.trim() ? { reason: reason.value.trim() } : {}),
        }),
      success: () => (later() ? `Your subscription will end on ${formatDate(s.current_period_end)}.` : 'Your subscription is cancelled.'),
      fieldNames: { reason: 'The reason', reason_code: 'The reason' },
    },
  })
  if (s.cancel_at_period_end) return details
  // The retention step comes first: the form shows once the subscriber declines the offers (or there are none).
  const form = details.querySelector('form')!
  const step = h('div', { class: 'retention' })
  form.hidden = true
  details.insertBefore(step, form)
  let loaded = false
  details.addEventListener('toggle', () => {
    if (!details.open || loaded) return
    loaded = true
    void showOffers()
  })
  const goOn = () => {
    step.hidden = true
    form.hidden = false
    ;(form.querySelector('select, textarea') as HTMLElement | null)?.focus()
  }
  async function showOffers(): Promise<void> {
    step.replaceChildren(h('p', { class: 'loading-inline' }, 'Loading…'))
    let offers: RetentionOffer[]
    try {
      offers = (await api.retentionOffers(s.id)).data
    } catch (failure) {
      if (failure instanceof ApiError && failure.status === 401) return
      offers = []
    }
    if (offers.length === 0) {
      step.replaceChildren()
      goOn()
      return
    }
    const error = alertBox()
    const headingId = uid('offers')
    step.replaceChildren(
      h('h3', { id: headingId, tabindex: '-1' }, 'Before you go'),
      h('p', null, `${ctx.app.storeDisplayName === 'the store' ? 'The store' : ctx.app.storeDisplayName} would like to keep you. Would one of these help?`),
      h(
        'ul',
        { class: 'offer-list', 'aria-labelledby': headingId },
        offers.map((offer) => {
          const words = OFFER_WORDS[offer.type](offer)
          const button = h('button', { type: 'button', class: 'button primary' }, words.button)
          button.addEventListener('click', async () => {
            if (busy.has(button)) return
            busy.add(button)
            button.setAttribute('aria-busy', 'true')
            error.replaceChildren()
            try {
              await api.acceptOffer(s.id, offer.type)
            } catch (failure) {
              busy.delete(button)
              button.removeAttribute('aria-busy')
              if (failure instanceof ApiError && failure.status === 401) return
              error.replaceChildren(h('p', null, h('strong', null, 'Not changed: '), errorText(failure)))
              return
            }
            await ctx.reload(words.success)
          })
          return h('li', { class: 'offer' }, h('p', { class: 'offer-title' }, words.title), h('p', { class: 'hint' }, words.text), button)
        }),
      ),
      error,
      h('div', { class: 'button-row' }, h('button', { type: 'button', class: 'button secondary', onclick: goOn }, 'No thanks, continue to cancel')),
    )
    ;(step.querySelector('h3') as HTMLElement).focus()
  }
  return details
}
