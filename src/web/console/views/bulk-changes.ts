import { api } from '../api.ts'
import type { ConsoleApp } from '../app.ts'
import { confirmAction } from '../../shared/confirm.ts'
import { checkboxField, h, replaceChildren, uid } from '../../shared/dom.ts'
import { currency, currentTimeZone, date, dateTime, money, number, STATUS_LABEL, storeTimeToIso, toMinor } from '../format.ts'
import { paths } from '../router.ts'
import { mayChange } from '../session.ts'
import type { BulkAction, BulkBody, BulkItem, BulkOperation, BulkPreview, Plan, Product, Store } from '../types.ts'
import { badge, errorBox, field, input, loading, pageHeader, section, select, table } from '../ui.ts'
import { allPlans, allProducts, consolePlanLabel, plansByProduct } from './subscriptions.ts'

const TITLE = 'Bulk changes'
/** How often a running operation's progress is read. */
const POLL_MS = 1000
/** Failed subscriptions read per page of the results. */
const FAILED_PAGE = 50

const ACTIONS: [BulkAction, string][] = [
  ['swap_plan', 'Change plan'],
  ['change_price', 'Change price'],
  ['reschedule', 'Move the next charge'],
  ['pause', 'Pause'],
  ['resume', 'Resume'],
  ['cancel', 'Cancel'],
  ['apply_discount', 'Apply a discount code'],
]
const STATUS: Record<BulkOperation['status'], [string, string]> = { running: ['Running', 'info'], completed: ['Completed', 'good'] }

const plural = (n: number, one: string, many = `${one}s`) => `${number(n)} ${n === 1 ? one : many}`

type Params = NonNullable<BulkBody['params']>
type Filter = NonNullable<BulkBody['filter']>
/** Plans by id, each named with its product, for the preview, the confirmation and the past operations. */
type PlanNames = (id: string) => string

/**
 * One change to many subscriptions (POST /admin/bulk-operations): the subscriptions by the list's
 * filters and a range of next charges, the change with its parameters, a preview (the dry run: how
 * many and the first 10), then, confirmed, the operation the worker runs, its progress read every
 * second and its refusals listed at the end. `?operation={id}` shows one operation (a past one, or a
 * running one after the page was left). The store's past operations below.
 */
export async function renderBulkChanges(app: ConsoleApp, isCurrent: () => boolean, params: URLSearchParams): Promise<void> {
  replaceChildren(app.main, pageHeader(TITLE), loading())
  app.finishRender(TITLE)
  const shownId = params.get('operation')
  let plans: Plan[], products: Map<string, Product>, past: BulkOperation[], shown: BulkOperation | null
  try {
    ;[plans, products, past, shown] = await Promise.all([
      allPlans(),
      allProducts().catch(() => new Map<string, Product>()),
      api.bulkOperations().then((page) => page.data),
      shownId ? api.bulkOperation(shownId) : Promise.resolve(null),
    ])
  } catch (error) {
    if (!isCurrent()) return
    replaceChildren(app.main, pageHeader(TITLE), errorBox(error))
    return
  }
  if (!isCurrent()) return
  const store = app.store!
  const byId = new Map(plans.map((plan) => [plan.id, plan]))
  const planName: PlanNames = (id) => {
    const plan = byId.get(id)
    return plan ? consolePlanLabel(plan, products) : id
  }

  const pastBox = h('div', null, pastOperations(past, planName))
  const refreshPast = async () => {
    const page = await api.bulkOperations().catch(() => null)
    if (page && isCurrent()) replaceChildren(pastBox, pastOperations(page.data, planName))
  }
  const context: PanelContext = { app, isCurrent, planName, refreshPast }

  replaceChildren(
    app.main,
    pageHeader(TITLE, h('p', { class: 'subtitle' }, 'One change to many subscriptions: choose them, preview, then apply. Each is changed as on its own page, with the same rules and events; one that cannot be changed is listed with why, and the others go on.')),
    shown ? section('Operation', operationPanel(context, shown)) : null,
    mayChange('full')
      ? section('Make a change', changeForm(context, store, plans, products))
      : section('Make a change', h('p', null, 'This key may only read: bulk changes need a full-access key.')),
    section('Past operations', pastBox),
  )
  app.refocusHeading()
}

