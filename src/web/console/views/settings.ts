import { all, api, errorText } from '../api.ts'
import type { ConsoleApp } from '../app.ts'
import { h, replaceChildren, uid } from '../../shared/dom.ts'
import { dateTime, minorDigits, toMinor } from '../format.ts'
import { signedInVia } from '../session.ts'
import type { ApiKey, Discount, Notification, NotificationTemplate, PlatformConnection, RetentionOffer, Store } from '../types.ts'
import { actionForm, badge, definitionList, errorBox, field, input, loading, pageHeader, section, select, table } from '../ui.ts'

const TEMPLATES: [NotificationTemplate, string, string][] = [
  ['subscription_created', 'Subscription started', 'When a checkout starts a subscription.'],
  ['renewal_upcoming', 'Renewal reminder', 'The reminder days before a renewal, with links to skip or manage.'],
  ['payment_failed', 'Payment failed', 'With each failed charge: a link to change the payment method.'],
  ['past_due', 'Past due', 'When dunning gave up.'],
  ['cancelled', 'Cancelled', 'When a subscription is cancelled.'],
  ['payment_instrument_expiring', 'Card expiring', 'When the card on file expires before the next renewal.'],
  ['renewal_skipped', 'Renewal skipped (out of stock)', 'When a renewal is skipped because an item is out of stock.'],
  ['price_change_notice', 'Price change notice', "When a plan's new price is scheduled on a subscription: the old and new price and the date."],
]
// The log names every email; the update-card link has no switch (an admin sends it: Payment recovery).
const TEMPLATE_LABEL: Record<string, string> = { ...Object.fromEntries(TEMPLATES.map(([code, label]) => [code, label])), payment_update_link: 'Update-card link (sent by an admin)' }
const NOTIFICATION_TONE: Record<string, string> = { sent: 'good', pending: 'info', failed: 'bad' }

/** A new admin key, shown once on the page after it is created, then forgotten. */
let createdKey: { name: string; key: string } | null = null

