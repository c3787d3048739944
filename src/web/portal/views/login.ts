import { api, ApiError, errorText } from '../api.ts'
import type { PortalApp } from '../app.ts'
import { h, replaceChildren } from '../../shared/dom.ts'
import { navigate, ROOT, rewriteAddress, signInPath, subscriptionPath } from '../router.ts'
import { saveSession } from '../session.ts'

/**
 * Where a link from a notification email leads once signed in (docs/contract.md, Subscriber emails):
 * `subscription=<id>` opens that subscription, `action=payment-instrument` there with the payment
 * method change open. A requested sign-in link has neither and opens the list.
 */
function afterSignIn(): string {
  const params = new URLSearchParams(location.search)
  const subscription = params.get('subscription')
  if (!subscription || !/^sub_[0-9A-HJKMNP-TV-Z]{26}$/.test(subscription)) return ROOT
  const action = params.get('action')
  return action === 'payment-instrument' || action === 'skip' ? `${subscriptionPath(subscription)}?action=${action}` : subscriptionPath(subscription)
}

/**
 * The emailed link's page. Opening it (a GET, perhaps by a mail scanner) changes nothing: only the
 * "Sign in" button posts the one-time token to verify. The token leaves the address bar at once.
 */
export async function renderLogin(app: PortalApp, isCurrent: () => boolean, storeHash: string | null): Promise<void> {
  const params = new URLSearchParams(location.search)
  const token = params.get('token')
  if (token) {
    app.pendingToken = token
    params.delete('token')
    const rest = params.toString()
    rewriteAddress(`${ROOT}/login${rest ? `?${rest}` : ''}`)
  }
  if (storeHash) await app.showStore(storeHash)
  if (!isCurrent()) return

  if (!app.pendingToken) {
    replaceChildren(
      app.main,
      h('h1', null, 'Sign in'),
      h(
        'div',
        { class: 'card form-card' },
        h('p', null, 'This page needs the sign-in link from your email. The link may have been opened in another tab already.'),
        h('p', null, h('a', { href: signInPath(storeHash ?? app.storeHash) }, 'Request a new sign-in link')),
      ),
    )
    app.finishRender('Sign in')
    return
  }

  const error = h('div', { class: 'alert error', role: 'alert' })
  const button = h('button', { type: 'button', class: 'button primary' }, 'Sign in')
  let busy = false
  button.addEventListener('click', async () => {
    if (busy || !app.pendingToken) return
    busy = true
    button.setAttribute('aria-busy', 'true')
    button.textContent = 'Signing in…'
    error.replaceChildren()
    try {
      const answer = await api.verify(app.pendingToken)
      app.pendingToken = null
      app.startSession(saveSession(answer.access_token, answer.expires_in))
      app.flashNext('You are signed in.')
      navigate(afterSignIn(), { replace: true })
    } catch (failure) {
      button.textContent = 'Sign in'
      busy = false
      button.removeAttribute('aria-busy')
      const again = h('a', { href: signInPath(storeHash ?? app.storeHash) }, 'Request a new sign-in link')
      error.replaceChildren(h('p', null, errorText(failure)), h('p', null, again))
      if (failure instanceof ApiError && failure.code === 'invalid_token') {
        // Used, expired or unknown: pressing again cannot help; the way on is a new link.
        app.pendingToken = null
        button.remove()
        again.focus()
      }
    }
  })

  replaceChildren(
    app.main,
    h('h1', null, 'Sign in'),
    h(
      'div',
      { class: 'card form-card' },
      h('p', { class: 'lead' }, 'Welcome back. Select Sign in to manage your subscriptions.'),
      error,
      h('div', { class: 'button-row' }, button),
    ),
  )
  app.finishRender('Sign in')
}