interface PanelContext {
  app: ConsoleApp
  isCurrent: () => boolean
  planName: PlanNames
  refreshPast: () => Promise<void>
}

/** "2026-05-03" as the day after, "2026-05-04": a range "to May 3" takes the whole of May 3. */
function dayAfter(text: string): string {
  const day = new Date(`${text}T00:00:00Z`)
  day.setUTCDate(day.getUTCDate() + 1)
  return day.toISOString().slice(0, 10)
}

/** The change in words: the preview, the confirmation, the operation's heading and the past list say it alike. */
function describe(action: BulkAction, params: Record<string, unknown>, planName: PlanNames): string {
  switch (action) {
    case 'swap_plan':
      return `Change plan to ${planName(String(params.plan_id))}`
    case 'change_price':
      return `Change price to ${money(Number(params.amount), currency())}${typeof params.notice_days === 'number' ? ` with ${plural(params.notice_days, 'day')}' notice` : ''}`
    case 'reschedule': {
      if (typeof params.shift_days === 'number') return `Move the next charge ${plural(Math.abs(params.shift_days), 'day')} ${params.shift_days > 0 ? 'later' : 'earlier'}`
      return `Move the next charge to ${dateTime(String(params.next_charge_at))}`
    }
    case 'pause':
      return typeof params.resume_at === 'string' ? `Pause until ${date(params.resume_at)}` : 'Pause until resumed'
    case 'resume':
      return 'Resume'
    case 'cancel':
      return params.at_period_end ? 'Cancel at the end of the paid period' : 'Cancel now'
    case 'apply_discount':
      return `Apply the discount code ${String(params.code)}`
  }
}

/**
 * The subscriptions (status, plan, search, next charges from and to, in the store's zone), the change
 * and its parameters, Preview; then the preview with Apply to N subscriptions; then the operation.
 */