/** Store settings (PATCH /admin/store), the platform connection, and where admin keys come from. */
export async function renderSettings(app: ConsoleApp, isCurrent: () => boolean, { focus = true }: { focus?: boolean } = {}): Promise<void> {
  if (focus) {
    replaceChildren(app.main, pageHeader('Settings'), loading())
    app.finishRender('Settings')
  }
  let store: Store, connection: PlatformConnection | null, keys: ApiKey[], discounts: Discount[]
  try {
    ;[store, connection, keys, discounts] = await Promise.all([
      api.store(),
      api.platformConnection().catch(() => null),
      api.apiKeys().then((list) => list.data),
      all((cursor) => api.discounts({ active: true, cursor })).catch(() => []),
    ])
  } catch (error) {
    if (!isCurrent()) return
    replaceChildren(app.main, pageHeader('Settings'), errorBox(error))
    return
  }
  if (!isCurrent()) return
  const reload = () =>
    renderSettings(app, isCurrent, { focus: false }).then(() => {
      if (!isCurrent()) return
      app.focusHeading()
      app.announce(app.takeFlash() ?? 'Updated.')
    })

  const name = input({ type: 'text', name: 'name', value: store.name, maxlength: 200, autocomplete: 'organization' })
  const timezone = timeZoneSelect(store.timezone)
  const dunning = listEditor({
    legend: 'Dunning retries',
    hint: 'Days after the first failed charge on which the payment is tried again, in order: from 1 to 60, at most 10 retries.',
    addLabel: 'Add a retry',
    noun: 'retry',
    max: 10,
    min: 1,
    items: store.dunning_retry_days,
    row: (days, n) => {
      const box = input({ type: 'number', name: 'dunning_retry_day', value: days ?? '', min: 1, max: 60, step: 1, inputmode: 'numeric', 'aria-label': `Retry ${n}: days after the first failure`, class: 'days' })
      // "1 day", "3 days" after the first failure (the legend and hint say after what).
      const unit = h('span', { class: 'unit', 'aria-hidden': 'true' }, days === 1 ? 'day' : 'days')
      box.addEventListener('input', () => (unit.textContent = box.value.trim() === '1' ? 'day' : 'days'))
      return { controls: [box, unit], value: () => (box.value.trim() === '' ? Number.NaN : Number(box.value)) }
    },
  })
  const reminder = input({ type: 'number', name: 'renewal_reminder_days', value: store.renewal_reminder_days, min: 0, step: 1 })
  const pastDue = input({ type: 'number', name: 'past_due_cancel_days', value: store.past_due_cancel_days, min: 1, step: 1 })
  const priceNotice = input({ type: 'number', name: 'price_change_notice_days', value: store.price_change_notice_days, min: 0, max: 365, step: 1 })
  const storeForm = actionForm({
    label: 'Save settings',
    fields: [
      field('Store name', name),
      field('Time zone', timezone, { hint: 'Renewal dates, emails, the portal and this console follow it.' }),
      dunning.element,
      field('Renewal reminder (days before)', reminder, { hint: '0: no reminder.' }),
      field('Cancel past due subscriptions after (days)', pastDue),
      field('Price change notice (days)', priceNotice, { hint: 'The least notice subscribers get before a new price reaches their renewals.' }),
    ],
    confirm: () => {
      const days = dunning.values()
      if (days.length === 0) return 'Keep at least one dunning retry.'
      if (days.some((d) => !Number.isInteger(d) || d < 1 || d > 60)) return 'Each dunning retry is a whole number of days from 1 to 60.'
      if (days.some((d, i) => i > 0 && d <= days[i - 1]!)) return 'List the dunning retries in order, each later than the one before.'
      return {
        title: 'Save the store settings?',
        body: [h('p', null, `Time zone ${timezone.value}; retries ${days.join(', ')} days after the first failure. They apply from the next renewal, retry and reminder.`)],
        confirmLabel: 'Save',
      }
    },
    run: async () => {
      const updated = await api.updateStore({
        name: name.value.trim(),
        timezone: timezone.value.trim(),
        dunning_retry_days: dunning.values(),
        renewal_reminder_days: Number(reminder.value),
        past_due_cancel_days: Number(pastDue.value),
        price_change_notice_days: Number(priceNotice.value),
      })
      app.useStore(updated)
      return 'Settings saved.'
    },
    done: reload,
  })

  const renewalsForm = renewalSettingsForm(app, store, reload)

  const token = input({ type: 'password', name: 'access_token', autocomplete: 'off' })
  const connectionForm = connection?.connected
    ? actionForm({
        label: 'Disconnect',
        danger: true,
        confirm: () => ({ title: 'Disconnect from BigCommerce?', body: [h('p', null, 'The token is deleted and billing stops for this store, as after an app uninstall.')], confirmLabel: 'Disconnect', danger: true }),
        run: async () => {
          await api.disconnectPlatform()
          return 'Disconnected: billing is stopped.'
        },
        done: reload,
      })
    : actionForm({
        label: 'Connect',
        fields: [field('Store-level API account token', token, { hint: 'Sent once to the service, stored encrypted, never shown again.' })],
        confirm: () => (token.value.trim() ? { title: 'Connect to BigCommerce?', body: [h('p', null, 'The service keeps the token encrypted and uses it for orders and payments.')], confirmLabel: 'Connect' } : 'Paste the access token.'),
        run: async () => {
          await api.connectPlatform(token.value.trim())
          token.value = ''
          return 'Connected to BigCommerce.'
        },
        done: reload,
      })

  replaceChildren(
    app.main,
    pageHeader('Settings', h('p', { class: 'subtitle' }, `${store.store_hash} · ${store.mode === 'test' ? 'test mode' : 'live'} · currency ${store.currency} · gateway ${store.gateway}`)),
    h(
      'div',
      { class: 'detail-grid' },
      h('div', null, section('Billing', billingForm(app, store, reload)), section('Store', storeForm), section('Renewals: shipping, stock and tax', renewalsForm)),
      h(
        'div',
        null,
        section(
          'Platform connection',
          definitionList([
            ['Connected', connection ? (connection.connected ? 'Yes' : 'No') : 'Unknown'],
            ['Through', connection?.source ?? '—'],
            ['Since', dateTime(connection?.connected_at)],
            ['Billing', store.billing_stopped_at ? `Stopped ${dateTime(store.billing_stopped_at)}` : store.billing_enabled === false ? 'Switched off (see Billing)' : 'Running'],
          ]),
          connectionForm,
        ),
        section('Notifications', notificationsForm(app, store, reload)),
      ),
    ),
    // Full width: six columns (name to actions) do not fit beside the store's form (they were cut off at 1440 px).
    keysSection(app, keys, reload),
  )
  // Below the grid: the longer forms and the notifications log (filled in after the page shows).
  const log = h('div', { class: 'notification-log' }, loading('Loading the notifications…'))
  app.main.append(
    h('div', { class: 'detail-grid' }, section('Cancellation reasons', reasonsForm(app, store, reload)), h('div', null, section('Retention offers', offersForm(app, store, discounts, reload)), section('Subscriber portal', portalForm(app, store, reload)))),
    section('Notifications sent', log),
  )
  void renderNotificationLog(log, isCurrent)
  if (focus) app.refocusHeading()
}

