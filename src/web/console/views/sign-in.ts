import { api, ApiError, errorText } from '../api.ts'
import type { ConsoleApp } from '../app.ts'
import { field, h, replaceChildren } from '../../shared/dom.ts'
import { saveKey } from '../session.ts'

/**
 * Sign-in with an admin API key: it is tried against GET /admin/store first, kept in sessionStorage
 * only when the service accepts it, and the page the merchant asked for is shown.
 */
export function renderSignIn(app: ConsoleApp, isCurrent: () => boolean, onSignedIn: () => void): void {
  const message = app.signInMessage
  app.signInMessage = null
  const keyInput = h('input', { type: 'password', name: 'key', autocomplete: 'off', spellcheck: 'false', required: true, 'aria-required': 'true', placeholder: 'sk_test_… or sk_live_…' })
  const status = h('div', { class: 'form-status' })
  const button = h('button', { type: 'submit', class: 'button primary' }, 'Sign in')
  const form = h(
    'form',
    { class: 'sign-in-form', novalidate: true },
    field('Admin API key', keyInput, { hint: 'The key stays in this browser tab only (session storage) and is forgotten when the tab closes.' }),
    h('div', { class: 'button-row' }, button),
    status,
  )
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    void (async () => {
      const key = keyInput.value.trim()
      replaceChildren(status)
      if (!key) {
        replaceChildren(status, h('p', { class: 'error-box', role: 'alert' }, 'Enter an admin API key.'))
        keyInput.setAttribute('aria-invalid', 'true')
        keyInput.focus()
        return
      }
      button.disabled = true
      try {
        const store = await api.store(key)
        if (!isCurrent()) return
        saveKey(key)
        app.useStore(store)
        app.flashNext(`Signed in to ${store.name}.`)
        onSignedIn()
      } catch (error) {
        const text = error instanceof ApiError && error.status === 401 ? 'That key was refused: it is not a valid admin API key, or it was revoked. Check it and try again.' : errorText(error)
        replaceChildren(status, h('p', { class: 'error-box', role: 'alert' }, text))
        keyInput.setAttribute('aria-invalid', 'true')
        keyInput.focus()
      } finally {
        button.disabled = false
      }
    })()
  })
  replaceChildren(
    app.main,
    h(
      'div',
      { class: 'sign-in' },
      h('h1', null, 'Sign in to the merchant console'),
      message ? h('p', { class: `message ${message.kind}`, role: message.kind === 'error' ? 'alert' : 'status' }, message.text) : null,
      h('p', null, 'Use an admin API key of your store. Create one with ', h('code', null, 'npm run cli -- key create'), ' or on the Settings page of a signed-in console.'),
      form,
    ),
  )
  app.finishRender('Sign in')
}
