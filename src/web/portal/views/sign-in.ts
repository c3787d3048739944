import { api, errorText } from '../api.ts'
import type { PortalApp } from '../app.ts'
import { field, h, replaceChildren } from '../../shared/dom.ts'

/** Email in, sign-in link out: the same answer whether or not the address is known. */
export async function renderSignIn(app: PortalApp, isCurrent: () => boolean, storeHash: string | null): Promise<void> {
  const storeName = storeHash ? await app.showStore(storeHash) : null
  if (!isCurrent()) return
  const message = app.signInMessage
  app.signInMessage = null
  if (!storeHash) {
    showWhichStore(app, message)
    app.finishRender('Sign in')
    return
  }
  showForm(app, storeHash, storeName, message, '')
  app.finishRender('Sign in')
}

/** Only with a store: without one, `renderSignIn` shows the way in from the store instead (no Store ID prompt). */
function showForm(app: PortalApp, storeHash: string, storeName: string | null, message: { text: string; kind: 'info' | 'error' } | null, email: string): void {
  const emailInput = h('input', { type: 'email', name: 'email', autocomplete: 'email', required: true, maxlength: 254, spellcheck: 'false' }) as HTMLInputElement
  emailInput.value = email
  const error = h('div', { class: 'alert error', role: 'alert' })
  const submit = h('button', { type: 'submit', class: 'button primary' }, 'Email me a sign-in link')
  let busy = false

  const form = h(
    'form',
    {
      class: 'card form-card',
      onsubmit: async (event: Event) => {
        event.preventDefault()
        if (busy) return
        const address = emailInput.value.trim()
        busy = true
        submit.setAttribute('aria-busy', 'true')
        error.textContent = ''
        try {
          await api.requestLink(address, storeHash)
          showSent(app, storeHash, storeName, address)
        } catch (failure) {
          error.textContent = errorText(failure, { email: 'Email address', store_hash: 'The store in this link' })
        } finally {
          busy = false
          submit.removeAttribute('aria-busy')
        }
      },
    },
    field('Email address', emailInput, { hint: 'The address you used when you subscribed.' }),
    error,
    h('div', { class: 'button-row' }, submit),
  )

  replaceChildren(
    app.main,
    h('h1', null, 'Sign in'),
    message ? h('p', { class: `alert ${message.kind}`, role: message.kind === 'error' ? 'alert' : 'status' }, message.text) : null,
    h('p', { class: 'lead' }, `Manage your subscriptions${storeName ? ` with ${storeName}` : ''}. We'll email you a link that signs you in; no password needed.`),
    form,
  )
}

/**
 * Opened without `?store=`: the page cannot know which store's subscriptions to look in, and a
 * subscriber does not know a store's internal id. The way in is the store's own link.
 */
function showWhichStore(app: PortalApp, message: { text: string; kind: 'info' | 'error' } | null): void {
  replaceChildren(
    app.main,
    h('h1', null, 'Sign in'),
    message ? h('p', { class: `alert ${message.kind}`, role: message.kind === 'error' ? 'alert' : 'status' }, message.text) : null,
    h(
      'div',
      { class: 'card form-card which-store' },
      h('p', { class: 'lead' }, 'To manage your subscriptions, open this page from the store you subscribed with.'),
      h(
        'ul',
        null,
        h('li', null, 'On the store’s website, follow the “Manage subscriptions” link (often in your account or the site’s footer).'),
        h('li', null, 'Or use the link in any email the store sent about your subscription.'),
      ),
      h('p', { class: 'hint' }, 'Those links say which store you are signing in to, so we can email you a sign-in link.'),
    ),
  )
}

function showSent(app: PortalApp, storeHash: string, storeName: string | null, email: string): void {
  replaceChildren(
    app.main,
    h('h1', null, 'Check your email'),
    h(
      'div',
      { class: 'card' },
      h('p', null, 'If ', h('strong', null, email), ` has subscriptions${storeName ? ` with ${storeName}` : ''}, a sign-in link is on its way.`),
      h('p', null, 'Open the link on this device. It works once and expires in 15 minutes.'),
      h(
        'div',
        { class: 'button-row' },
        h('button', { type: 'button', class: 'button secondary', onclick: () => { showForm(app, storeHash, storeName, null, email); app.focusHeading() } }, 'Use a different email'),
      ),
    ),
  )
  app.announce('Sign-in link requested. Check your email.')
  app.finishRender('Check your email')
}