function notificationsForm(app: ConsoleApp, store: Store, reload: () => Promise<unknown>): HTMLElement {
  const boxes = TEMPLATES.map(([code, label, hint]) => {
    const box = h('input', { type: 'checkbox', name: code, id: `notify-${code}`, checked: store.notifications?.[code] !== false, 'aria-describedby': `notify-${code}-hint` })
    return { code, box, row: h('div', { class: 'field checkbox' }, box, h('label', { for: box.id }, label), h('p', { class: 'hint', id: `notify-${code}-hint` }, hint)) }
  })
  return actionForm({
    label: 'Save notifications',
    fields: [h('fieldset', { class: 'switches' }, h('legend', null, 'Emails to subscribers'), boxes.map((b) => b.row))],
    confirm: () => {
      const off = boxes.filter((b) => !b.box.checked).map((b) => TEMPLATE_LABEL[b.code])
      return { title: 'Save the subscriber emails?', body: [h('p', null, off.length ? `Not sent from now on: ${off.join(', ')}.` : 'Every email is sent.')], confirmLabel: 'Save' }
    },
    run: async () => {
      const updated = await api.updateStore({ notifications: Object.fromEntries(boxes.map((b) => [b.code, b.box.checked])) as Store['notifications'] })
      app.useStore(updated)
      return 'Notification settings saved.'
    },
    done: reload,
  })
}

/** A code from a reason's words, for a new row left without one: "It costs too much" is it_costs_too_much. */
function codeFrom(label: string): string {
  return label.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 64)
}

function reasonsForm(app: ConsoleApp, store: Store, reload: () => Promise<unknown>): HTMLElement {
  const list = listEditor<{ code: string; label: string }>({
    legend: 'Reasons, in the order shown',
    hint: 'What the subscriber reads, and its code (lower-case letters, digits, _ and -; made from the words when left empty). At most 20; none: only free text.',
    addLabel: 'Add a reason',
    noun: 'reason',
    max: 20,
    min: 0,
    items: store.cancellation_reasons ?? [],
    row: (reason, n) => {
      const label = input({ type: 'text', name: 'reason_label', value: reason?.label ?? '', maxlength: 200, autocomplete: 'off', 'aria-label': `Reason ${n}: what the subscriber reads`, placeholder: 'It costs too much', class: 'label' })
      const code = input({ type: 'text', name: 'reason_code', value: reason?.code ?? '', maxlength: 64, autocomplete: 'off', spellcheck: 'false', 'aria-label': `Reason ${n}: code`, placeholder: 'too_expensive', class: 'code' })
      return { controls: [label, code], value: () => ({ code: code.value.trim() || codeFrom(label.value), label: label.value.trim() }) }
    },
  })
  const reasons = () => list.values().filter((r) => r.label || r.code)
  return actionForm({
    label: 'Save reasons',
    fields: [list.element],
    confirm: () => {
      const chosen = reasons()
      const empty = chosen.findIndex((r) => !r.label)
      if (empty >= 0) return `Reason ${empty + 1}: write what the subscriber reads.`
      const bad = chosen.findIndex((r) => !/^[a-z0-9][a-z0-9_-]{0,63}$/.test(r.code))
      if (bad >= 0) return `Reason ${bad + 1}: the code is lower-case letters, digits, _ and -, starting with a letter or digit.`
      const repeated = chosen.findIndex((r, i) => chosen.findIndex((other) => other.code === r.code) < i)
      if (repeated >= 0) return `Reason ${repeated + 1}: the code ${chosen[repeated]!.code} is already used above.`
      return { title: 'Save the cancellation reasons?', body: [h('p', null, chosen.length ? `${chosen.length} reasons, in this order: ${chosen.map((r) => r.label).join('; ')}.` : 'No reasons: subscribers and staff give theirs in words.')], confirmLabel: 'Save' }
    },
    run: async () => {
      const updated = await api.updateStore({ cancellation_reasons: reasons() })
      app.useStore(updated)
      return 'Cancellation reasons saved.'
    },
    done: reload,
  })
}