function changeForm(context: PanelContext, store: Store, plans: Plan[], products: Map<string, Product>): HTMLElement {
  const { app, isCurrent, planName } = context
  const zone = currentTimeZone()
  const sorted = plansByProduct(plans, products)

  // Which subscriptions.
  const status = select('status', [['', 'Any status'], ...Object.entries(STATUS_LABEL)])
  const plan = select('plan_id', [['', 'Any plan'], ...sorted.map((p) => [p.id, `${consolePlanLabel(p, products)}${p.active ? '' : ', archived'}`] as [string, string])])
  const q = input({ type: 'search', name: 'q', autocomplete: 'off', spellcheck: 'false', maxlength: 200 })
  const from = input({ type: 'date', name: 'next_charge_from' })
  const to = input({ type: 'date', name: 'next_charge_to' })

  // The change.
  const action = select('action', ACTIONS)
  const swapTo = select('swap_plan_id', [['', 'Choose a plan'], ...sorted.filter((p) => p.active).map((p) => [p.id, consolePlanLabel(p, products)] as [string, string])])
  const amount = input({ type: 'text', name: 'amount', inputmode: 'decimal', autocomplete: 'off' })
  const noticeDays = input({ type: 'number', name: 'notice_days', min: store.price_change_notice_days, max: 365, step: 1, inputmode: 'numeric' })
  const shiftRadio = h('input', { type: 'radio', name: 'reschedule_mode', value: 'shift', id: uid('bulk-mode'), checked: true })
  const atRadio = h('input', { type: 'radio', name: 'reschedule_mode', value: 'at', id: uid('bulk-mode') })
  const shiftDays = input({ type: 'number', name: 'shift_days', min: -365, max: 365, step: 1, inputmode: 'numeric' })
  const nextAt = input({ type: 'datetime-local', name: 'next_charge_at' })
  const resumeAt = input({ type: 'date', name: 'resume_at' })
  const atPeriodEnd = input({ type: 'checkbox', name: 'at_period_end', checked: true })
  const reason = input({ type: 'text', name: 'reason', maxlength: 500 })
  const code = input({ type: 'text', name: 'code', autocomplete: 'off', spellcheck: 'false', maxlength: 64 })

  const shiftField = field('Days to move each next charge', shiftDays, { hint: 'Later with a positive number, earlier with a negative one; the time of day stays.' })
  const atField = field(`New next charge (${zone})`, nextAt, { hint: 'The same date and time for every subscription.' })
  const showMode = () => {
    shiftField.hidden = !shiftRadio.checked
    atField.hidden = !atRadio.checked
  }
  shiftRadio.addEventListener('change', showMode)
  atRadio.addEventListener('change', showMode)
  showMode()

  const paramGroups: Record<BulkAction, HTMLElement> = {
    swap_plan: h('div', { class: 'bulk-fields' }, field('New plan', swapTo, { hint: 'From each subscription’s next charge.', className: 'wide' })),
    change_price: h(
      'div',
      { class: 'bulk-fields' },
      field(`New price (${store.currency})`, amount, { hint: 'Each subscription’s price for one unit, from its first renewal after the notice.' }),
      field('Days of notice (optional)', noticeDays, { hint: `At least ${plural(store.price_change_notice_days, 'day')} (Settings); empty: that.` }),
    ),
    reschedule: h(
      'div',
      { class: 'bulk-fields bulk-reschedule' },
      h(
        'fieldset',
        { class: 'switches' },
        h('legend', null, 'Move'),
        h('div', { class: 'field checkbox' }, shiftRadio, h('label', { for: shiftRadio.id }, 'Each by a number of days')),
        h('div', { class: 'field checkbox' }, atRadio, h('label', { for: atRadio.id }, 'All to one date and time')),
      ),
      shiftField,
      atField,
    ),
    pause: h('div', { class: 'bulk-fields' }, field(`Resume on (optional, ${zone})`, resumeAt, { hint: 'Empty: paused until resumed.' })),
    resume: h('div', { class: 'bulk-fields' }, h('p', { class: 'hint' }, 'Paused subscriptions renew again from now on.')),
    cancel: h('div', { class: 'bulk-fields' }, checkboxField('At the end of the paid period', atPeriodEnd), field('Note (optional)', reason, { hint: 'Kept with each subscription and sent in its events.' })),
    apply_discount: h('div', { class: 'bulk-fields' }, field('Discount code', code, { hint: 'One of the store’s codes (Discounts).' })),
  }
  const showParams = () => {
    for (const [name, group] of Object.entries(paramGroups)) group.hidden = name !== action.value
  }
  action.addEventListener('change', showParams)
  showParams()

  const previewButton = h('button', { type: 'submit', class: 'button primary' }, 'Preview')
  const formStatus = h('div', { class: 'form-status' })
  const form = h(
    'form',
    { class: 'bulk-form', novalidate: true },
    h(
      'fieldset',
      null,
      h('legend', null, 'Which subscriptions'),
      h(
        'div',
        { class: 'bulk-fields' },
        field('Plan', plan, { className: 'wide' }),
        field('Status', status),
        field('Email, name, order number or id', q),
        field(`Next charge from (${zone})`, from),
        field(`Next charge to (${zone})`, to, { hint: 'That day included.' }),
      ),
    ),
    h('fieldset', null, h('legend', null, 'The change'), h('div', { class: 'bulk-fields' }, field('Action', action)), Object.values(paramGroups)),
    h('div', { class: 'button-row' }, previewButton),
    formStatus,
  )
  const previewBox = h('div', { class: 'bulk-preview' })
  const operationBox = h('div', { class: 'bulk-operation-box' })

  /** What the form asks for, or what is missing with the control to fix it. */
  function read(): { body: BulkBody } | { problem: string; control: HTMLElement } {
    const filter: Filter = {}
    if (status.value) filter.status = status.value as Filter['status']
    if (plan.value) filter.plan_id = plan.value
    if (q.value.trim()) filter.q = q.value.trim()
    if (from.value) {
      const at = storeTimeToIso(from.value)
      if (!at) return { problem: 'Enter the first day of next charges, or leave it empty.', control: from }
      filter.next_charge_from = at
    }
    if (to.value) {
      const at = storeTimeToIso(dayAfter(to.value))
      if (!at) return { problem: 'Enter the last day of next charges, or leave it empty.', control: to }
      if (filter.next_charge_from && at <= filter.next_charge_from) return { problem: 'The last day of next charges is before the first.', control: to }
      filter.next_charge_to = at
    }
    const chosen = action.value as BulkAction
    const params: Params = {}
    switch (chosen) {
      case 'swap_plan':
        if (!swapTo.value) return { problem: 'Choose the plan to move to.', control: swapTo }
        params.plan_id = swapTo.value
        break
      case 'change_price': {
        const minor = toMinor(amount.value, store.currency)
        if (!Number.isInteger(minor) || minor < 1) return { problem: `Enter the new price in ${store.currency}, more than 0.`, control: amount }
        params.amount = minor
        if (noticeDays.value.trim()) {
          const days = Number(noticeDays.value)
          if (!Number.isInteger(days) || days < store.price_change_notice_days || days > 365) return { problem: `Enter the days of notice: a whole number from ${store.price_change_notice_days} to 365, or leave it empty.`, control: noticeDays }
          params.notice_days = days
        }
        break
      }
      case 'reschedule':
        if (shiftRadio.checked) {
          const days = Number(shiftDays.value)
          if (!shiftDays.value.trim() || !Number.isInteger(days) || days === 0 || Math.abs(days) > 365) return { problem: 'Enter the days to move by: a whole number from -365 to 365, not 0.', control: shiftDays }
          params.shift_days = days
        } else {
          const at = storeTimeToIso(nextAt.value)
          if (!at) return { problem: 'Choose the date and time of the next charge.', control: nextAt }
          params.next_charge_at = at
        }
        break
      case 'pause':
        if (resumeAt.value) {
          const at = storeTimeToIso(resumeAt.value)
          if (!at) return { problem: 'Enter the date to resume on, or leave it empty.', control: resumeAt }
          params.resume_at = at
        }
        break
      case 'resume':
        break
      case 'cancel':
        params.at_period_end = atPeriodEnd.checked
        if (reason.value.trim()) params.reason = reason.value.trim()
        break
      case 'apply_discount':
        if (!code.value.trim()) return { problem: 'Enter the discount code.', control: code }
        params.code = code.value.trim()
        break
    }
    return { body: { action: chosen, filter, params } }
  }

  let busy = false
  // A preview describes the form as it was: any change to the form sets it aside, so what is applied is what was previewed.
  const forget = () => {
    if (busy) return
    replaceChildren(previewBox)
    replaceChildren(formStatus)
  }
  form.addEventListener('input', forget)
  form.addEventListener('change', forget)

  const setBusy = (value: boolean) => {
    busy = value
    previewButton.disabled = value
    previewButton.toggleAttribute('aria-busy', value)
    for (const button of previewBox.querySelectorAll('button')) button.disabled = value
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault()
    if (busy) return
    replaceChildren(formStatus)
    replaceChildren(previewBox)
    const asked = read()
    if ('problem' in asked) {
      replaceChildren(formStatus, h('p', { class: 'error-box', role: 'alert' }, asked.problem))
      asked.control.focus()
      return
    }
    void (async () => {
      setBusy(true)
      try {
        const preview = await api.previewBulk(asked.body)
        if (!isCurrent()) return
        const heading = h('h3', { tabindex: -1 }, plural(preview.total, 'subscription'))
        replaceChildren(previewBox, previewView(heading, preview, asked.body, planName, () => void apply(asked.body, preview.total)))
        heading.focus()
        app.announce(`${plural(preview.total, 'subscription')} ${preview.total === 1 ? 'matches' : 'match'}.`)
      } catch (error) {
        if (!isCurrent()) return
        replaceChildren(formStatus, errorBox(error))
        app.announce(`Refused: ${(formStatus.textContent ?? '').trim()}`, { kind: 'error' })
        previewButton.focus()
      } finally {
        setBusy(false)
      }
    })()
  })

  async function apply(body: BulkBody, count: number): Promise<void> {
    if (busy) return
    const what = describe(body.action, body.params ?? {}, planName)
    const danger = body.action === 'cancel'
    const confirmed = await confirmAction({
      title: `${what}: ${plural(count, 'subscription')}?`,
      body: [
        h('p', null, `${what} for the ${plural(count, 'subscription')} of the preview. Each is changed as on its own page; one that cannot be changed is listed with why, and the others go on.`),
        h('p', null, 'The subscriptions are chosen again as it starts: one that changed since the preview may be in or out. There is no undo for the whole operation.'),
      ],
      confirmLabel: `Apply to ${plural(count, 'subscription')}`,
      danger,
    })
    if (!confirmed || !isCurrent()) return
    setBusy(true)
    try {
      const operation = await api.startBulk(body)
      if (!isCurrent()) return
      replaceChildren(previewBox)
      replaceChildren(operationBox, operationPanel(context, operation, { focus: true }))
      void context.refreshPast()
    } catch (error) {
      if (!isCurrent()) return
      replaceChildren(formStatus, errorBox(error))
      app.announce(`Refused: ${(formStatus.textContent ?? '').trim()}`, { kind: 'error' })
      previewButton.focus()
    } finally {
      setBusy(false)
    }
  }

  return h('div', null, form, previewBox, operationBox)
}

