import { api } from '../api.ts'
import type { ConsoleApp } from '../app.ts'
import { h, replaceChildren } from '../dom.ts'
import { dateTime } from '../format.ts'
import type { PlatformConnection, Store } from '../types.ts'
import { actionForm, definitionList, errorBox, field, input, loading, pageHeader, section } from '../ui.ts'

/** Store settings (PATCH /admin/store), the platform connection, and where admin keys come from. */
export async function renderSettings(app: ConsoleApp, isCurrent: () => boolean, { focus = true }: { focus?: boolean } = {}): Promise<void> {
  if (focus) {
    replaceChildren(app.main, pageHeader('Settings'), loading())
    app.finishRender('Settings')
  }
  let store: Store, connection: PlatformConnection | null
  try {
    ;[store, connection] = await Promise.all([api.store(), api.platformConnection().catch(() => null)])
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
  const timezone = input({ type: 'text', name: 'timezone', value: store.timezone, maxlength: 64, autocomplete: 'off' })
  const dunning = input({ type: 'text', name: 'dunning_retry_days', value: store.dunning_retry_days.join(', '), autocomplete: 'off' })
  const reminder = input({ type: 'number', name: 'renewal_reminder_days', value: store.renewal_reminder_days, min: 0, step: 1 })
  const pastDue = input({ type: 'number', name: 'past_due_cancel_days', value: store.past_due_cancel_days, min: 1, step: 1 })
  const storeForm = actionForm({
    label: 'Save settings',
    fields: [
      field('Store name', name),
      field('Time zone', timezone, { hint: 'IANA name, such as Europe/Berlin: renewal dates and this console follow it.' }),
      field('Dunning retries (days after the first failure)', dunning, { hint: 'Comma-separated, such as 1, 3, 5, 7.' }),
      field('Renewal reminder (days before)', reminder, { hint: '0: no reminder.' }),
      field('Cancel past due subscriptions after (days)', pastDue),
    ],
    confirm: () => {
      const days = dunning.value.split(',').map((d) => d.trim()).filter(Boolean).map(Number)
      if (days.some((d) => !Number.isInteger(d))) return 'Dunning retries are whole numbers of days, separated by commas.'
      return { title: 'Save the store settings?', body: [h('p', null, 'They apply from the next renewal, retry and reminder.')], confirmLabel: 'Save' }
    },
    run: async () => {
      const updated = await api.updateStore({
        name: name.value.trim(),
        timezone: timezone.value.trim(),
        dunning_retry_days: dunning.value.split(',').map((d) => d.trim()).filter(Boolean).map(Number),
        renewal_reminder_days: Number(reminder.value),
        past_due_cancel_days: Number(pastDue.value),
      })
      app.useStore(updated)
      return 'Settings saved.'
    },
    done: reload,
  })

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
      section('Store', storeForm),
      h(
        'div',
        null,
        section(
          'Platform connection',
          definitionList([
            ['Connected', connection ? (connection.connected ? 'Yes' : 'No') : 'Unknown'],
            ['Through', connection?.source ?? '—'],
            ['Since', dateTime(connection?.connected_at)],
            ['Billing', store.billing_stopped_at ? `Stopped ${dateTime(store.billing_stopped_at)}` : 'Running'],
          ]),
          connectionForm,
        ),
        section(
          'Admin API keys',
          h('p', null, 'The admin API has no key routes yet: create and revoke keys with the command line, where a new key is shown once.'),
          h('p', null, h('code', null, 'npm run cli -- key create'), ' · ', h('code', null, 'npm run cli -- key revoke')),
        ),
      ),
    ),
  )
  if (focus) app.refocusHeading()
}