function offersForm(app: ConsoleApp, store: Store, discounts: Discount[], reload: () => Promise<unknown>): HTMLElement {
  const offers = store.retention_offers ?? []
  const pause = offers.find((o): o is Extract<RetentionOffer, { type: 'pause' }> => o.type === 'pause')
  const discount = offers.find((o): o is Extract<RetentionOffer, { type: 'discount' }> => o.type === 'discount')
  const pauseDays = input({ type: 'number', name: 'pause_days', min: 1, max: 365, step: 1, value: pause?.days ?? '', inputmode: 'numeric' })
  const skip = h('input', { type: 'checkbox', name: 'offer_skip', id: 'offer-skip', checked: offers.some((o) => o.type === 'skip') })
  const codes = new Set(discounts.map((d) => d.code))
  if (discount) codes.add(discount.code)
  const code = select('offer_discount', [['', 'No discount offer'], ...[...codes].map((c) => [c, c] as [string, string])], discount?.code ?? '')
  const chosen = (): RetentionOffer[] => [
    ...(pauseDays.value ? [{ type: 'pause' as const, days: Number(pauseDays.value) }] : []),
    ...(skip.checked ? [{ type: 'skip' as const }] : []),
    ...(code.value ? [{ type: 'discount' as const, code: code.value }] : []),
  ]
  return actionForm({
    label: 'Save offers',
    fields: [
      h('p', { class: 'hint' }, 'Shown in the portal before a cancellation is confirmed, in this order.'),
      field('Offer a pause of (days)', pauseDays, { hint: 'Empty: no pause offer. 1 to 365.' }),
      h('div', { class: 'field checkbox' }, skip, h('label', { for: 'offer-skip' }, 'Offer to skip the next renewal')),
      field('Offer a discount code', code, { hint: 'One of the active codes (Discounts).' }),
    ],
    confirm: () => {
      const days = Number(pauseDays.value)
      if (pauseDays.value && !(Number.isInteger(days) && days >= 1 && days <= 365)) return 'The pause is a whole number of days from 1 to 365, or empty.'
      const list = chosen()
      const words = list.map((o) => (o.type === 'pause' ? `a ${o.days}-day pause` : o.type === 'skip' ? 'skipping the next renewal' : `the code ${o.code}`))
      return { title: 'Save the retention offers?', body: [h('p', null, words.length ? `Offered before cancelling: ${words.join(', ')}.` : 'No offers: cancelling goes straight to the confirmation.')], confirmLabel: 'Save' }
    },
    run: async () => {
      const updated = await api.updateStore({ retention_offers: chosen() })
      app.useStore(updated)
      return 'Retention offers saved.'
    },
    done: reload,
  })
}

/** One store switch: a checkbox (id from its name) with its label and hint, in a fieldset under `legend`. */
function switchFieldset({ name, checked, legend, label, hint }: { name: string; checked: boolean; legend: string; label: string; hint: string }): { box: HTMLInputElement; fieldset: HTMLElement } {
  const id = name.replaceAll('_', '-')
  const box = h('input', { type: 'checkbox', name, id, checked, 'aria-describedby': `${id}-hint` })
  const fieldset = h('fieldset', { class: 'switches' }, h('legend', null, legend), h('div', { class: 'field checkbox' }, box, h('label', { for: id }, label), h('p', { class: 'hint', id: `${id}-hint` }, hint)))
  return { box, fieldset }
}

