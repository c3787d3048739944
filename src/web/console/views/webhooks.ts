import { api, errorText } from '../api.ts'
import type { ConsoleApp } from '../app.ts'
import { h, replaceChildren, type Child } from '../../shared/dom.ts'
import { currentTimeZone, dateTime, isoToStoreInput, percent, storeTimeToIso } from '../format.ts'
import { navigate, paths } from '../router.ts'
import type { Delivery, WebhookEndpoint } from '../types.ts'
import { actionForm, badge, definitionList, errorBox, field, input, loading, pageHeader, section, select, table } from '../ui.ts'

/** The event catalogue (docs/contract.md, Events); an endpoint subscribes to some or all. */
export const EVENT_TYPES = [
  'subscription.created', 'subscription.activated', 'subscription.charged', 'subscription.past_due', 'subscription.paused',
  'subscription.resumed', 'subscription.cancelled', 'subscription.updated', 'subscription.renewal_upcoming', 'subscription.skipped',
  'subscription.unskipped', 'subscription.swapped', 'subscription.expired', 'subscription.payment_instrument_updated', 'subscription.gifted',
  'prepaid.order_created', 'shipping.address_updated', 'charge.succeeded', 'charge.failed', 'charge.refunded',
  'change_request.created', 'change_request.approved', 'change_request.rejected',
]

const DELIVERY_TONE: Record<string, string> = { succeeded: 'good', pending: 'info', failed: 'bad' }

interface Health {
  rate: number | null
  lastFailure: Delivery | null
  checked: number
}

/** Health from the latest 100 deliveries: the share that succeeded (pending ones aside) and the last failure. */
async function health(endpoint: WebhookEndpoint): Promise<Health> {
  const page = await api.deliveries(endpoint.id, { limit: 100 })
  const settled = page.data.filter((d) => d.status !== 'pending')
  const ok = settled.filter((d) => d.status === 'succeeded').length
  const lastFailure = page.data.find((d) => d.status === 'failed' || (d.last_error !== null && d.status !== 'succeeded')) ?? null
  return { rate: settled.length ? ok / settled.length : null, lastFailure, checked: settled.length }
}

function healthText(endpoint: WebhookEndpoint, hl: Health): Child[] {
  return [
    endpoint.status === 'enabled' ? badge('Enabled', 'good') : badge('Disabled', 'bad'),
    ' ',
    hl.rate === null ? 'No deliveries yet' : `${percent(hl.rate)} delivered (last ${hl.checked})`,
    hl.lastFailure ? `; last failure ${dateTime(hl.lastFailure.created_at)}${hl.lastFailure.last_status_code ? ` (HTTP ${hl.lastFailure.last_status_code})` : hl.lastFailure.last_error ? ` (${hl.lastFailure.last_error})` : ''}` : '',
    endpoint.disabled_reason ? `; disabled: ${endpoint.disabled_reason}` : '',
  ]
}

function secretBox(secret: string, what: string): HTMLElement {
  return h('div', { class: 'secret-box', role: 'status' }, h('p', null, h('strong', null, `${what} It is shown only this once: copy it now.`)), h('code', { class: 'secret' }, secret))
}

