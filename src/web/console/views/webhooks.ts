import { api, errorText } from '../api.ts'
import type { ConsoleApp } from '../app.ts'
import { h, replaceChildren, type Child } from '../../shared/dom.ts'
import { currentTimeZone, dateTime, fromNow, isoToStoreInput, number, percent, storeNowMs, storeTimeToIso } from '../format.ts'
import { navigate, paths } from '../router.ts'
import type { Delivery, DeliveryDetail, WebhookEndpoint, WebhookHealth } from '../types.ts'
import { actionForm, badge, definitionList, errorBox, field, input, loading, pageHeader, section, select, table } from '../ui.ts'

/** The event catalogue (docs/contract.md, Events); an endpoint subscribes to some or all. */
export const EVENT_TYPES = [
  'subscription.created', 'subscription.activated', 'subscription.charged', 'subscription.past_due', 'subscription.paused',
  'subscription.resumed', 'subscription.cancelled', 'subscription.updated', 'subscription.renewal_upcoming', 'subscription.skipped',
  'subscription.unskipped', 'subscription.swapped', 'subscription.expired', 'subscription.payment_instrument_updated', 'subscription.gifted',
  'prepaid.order_created', 'shipping.address_updated', 'charge.succeeded', 'charge.failed', 'charge.refunded',
  'change_request.created', 'change_request.approved', 'change_request.rejected', 'store.updated',
]

const DELIVERY_TONE: Record<string, string> = { succeeded: 'good', pending: 'info', failed: 'bad' }

const plural = (count: number, one: string, many: string) => `${number(count)} ${count === 1 ? one : many}`

/** "HTTP 500", or what went wrong when nothing answered. */
function answerText(statusCode: number | null, error: string | null): string {
  return statusCode !== null ? `HTTP ${statusCode}` : (error ?? 'no answer')
}

/**
 * The service's figures for an endpoint (GET .../health): its attempts of the last 24 hours, counted
 * where they are recorded. (This used to be worked out from the latest deliveries that had settled, so
 * an endpoint whose deliveries were all still being retried read "No deliveries yet".)
 */
function healthLines(endpoint: WebhookEndpoint, hl: WebhookHealth | null): Child[] {
  const badges: Child[] = [endpoint.status === 'enabled' ? badge('Enabled', 'good') : badge('Disabled', 'bad')]
  if (!hl) return [h('span', null, ...badges, ' Health unavailable')]
  if (hl.failing && endpoint.status === 'enabled') badges.push(' ', badge('Failing', 'bad'))
  const lines: Child[] = [
    h('span', null, ...badges),
    h(
      'span',
      null,
      hl.attempts === 0
        ? 'No attempts in the last 24 h'
        : `${percent(hl.success_rate)} delivered: ${number(hl.succeeded)} of ${plural(hl.attempts, 'attempt', 'attempts')} in the last 24 h`,
    ),
  ]
  const failing = [
    hl.failing && hl.failures_since_success > 0 ? `The last ${plural(hl.failures_since_success, 'attempt', 'attempts')} failed` : '',
    hl.next_retry_at ? `next retry ${fromNow(hl.next_retry_at, storeNowMs())}` : '',
  ].filter(Boolean).join('; ')
  if (failing) lines.push(h('span', null, `${failing.charAt(0).toUpperCase()}${failing.slice(1)}.`))
  if (endpoint.disabled_reason) lines.push(h('span', null, `Disabled: ${endpoint.disabled_reason}.`))
  return lines
}

/** The health panel of one endpoint: each figure on its own line. */
function healthFacts(endpoint: WebhookEndpoint, hl: WebhookHealth): [string, Child][] {
  const facts: [string, Child][] = [
    ['Status', endpoint.status === 'enabled' ? badge('Enabled', 'good') : h('span', null, badge('Disabled', 'bad'), ` ${endpoint.disabled_reason ?? ''}`)],
    [
      'Last 24 hours',
      hl.attempts === 0
        ? 'No attempts'
        : h('span', { 'data-figure': 'success-rate' }, `${percent(hl.success_rate)} delivered: ${number(hl.succeeded)} of ${plural(hl.attempts, 'attempt', 'attempts')} succeeded, ${number(hl.failed)} failed`),
    ],
    [
      'Failing now',
      hl.failing
        ? h(
            'span',
            { class: 'issue', 'data-figure': 'failing' },
            hl.failures_since_success > 0 ? `Yes: the last ${plural(hl.failures_since_success, 'attempt', 'attempts')} failed` : 'Yes: no attempt has succeeded since it started failing',
          )
        : 'No',
    ],
    ['Last failure', hl.last_failure ? `${dateTime(hl.last_failure.attempted_at)}: ${answerText(hl.last_failure.status_code, hl.last_failure.error)}` : 'None in the last 24 hours'],
    ['Last success', hl.last_success_at ? dateTime(hl.last_success_at) : 'None in the last 24 hours'],
    ['Waiting', hl.pending === 0 ? 'Nothing' : `${plural(hl.pending, 'delivery', 'deliveries')}${hl.next_retry_at ? `; next retry ${fromNow(hl.next_retry_at, storeNowMs())} (real time)` : ''}`],
  ]
  return facts
}