/**
 * The cutover switch (`billing_enabled`): off while subscriptions are imported and the old system still
 * bills; on once the old system is off. What fell due meanwhile then runs once each, oldest first.
 */
function billingForm(app: ConsoleApp, store: Store, reload: () => Promise<unknown>): HTMLElement {
  const { box, fieldset } = switchFieldset({
    name: 'billing_enabled',
    checked: store.billing_enabled !== false,
    legend: 'Renewals, retries and reminders',
    label: 'Bill this store',
    hint: 'Off: nothing is charged, retried or reminded. Switching from another system: turn this off before importing, switch the old system off, then turn this on; what fell due meanwhile then runs once each, oldest first.',
  })
  return actionForm({
    label: 'Save billing',
    fields: [fieldset],
    confirm: () => {
      if (box.checked === (store.billing_enabled !== false)) return box.checked ? 'Billing is already on.' : 'Billing is already off.'
      return box.checked
        ? {
            title: 'Turn billing on?',
            body: [
              h('p', null, 'Renewals, retries and reminders that fell due while billing was off run now, once each, oldest first; then everything runs on its date.'),
              h('p', null, 'Make sure the old system no longer charges these subscribers, or they pay twice.'),
            ],
            confirmLabel: 'Turn billing on',
          }
        : {
            title: 'Turn billing off?',
            body: [
              h('p', null, 'Nothing is charged, retried or reminded for this store until you turn it on again; order now, retry now and reactivating now are refused. A charge already in progress still finishes.'),
            ],
            confirmLabel: 'Turn billing off',
            danger: true,
          }
    },
    run: async () => {
      const updated = await api.updateStore({ billing_enabled: box.checked })
      app.useStore(updated)
      return updated.billing_enabled ? 'Billing is on: what fell due runs now, once each.' : 'Billing is off: nothing is charged, retried or reminded.'
    },
    done: reload,
  })
}

/** What subscribers may do themselves in the portal beyond the everyday actions: reactivate a cancelled subscription. */
function portalForm(app: ConsoleApp, store: Store, reload: () => Promise<unknown>): HTMLElement {
  const { box, fieldset } = switchFieldset({
    name: 'portal_reactivation',
    checked: store.portal_reactivation === true,
    legend: 'In the portal',
    label: 'Subscribers may reactivate a cancelled subscription',
    hint: 'On its plan and card: charged now, or when the period it paid for ends if that is still to come. Off: only you can reactivate one, from its page here.',
  })
  return actionForm({
    label: 'Save portal settings',
    fields: [fieldset],
    confirm: () => ({
      title: box.checked ? 'Let subscribers reactivate?' : 'Stop subscribers reactivating?',
      body: [h('p', null, box.checked ? 'The portal shows a Reactivate button on cancelled subscriptions.' : 'The portal no longer offers to reactivate; you still can, here.')],
      confirmLabel: 'Save',
    }),
    run: async () => {
      const updated = await api.updateStore({ portal_reactivation: box.checked })
      app.useStore(updated)
      return updated.portal_reactivation ? 'Subscribers may now reactivate in the portal.' : 'Only you can reactivate subscriptions now.'
    },
    done: reload,
  })
}