export async function renderWebhooks(app: ConsoleApp, isCurrent: () => boolean): Promise<void> {
  replaceChildren(app.main, pageHeader('Webhooks'), loading())
  app.finishRender('Webhooks')
  let endpoints: WebhookEndpoint[]
  let healths: Health[]
  try {
    endpoints = (await api.webhooks()).data
    healths = await Promise.all(endpoints.map((endpoint) => health(endpoint).catch(() => ({ rate: null, lastFailure: null, checked: 0 }))))
  } catch (error) {
    if (!isCurrent()) return
    replaceChildren(app.main, pageHeader('Webhooks'), errorBox(error))
    return
  }
  if (!isCurrent()) return

  const url = input({ type: 'url', name: 'url', required: true, autocomplete: 'off', placeholder: 'https://example.com/webhooks/billing' })
  const description = input({ type: 'text', name: 'description', maxlength: 500, autocomplete: 'off' })
  const everything = h('input', { type: 'checkbox', name: 'all', checked: true, id: 'events-all' })
  const boxes = EVENT_TYPES.map((type) => h('input', { type: 'checkbox', name: 'event_types', value: type, id: `event-${type}` }))
  const choose = h('fieldset', { class: 'event-types', hidden: true }, h('legend', null, 'Event types'), h('div', { class: 'checks' }, boxes.map((box) => h('div', { class: 'field checkbox' }, box, h('label', { for: box.id }, box.value)))))
  everything.addEventListener('change', () => (choose.hidden = everything.checked))
  const created = h('div', null)
  const form = actionForm({
    label: 'Add endpoint',
    fields: [field('Endpoint URL', url), field('Description (optional)', description), h('div', { class: 'field checkbox' }, everything, h('label', { for: everything.id }, 'Every event type')), choose],
    confirm: () => {
      if (!url.value.trim()) return 'Enter the URL to deliver to.'
      const types = everything.checked ? EVENT_TYPES : boxes.filter((box) => box.checked).map((box) => box.value)
      if (types.length === 0) return 'Choose at least one event type.'
      return { title: 'Add this webhook endpoint?', body: [h('p', null, `Events (${everything.checked ? 'all types' : types.join(', ')}) will be POSTed to ${url.value.trim()}, signed with a new secret.`)], confirmLabel: 'Add endpoint' }
    },
    run: async () => {
      const types = everything.checked ? EVENT_TYPES : boxes.filter((box) => box.checked).map((box) => box.value)
      const endpoint = await api.createWebhook({ url: url.value.trim(), event_types: types, ...(description.value.trim() ? { description: description.value.trim() } : {}) })
      replaceChildren(created, secretBox(endpoint.secret ?? '', 'The endpoint was added. Its signing secret:'), h('p', null, h('a', { href: paths.webhook(endpoint.id) }, `Open ${endpoint.url}`)))
      url.value = ''
      description.value = ''
      return 'Endpoint added. Copy its signing secret now: it is not shown again.'
    },
    done: () => created.querySelector<HTMLElement>('a')?.focus(),
  })

  replaceChildren(
    app.main,
    pageHeader('Webhooks', h('p', { class: 'subtitle' }, 'Endpoints that receive the store’s events, signed (Standard Webhooks).')),
    section(
      `Endpoints (${endpoints.length})`,
      endpoints.length === 0
        ? h('p', null, 'No endpoints yet.')
        : table(
            'Webhook endpoints',
            ['Endpoint', 'Health', 'Event types'],
            endpoints.map((endpoint, index) => [
              h('span', { class: 'who' }, h('a', { href: paths.webhook(endpoint.id) }, endpoint.url), endpoint.description ? h('span', null, endpoint.description) : null),
              h('span', null, ...healthText(endpoint, healths[index]!)),
              endpoint.event_types.length === EVENT_TYPES.length ? 'All' : endpoint.event_types.join(', '),
            ]),
            { captionHidden: true },
          ),
    ),
    section('Add an endpoint', form, created),
  )
  app.refocusHeading()
}