/** The dry run: how many, the first 10 (id, email, plan, next charge), and Apply to N subscriptions. */
function previewView(heading: HTMLElement, preview: BulkPreview, body: BulkBody, planName: PlanNames, apply: () => void): HTMLElement {
  const what = describe(body.action, body.params ?? {}, planName)
  if (preview.total === 0) return h('div', null, heading, h('p', null, 'No subscriptions match: change the filters and preview again.'))
  return h(
    'div',
    null,
    heading,
    h('p', null, `${what}: ${plural(preview.total, 'subscription')} ${preview.total === 1 ? 'matches' : 'match'}. Nothing has changed yet.`),
    h(
      'div',
      { class: 'bulk-table' },
      table(
        preview.total > preview.sample.length ? `The first ${number(preview.sample.length)} of ${plural(preview.total, 'subscription')}` : `The ${plural(preview.total, 'subscription')}`,
        ['Subscription', 'Email', 'Plan', 'Status', 'Next charge'],
        preview.sample.map((s) => [h('a', { href: paths.subscription(s.id) }, h('code', null, s.id)), s.email, planName(s.plan_id), STATUS_LABEL[s.status] ?? s.status, date(s.next_charge_at)]),
      ),
    ),
    h('div', { class: 'button-row' }, h('button', { type: 'button', class: body.action === 'cancel' ? 'button danger' : 'button primary', onclick: apply }, `Apply to ${plural(preview.total, 'subscription')}`)),
  )
}