async function renderNotificationLog(container: HTMLElement, isCurrent: () => boolean, status = ''): Promise<void> {
  const filter = select('notification_status', [['', 'Any status'], ['sent', 'Sent'], ['pending', 'Sending'], ['failed', 'Failed']], status)
  const filterForm = h('form', { class: 'filters', novalidate: true }, field('Status', filter), h('div', { class: 'button-row' }, h('button', { type: 'submit', class: 'button secondary' }, 'Show')))
  filterForm.addEventListener('submit', (event) => {
    event.preventDefault()
    replaceChildren(container, loading('Loading the notifications…'))
    void renderNotificationLog(container, isCurrent, filter.value)
  })
  const tbody = h('tbody')
  const more = h('button', { type: 'button', class: 'button secondary' }, 'Show older')
  const result = h('p', { class: 'hint', role: 'status' })
  let cursor: string | null = null
  let shown = 0
  const addPage = async () => {
    more.disabled = true
    try {
      const page = await api.notifications({ status: status || undefined, cursor, limit: 20 })
      if (!isCurrent()) return
      for (const n of page.data as Notification[]) {
        tbody.append(
          h(
            'tr',
            null,
            h('th', { scope: 'row' }, dateTime(n.sent_at ?? n.created_at)),
            h('td', null, TEMPLATE_LABEL[n.template] ?? n.template),
            h('td', null, n.recipient),
            h('td', null, badge(n.status === 'pending' ? 'Sending' : n.status.charAt(0).toUpperCase() + n.status.slice(1), NOTIFICATION_TONE[n.status] ?? 'neutral')),
            h('td', null, `${n.attempts}${n.error ? `: ${n.error}` : ''}`),
          ),
        )
      }
      shown += page.data.length
      cursor = page.next_cursor
      more.hidden = !cursor
      result.textContent = shown ? `${shown} ${shown === 1 ? 'email' : 'emails'} shown${cursor ? '; older ones below' : ''}.` : 'No emails sent yet.'
    } catch (error) {
      result.textContent = errorText(error)
    } finally {
      more.disabled = false
    }
  }
  more.addEventListener('click', () => void addPage())
  await addPage()
  if (!isCurrent()) return
  replaceChildren(
    container,
    filterForm,
    result,
    shown
      ? h(
          'div',
          { class: 'table-wrap', role: 'region', 'aria-label': 'Notifications sent, newest first', tabindex: 0 },
          h('table', null, h('caption', { class: 'visually-hidden' }, 'Notifications sent, newest first'), h('thead', null, h('tr', null, ['Time', 'Email', 'To', 'Status', 'Attempts'].map((t) => h('th', { scope: 'col' }, t)))), tbody),
        )
      : null,
    more,
  )
}

function keysSection(app: ConsoleApp, keys: ApiKey[], reload: () => Promise<unknown>): HTMLElement {
  const shown = createdKey
  createdKey = null
  const active = keys.filter((k) => !k.revoked_at)
  const rows = keys.map((k) => [
    k.name,
    h('code', null, `${k.prefix}…`),
    dateTime(k.created_at),
    k.last_used_at ? dateTime(k.last_used_at) : 'Never',
    k.revoked_at ? badge(`Revoked ${dateTime(k.revoked_at)}`, 'muted') : k.current ? badge('In use here', 'info') : badge('Active', 'good'),
    k.revoked_at
      ? '—'
      : actionForm({
          label: 'Revoke',
          className: 'compact',
          danger: true,
          confirm: () => {
            if (active.length === 1) return 'This is the store’s last active key: create another one first.'
            return {
              title: `Revoke the key ${k.name}?`,
              body: [h('p', null, 'Anything using it is refused from now on. This cannot be undone.'), k.current ? h('p', null, 'It is the key this console signed in with: you will be signed out.') : null],
              confirmLabel: 'Revoke key',
              danger: true,
            }
          },
          run: async () => {
            await api.revokeApiKey(k.id)
            return `The key ${k.name} is revoked.`
          },
          done: reload,
        }),
  ])
  const name = input({ type: 'text', name: 'key_name', maxlength: 100, autocomplete: 'off' })
  const create = actionForm({
    label: 'Create key',
    fields: [field('Name of the new key', name, { hint: 'What uses it, such as "ERP sync". The key is shown once.' })],
    confirm: () => (name.value.trim() ? { title: 'Create an admin API key?', body: [h('p', null, `${name.value.trim()}: it can read and change everything of this store. It is shown once.`)], confirmLabel: 'Create key' } : 'Name the key.'),
    run: async () => {
      const created = await api.createApiKey(name.value.trim())
      createdKey = { name: created.name, key: created.key }
      return `Key ${created.name} created: copy it now, it is shown once.`
    },
    done: reload,
  })
  return section(
    'Admin API keys',
    signedInVia() === 'platform' ? h('p', { class: 'hint' }, 'Signed in from the BigCommerce control panel (a one-hour session, not a key): keys are created with an admin API key.') : null,
    shown
      ? h('div', { class: 'secret-box', role: 'status' }, h('p', null, h('strong', null, `The new key ${shown.name}. It is shown only this once: copy it now.`)), h('code', { class: 'secret', 'data-new-key': '' }, shown.key))
      : null,
    keys.length ? table('Admin API keys', ['Name', 'Starts with', 'Created', 'Last used', 'Status', 'Actions'], rows, { captionHidden: true }) : h('p', null, 'No keys.'),
    // A session from the control panel ends with the app: it cannot make a key that would not (403).
    signedInVia() === 'platform' ? null : create,
  )
}