export async function renderWebhook(app: ConsoleApp, isCurrent: () => boolean, id: string, { focus = true }: { focus?: boolean } = {}): Promise<void> {
  const back = h('p', null, h('a', { href: paths.webhooks, class: 'back' }, '← Webhooks'))
  if (focus) {
    replaceChildren(app.main, back, pageHeader('Webhook endpoint'), loading())
    app.finishRender('Webhook endpoint')
  }
  const params = new URLSearchParams(location.search)
  const statusFilter = params.get('status') ?? ''
  let endpoint: WebhookEndpoint
  let deliveries: Delivery[]
  let hl: Health
  let next: string | null
  try {
    const cursor = params.get('cursor')
    ;[endpoint, { data: deliveries, next_cursor: next }] = await Promise.all([api.webhook(id), api.deliveries(id, { status: statusFilter || undefined, cursor, limit: 20 })])
    hl = await health(endpoint)
  } catch (error) {
    if (!isCurrent()) return
    replaceChildren(app.main, back, pageHeader('Webhook endpoint'), errorBox(error))
    return
  }
  if (!isCurrent()) return
  const reload = () =>
    renderWebhook(app, isCurrent, id, { focus: false }).then(() => {
      if (!isCurrent()) return
      app.focusHeading()
      app.announce(app.takeFlash() ?? 'Updated.')
    })
  const shown = h('div', null)

  const ping = actionForm({
    label: 'Send a test ping',
    confirm: () => ({ title: 'Send a test event?', body: [h('p', null, `A webhook.test event is POSTed to ${endpoint.url}.`)], confirmLabel: 'Send ping' }),
    run: async () => {
      await api.ping(endpoint.id)
      return 'A webhook.test event is on its way; it shows in the deliveries below.'
    },
    done: reload,
  })
  const rotate = actionForm({
    label: 'Rotate the secret',
    danger: true,
    confirm: () => ({ title: 'Rotate the signing secret?', body: [h('p', null, 'A new secret signs every delivery from now on; the old one keeps signing beside it for 24 hours so the receiver can switch over.')], confirmLabel: 'Rotate secret', danger: true }),
    run: async () => {
      const answer = await api.rotate(endpoint.id)
      replaceChildren(shown, secretBox(answer.secret, 'The new signing secret:'))
      return 'Secret rotated. Copy the new secret now: it is not shown again.'
    },
    done: () => shown.querySelector<HTMLElement>('.secret')?.setAttribute('tabindex', '-1'),
  })
  const enable = actionForm({
    label: endpoint.status === 'enabled' ? 'Disable endpoint' : 'Enable endpoint',
    danger: endpoint.status === 'enabled',
    confirm: () => ({
      title: endpoint.status === 'enabled' ? 'Disable this endpoint?' : 'Enable this endpoint?',
      body: [h('p', null, endpoint.status === 'enabled' ? 'Nothing is delivered to it until it is enabled again.' : 'Deliveries to it start again.')],
      confirmLabel: endpoint.status === 'enabled' ? 'Disable' : 'Enable',
    }),
    run: async () => {
      const answer = await api.updateWebhook(endpoint.id, { status: endpoint.status === 'enabled' ? 'disabled' : 'enabled' })
      return `The endpoint is ${answer.status}.`
    },
    done: reload,
  })
  const since = input({ type: 'datetime-local', name: 'since', value: isoToStoreInput(new Date(Date.now() - 24 * 3_600_000).toISOString()) })
  const replay = actionForm({
    label: 'Replay failures',
    fields: [field(`Failed since (${currentTimeZone()})`, since, { hint: 'Every failed delivery created since then is sent again.' })],
    confirm: () => {
      const at = storeTimeToIso(since.value)
      if (!at) return 'Enter the date and time to replay failures from.'
      return { title: 'Replay failed deliveries?', body: [h('p', null, `Every delivery to ${endpoint.url} that failed since ${dateTime(at)} is sent again.`)], confirmLabel: 'Replay' }
    },
    run: async () => {
      const answer = await api.replay(endpoint.id, storeTimeToIso(since.value)!)
      const count = Number(answer.redelivered ?? 0)
      return count === 0 ? 'No failed deliveries since then: nothing was sent.' : `${count} failed deliver${count === 1 ? 'y is' : 'ies are'} being sent again.`
    },
    done: reload,
  })

  const statusSelect = select('status', [['', 'Any status'], ['failed', 'Failed'], ['pending', 'Pending'], ['succeeded', 'Succeeded']], statusFilter)
  const filter = h('form', { class: 'filters compact-filters', 'aria-label': 'Filter deliveries' }, field('Delivery status', statusSelect), h('div', { class: 'button-row' }, h('button', { type: 'submit', class: 'button secondary' }, 'Show')))
  filter.addEventListener('submit', (event) => {
    event.preventDefault()
    navigate(`${paths.webhook(id)}${statusSelect.value ? `?status=${statusSelect.value}` : ''}`)
  })

  replaceChildren(
    app.main,
    back,
    pageHeader(endpoint.url, h('p', { class: 'subtitle' }, endpoint.description ?? '', ' ', h('code', null, endpoint.id))),
    h(
      'div',
      { class: 'detail-grid' },
      section(
        'Health',
        definitionList([
          ['Status', h('span', null, ...healthText(endpoint, hl))],
          ['Event types', endpoint.event_types.length === EVENT_TYPES.length ? 'All' : endpoint.event_types.join(', ')],
          ['Added', dateTime(endpoint.created_at)],
        ]),
      ),
      section('Actions', h('div', { class: 'action-group' }, h('h3', null, 'Test'), ping), h('div', { class: 'action-group' }, h('h3', null, 'Replay'), replay), h('div', { class: 'action-group' }, h('h3', null, 'Signing secret'), rotate, shown), h('div', { class: 'action-group' }, h('h3', null, 'Status'), enable)),
    ),
    section(
      'Recent deliveries',
      filter,
      deliveries.length === 0
        ? h('p', null, statusFilter ? 'No deliveries with this status.' : 'No deliveries yet.')
        : table(
            'Deliveries, newest first',
            ['Event', 'Status', 'Response', 'Attempts', 'Created', 'Redeliver'],
            deliveries.map((d) => [
              h('span', { class: 'who' }, d.event_type, h('code', null, d.event_id)),
              badge(d.status, DELIVERY_TONE[d.status] ?? 'neutral'),
              d.last_status_code ? `HTTP ${d.last_status_code}` : d.last_error ?? '—',
              `${d.attempts}${d.next_attempt_at && d.status === 'pending' ? `, next ${dateTime(d.next_attempt_at)}` : ''}`,
              dateTime(d.created_at),
              actionForm({
                label: 'Redeliver',
                className: 'compact',
                confirm: () => ({ title: 'Send this event again?', body: [h('p', null, `${d.event_type} (${d.event_id}) is POSTed to ${endpoint.url} again.`)], confirmLabel: 'Redeliver' }),
                run: async () => {
                  await api.redeliver(endpoint.id, d.event_id)
                  return `${d.event_type} is being sent again.`
                },
                done: reload,
              }),
            ]),
            { captionHidden: true },
          ),
      h('nav', { class: 'pager', 'aria-label': 'Pages' }, next ? h('a', { class: 'button secondary', href: `${paths.webhook(id)}?${new URLSearchParams({ ...(statusFilter ? { status: statusFilter } : {}), cursor: next })}` }, 'Older deliveries') : null),
    ),
  )
  if (focus) app.refocusHeading()
}

export { errorText }