function secretBox(secret: string, what: string): HTMLElement {
  return h('div', { class: 'secret-box', role: 'status' }, h('p', null, h('strong', null, `${what} It is shown only this once: copy it now.`)), h('code', { class: 'secret' }, secret))
}

export async function renderWebhooks(app: ConsoleApp, isCurrent: () => boolean): Promise<void> {
  replaceChildren(app.main, pageHeader('Webhooks'), loading())
  app.finishRender('Webhooks')
  let endpoints: WebhookEndpoint[]
  let healths: (WebhookHealth | null)[]
  try {
    endpoints = (await api.webhooks()).data
    healths = await Promise.all(endpoints.map((endpoint) => api.webhookHealth(endpoint.id).catch(() => null)))
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
        : h('div', { class: 'endpoints' }, table(
            'Webhook endpoints',
            ['Endpoint', 'Health', 'Event types'],
            endpoints.map((endpoint, index) => [
              h('span', { class: 'who' }, h('a', { href: paths.webhook(endpoint.id) }, endpoint.url), endpoint.description ? h('span', null, endpoint.description) : null),
              h('span', { class: 'health-lines', 'data-health': endpoint.id }, ...healthLines(endpoint, healths[index] ?? null)),
              endpoint.event_types.length === EVENT_TYPES.length ? 'All event types' : endpoint.event_types.join(', '),
            ]),
            { captionHidden: true },
          )),
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
  const inspected = params.get('delivery')
  let endpoint: WebhookEndpoint
  let deliveries: Delivery[]
  let hl: WebhookHealth
  let next: string | null
  let detail: DeliveryDetail | null = null
  try {
    const cursor = params.get('cursor')
    ;[endpoint, { data: deliveries, next_cursor: next }, hl, detail] = await Promise.all([
      api.webhook(id),
      api.deliveries(id, { status: statusFilter || undefined, cursor, limit: 20 }),
      api.webhookHealth(id),
      inspected ? api.delivery(id, inspected) : Promise.resolve(null),
    ])
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

  /** The link that opens a delivery in the inspector (the filter and page are kept). */
  const viewHref = (deliveryId: string) => {
    const search = new URLSearchParams(params)
    search.set('delivery', deliveryId)
    return `${paths.webhook(id)}?${search}`
  }

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
          ...healthFacts(endpoint, hl),
          ['Event types', endpoint.event_types.length === EVENT_TYPES.length ? 'All' : endpoint.event_types.join(', ')],
          ['Added', dateTime(endpoint.created_at)],
        ]),
      ),
      section('Actions', h('div', { class: 'action-group' }, h('h3', null, 'Test'), ping), h('div', { class: 'action-group' }, h('h3', null, 'Replay'), replay), h('div', { class: 'action-group' }, h('h3', null, 'Signing secret'), rotate, shown), h('div', { class: 'action-group' }, h('h3', null, 'Status'), enable)),
    ),
    detail ? inspector(endpoint, detail, `${paths.webhook(id)}${(() => {
      const search = new URLSearchParams(params)
      search.delete('delivery')
      return search.size ? `?${search}` : ''
    })()}`) : null,
    section(
      'Recent deliveries',
      filter,
      deliveries.length === 0
        ? h('p', null, statusFilter ? 'No deliveries with this status.' : 'No deliveries yet.')
        : h('div', { class: 'deliveries' }, table(
            'Deliveries, newest first',
            ['Event', 'Status and answer', 'Attempts', 'Created', 'Actions'],
            deliveries.map((d) => [
              h('span', { class: 'who' }, d.event_type, h('code', null, d.event_id)),
              h('span', { class: 'who' }, h('span', null, badge(d.status, DELIVERY_TONE[d.status] ?? 'neutral')), d.last_status_code ? `HTTP ${d.last_status_code}` : d.last_error ?? '—'),
              `${d.attempts}${d.next_attempt_at && d.status === 'pending' ? `, next ${fromNow(d.next_attempt_at, storeNowMs())}` : ''}`,
              dateTime(d.created_at),
              h(
                'div',
                { class: 'inline-actions delivery-actions' },
                h('a', { class: 'button secondary compact-link', href: viewHref(d.id), 'aria-label': `View ${d.event_type} delivery ${d.id}`, 'aria-current': d.id === inspected ? 'true' : null }, 'View'),
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
              ),
            ]),
            { captionHidden: true },
          )),
      h('nav', { class: 'pager', 'aria-label': 'Pages' }, next ? h('a', { class: 'button secondary', href: `${paths.webhook(id)}?${new URLSearchParams({ ...(statusFilter ? { status: statusFilter } : {}), cursor: next })}` }, 'Older deliveries') : null),
    ),
  )
  if (focus) {
    // Opened from "View": the inspector takes the focus, so it is read out and the keyboard starts there.
    const opened = app.main.querySelector<HTMLElement>('#delivery-inspector h2')
    if (opened) {
      opened.setAttribute('tabindex', '-1')
      opened.focus()
    } else app.refocusHeading()
  }
}