const SHIPPING_POLICIES: [Store['renewal_shipping'], string][] = [
  ['checkout_rate', 'The rate the checkout paid'],
  ['requote', 'Quoted again at each renewal'],
  ['flat', 'A flat rate'],
  ['free', 'Free'],
]
const STOCK_POLICIES: [Store['out_of_stock'], string][] = [
  ['skip', 'Skip the renewal and tell the subscriber'],
  ['retry', 'Try again daily, then skip'],
  ['charge_anyway', 'Charge anyway'],
]

/** How renewals ship, what happens when an item is out of stock, and (test mode) the test tax rate. */
function renewalSettingsForm(app: ConsoleApp, store: Store, reload: () => Promise<void>): HTMLElement {
  const shipping = select('renewal_shipping', SHIPPING_POLICIES, store.renewal_shipping)
  const digits = minorDigits(store.currency)
  const flat = input({ type: 'text', inputmode: 'decimal', name: 'renewal_shipping_amount', value: store.renewal_shipping_amount === null ? '' : (store.renewal_shipping_amount / 10 ** digits).toFixed(digits), autocomplete: 'off' })
  const stock = select('out_of_stock', STOCK_POLICIES, store.out_of_stock)
  const retryDays = input({ type: 'number', name: 'out_of_stock_retry_days', value: store.out_of_stock_retry_days, min: 1, max: 30, step: 1 })
  const taxPercent = input({ type: 'text', inputmode: 'decimal', name: 'test_tax_rate', value: (store.test_tax_rate_bps / 100).toString(), autocomplete: 'off' })
  const testMode = store.gateway === 'test'
  return actionForm({
    label: 'Save renewal settings',
    fields: [
      field('Shipping on renewals', shipping, { hint: 'Only subscriptions with a shipping address pay shipping.' }),
      field(`Flat shipping rate (${store.currency})`, flat, { hint: 'Used when shipping is a flat rate.' }),
      field('When an item is out of stock', stock, { hint: 'Nothing is charged for an out-of-stock item unless you choose to charge anyway.' }),
      field('Days to keep trying (out of stock)', retryDays, { hint: 'With "Try again daily": once a day for this many days, then the renewal is skipped.' }),
      ...(testMode ? [field('Test tax rate (%)', taxPercent, { hint: 'Test mode only: tax on the discounted goods, such as 8.25. Live stores are taxed by BigCommerce.' })] : []),
    ],
    confirm: () => {
      const amount = flat.value.trim() === '' ? null : toMinor(flat.value, store.currency)
      if (amount !== null && (!Number.isInteger(amount) || amount < 0)) return 'The flat rate is an amount such as 5.99.'
      if (shipping.value === 'flat' && amount === null) return 'Enter the flat shipping rate.'
      const days = Number(retryDays.value)
      if (!Number.isInteger(days) || days < 1 || days > 30) return 'Days to keep trying is a whole number from 1 to 30.'
      const bps = Math.round(Number(taxPercent.value.trim().replace(',', '.')) * 100)
      if (testMode && (!Number.isInteger(bps) || bps < 0 || bps > 10_000)) return 'The test tax rate is a percentage from 0 to 100.'
      return { title: 'Save the renewal settings?', body: [h('p', null, 'They apply from the next renewal.')], confirmLabel: 'Save' }
    },
    run: async () => {
      const updated = await api.updateStore({
        renewal_shipping: shipping.value as Store['renewal_shipping'],
        renewal_shipping_amount: flat.value.trim() === '' ? null : toMinor(flat.value, store.currency),
        out_of_stock: stock.value as Store['out_of_stock'],
        out_of_stock_retry_days: Number(retryDays.value),
        ...(testMode ? { test_tax_rate_bps: Math.round(Number(taxPercent.value.trim().replace(',', '.')) * 100) } : {}),
      })
      app.useStore(updated)
      return 'Renewal settings saved.'
    },
    done: reload,
  })
}