/**
 * One operation: what it does, a progress bar (done of total, read every second while it runs), then
 * its counts and the subscriptions it could not change (each linked, with the problem's code and
 * detail). The focus goes to its heading when asked, and to the results when they come unless the
 * user has moved elsewhere meanwhile.
 */
function operationPanel(context: PanelContext, first: BulkOperation, { focus = false }: { focus?: boolean } = {}): HTMLElement {
  const { app, isCurrent, planName } = context
  const heading = h('h3', { tabindex: -1 }, `${describe(first.action, first.params, planName)}: ${plural(first.total, 'subscription')}`)
  const meta = h('p', { class: 'hint' })
  const labelId = uid('bulk-progress')
  const fill = h('div', { class: 'bulk-progress-fill' })
  const bar = h('div', { class: 'bulk-progress', role: 'progressbar', 'aria-labelledby': labelId, 'aria-valuemin': 0 }, fill)
  const counts = h('p', { class: 'bulk-counts' })
  const results = h('div', { class: 'bulk-results' })
  const panel = h('div', { class: 'bulk-operation', 'aria-busy': 'true' }, heading, meta, h('div', { class: 'bulk-progress-wrap' }, h('p', { id: labelId, class: 'bulk-progress-label' }, 'Progress'), bar), counts, results)

  const show = (operation: BulkOperation) => {
    const [label, tone] = STATUS[operation.status]
    replaceChildren(meta, badge(label, tone), ` Started ${dateTime(operation.created_at)}`, operation.finished_at ? `, finished ${dateTime(operation.finished_at)}` : '', '. ', h('code', null, operation.id))
    // An operation with no targets is whole at once.
    const ratio = operation.total === 0 ? 1 : operation.done / operation.total
    bar.setAttribute('aria-valuemax', String(operation.total))
    bar.setAttribute('aria-valuenow', String(operation.done))
    bar.setAttribute('aria-valuetext', `${number(operation.done)} of ${plural(operation.total, 'subscription')} done`)
    fill.style.width = `${Math.round(ratio * 1000) / 10}%`
    counts.textContent = `${number(operation.done)} of ${plural(operation.total, 'subscription')} done: ${number(operation.succeeded)} changed, ${number(operation.failed)} not.`
  }

  const finish = async (operation: BulkOperation) => {
    panel.setAttribute('aria-busy', 'false')
    const resultsHeading = h('h4', { tabindex: -1 }, 'Results')
    const figures = h('dl', { class: 'bulk-figures' }, ([['Changed', operation.succeeded], ['Not changed', operation.failed]] as const).map(([term, value]) => h('div', null, h('dt', null, term), h('dd', null, number(value)))))
    const failedBox = h('div', null, operation.failed > 0 ? loading('Loading the subscriptions not changed…') : h('p', null, 'Every subscription was changed.'))
    replaceChildren(results, resultsHeading, figures, failedBox)
    // The results take the focus unless the user has moved elsewhere meanwhile (never steal it).
    const active = document.activeElement
    if (!active || active === document.body || panel.contains(active)) resultsHeading.focus()
    app.announce(`${describe(operation.action, operation.params, planName)}: ${number(operation.succeeded)} changed, ${number(operation.failed)} not.`)
    if (operation.failed > 0) await showFailed(failedBox, operation)
  }

  const showFailed = async (box: HTMLElement, operation: BulkOperation, cursor: string | null = null, rows: BulkItem[] = []) => {
    let page
    try {
      page = await api.bulkResults(operation.id, { status: 'failed', cursor, limit: FAILED_PAGE })
    } catch (error) {
      if (isCurrent()) replaceChildren(box, errorBox(error))
      return
    }
    if (!isCurrent()) return
    const all = [...rows, ...page.data]
    const more = page.next_cursor
      ? h('button', { type: 'button', class: 'button secondary', onclick: () => void showFailed(box, operation, page.next_cursor, all) }, 'Show more')
      : null
    replaceChildren(
      box,
      h(
        'div',
        { class: 'bulk-table bulk-failed' },
        table(
          `Not changed (${number(operation.failed)})`,
          ['Subscription', 'Code', 'Detail'],
          all.map((item) => [h('a', { href: paths.subscription(item.subscription_id) }, h('code', null, item.subscription_id)), h('code', null, item.code ?? '—'), item.detail ?? '—']),
        ),
      ),
      more,
    )
  }

  const poll = async (operation: BulkOperation) => {
    if (!isCurrent()) return
    show(operation)
    if (operation.status === 'completed') {
      await finish(operation)
      await context.refreshPast()
      return
    }
    setTimeout(() => {
      if (!isCurrent()) return
      api.bulkOperation(operation.id).then(
        (next) => void poll(next),
        // One reading missed: the next second tries again.
        () => void poll(operation),
      )
    }, POLL_MS)
  }

  void poll(first)
  if (focus) queueMicrotask(() => heading.focus())
  return panel
}

/** The store's operations, newest first: when (opening it), what, status, done of total, failed. */
function pastOperations(operations: BulkOperation[], planName: PlanNames): HTMLElement {
  if (operations.length === 0) return h('p', null, 'No bulk changes yet.')
  return h(
    'div',
    { class: 'bulk-table' },
    table(
      'Past operations, newest first',
      ['Started', 'Change', 'Status', 'Done', 'Not changed'],
      operations.map((o) => {
        const [label, tone] = STATUS[o.status]
        return [
          h('a', { href: `${paths.bulkChanges}?operation=${encodeURIComponent(o.id)}` }, dateTime(o.created_at)),
          describe(o.action, o.params, planName),
          badge(label, tone),
          `${number(o.done)} of ${number(o.total)}`,
          number(o.failed),
        ]
      }),
      { captionHidden: true },
    ),
    h('p', { class: 'hint' }, `The ${operations.length === 1 ? 'latest' : `${number(operations.length)} latest`}. Open one by its date for its results.`),
  )
}