/**
 * The delivery inspector: what was sent (the body once, as stored; each attempt's headers as sent,
 * the signature included, never the secret) and what came back (status and the first KiB).
 */
function inspector(endpoint: WebhookEndpoint, d: DeliveryDetail, closeHref: string): HTMLElement {
  const headerBlock = (headers: Record<string, string>) => h('pre', { class: 'wire' }, Object.entries(headers).map(([name, value]) => `${name}: ${value}`).join('\n'))
  const attempts = d.attempt_log.map((attempt, index) =>
    h(
      'details',
      { class: 'attempt', open: index === 0, 'data-attempt': index },
      h(
        'summary',
        null,
        `${dateTime(attempt.attempted_at)}: `,
        badge(answerText(attempt.status_code, attempt.error), attempt.status_code !== null && attempt.status_code >= 200 && attempt.status_code < 300 ? 'good' : 'bad'),
        ` in ${number(attempt.latency_ms)} ms`,
      ),
      h('h4', null, 'Request headers'),
      attempt.request_headers ? headerBlock(attempt.request_headers) : h('p', { class: 'hint' }, attempt.error === 'the endpoint is disabled' ? 'Nothing was sent: the endpoint was disabled.' : 'Not recorded: this attempt was made before the service kept its headers.'),
      h('h4', null, 'Response'),
      h('p', null, attempt.status_code !== null ? `Status ${attempt.status_code}` : `No answer: ${attempt.error ?? 'the request failed'}`),
      attempt.response_body !== null
        ? [h('p', { class: 'hint' }, 'Body: the first KiB, as received (bytes that are not text are escaped)'), h('pre', { class: 'wire', 'data-response-body': '' }, attempt.response_body)]
        : attempt.status_code !== null ? h('p', { class: 'hint' }, 'The body was empty.') : null,
    ),
  )
  return h(
    'section',
    { class: 'panel inspector', id: 'delivery-inspector', 'aria-label': 'Delivery inspector', 'data-delivery': d.id },
    h('h2', null, `Delivery of ${d.event_type}`),
    h('p', { class: 'subtitle' }, h('code', null, d.id), ' ', badge(d.status, DELIVERY_TONE[d.status] ?? 'neutral'), ` ${plural(d.attempts, 'attempt', 'attempts')}`, d.next_attempt_at ? `; next ${fromNow(d.next_attempt_at, storeNowMs())} (real time)` : ''),
    h('p', null, h('a', { href: closeHref }, 'Close the inspector')),
    h('h3', null, 'Request'),
    h('p', null, h('code', null, `POST ${endpoint.url}`)),
    h('p', { class: 'hint' }, 'Body, exactly as sent (every attempt sends the same bytes; the signature covers them):'),
    h('pre', { class: 'wire', 'data-request-body': '' }, d.request_body),
    h('h3', null, d.attempt_log.length === 1 ? 'Attempt' : `Attempts, newest first (${d.attempt_log.length})`),
    d.attempt_log.length === 0 ? h('p', null, 'Not sent yet.') : attempts,
  )
}

export { errorText }