/** The zone names the browser knows (IANA), each with its offset now, the store's own first if the list lacks it. */
function timeZoneSelect(current: string): HTMLSelectElement {
  const known = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : []
  const zones = [...new Set([current, 'UTC', ...known])].sort((a, b) => (a === 'UTC' ? -1 : b === 'UTC' ? 1 : a.localeCompare(b)))
  const now = new Date()
  const offset = (zone: string) => {
    try {
      return new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' }).formatToParts(now).find((part) => part.type === 'timeZoneName')?.value ?? ''
    } catch {
      return ''
    }
  }
  return select('timezone', zones.map((zone) => [zone, `${zone.replaceAll('_', ' ')} (${offset(zone) === 'GMT' ? 'GMT+00:00' : offset(zone)})`] as [string, string]), current)
}

/**
 * A list edited row by row: each row its own controls and a Remove button, an Add button under the
 * rows (within `min` to `max` rows). `values()` reads the rows in order. Removing or adding moves the
 * focus to where the list changed, and says so to assistive technology.
 */
function listEditor<T>(options: {
  legend: string
  hint: string
  addLabel: string
  /** What one row is, for its Remove button and announcements ("retry", "reason"). */
  noun: string
  min: number
  max: number
  items: readonly T[]
  row: (item: T | undefined, n: number) => { controls: HTMLElement[]; value: () => T }
}): { element: HTMLElement; values: () => T[] } {
  const rows = h('ol', { class: 'list-rows' })
  const made: { li: HTMLLIElement; value: () => T }[] = []
  const hintId = uid('list-hint')
  const add = h('button', { type: 'button', class: 'button secondary compact' }, options.addLabel)
  const status = h('p', { class: 'visually-hidden', role: 'status' })
  const refresh = () => {
    made.forEach((entry, index) => {
      const n = index + 1
      for (const control of entry.li.querySelectorAll<HTMLElement>('[aria-label]')) {
        control.setAttribute('aria-label', (control.getAttribute('aria-label') ?? '').replace(/^(\D+ )\d+/, `$1${n}`))
      }
      const remove = entry.li.querySelector<HTMLButtonElement>('button.remove')!
      remove.disabled = made.length <= options.min
    })
    add.disabled = made.length >= options.max
  }
  const addRow = (item: T | undefined) => {
    const built = options.row(item, made.length + 1)
    const remove = h('button', { type: 'button', class: 'button link-button remove', 'aria-label': `Remove ${options.noun} ${made.length + 1}` }, 'Remove')
    const li = h('li', { class: 'list-row' }, ...built.controls, remove)
    const entry = { li, value: built.value }
    remove.addEventListener('click', () => {
      const at = made.indexOf(entry)
      made.splice(at, 1)
      li.remove()
      refresh()
      status.textContent = `${capital(options.noun)} ${at + 1} removed.`
      const next = made[Math.min(at, made.length - 1)]?.li.querySelector<HTMLElement>('input, select')
      ;(next ?? add).focus()
    })
    made.push(entry)
    rows.append(li)
    return li
  }
  for (const item of options.items) addRow(item)
  add.addEventListener('click', () => {
    const li = addRow(undefined)
    refresh()
    status.textContent = `${capital(options.noun)} ${made.length} added.`
    li.querySelector<HTMLElement>('input, select')?.focus()
  })
  refresh()
  const element = h('fieldset', { class: 'list-editor', 'aria-describedby': hintId }, h('legend', null, options.legend), h('p', { class: 'hint', id: hintId }, options.hint), rows, h('div', { class: 'button-row' }, add), status)
  return { element, values: () => made.map((entry) => entry.value()) }
}

const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)
