import { setUnauthorizedHandler } from './api.ts'
import { portal } from './app.ts'
import { h, replaceChildren } from '../shared/dom.ts'
import { parseRoute, ROOT, rewriteAddress, router, signInPath } from './router.ts'
import { currentSession, sessionExpired } from './session.ts'
import { renderChangeRequests } from './views/change-requests.ts'
import { renderDetail } from './views/detail.ts'
import { renderLogin } from './views/login.ts'
import { renderSignIn } from './views/sign-in.ts'
import { renderSubscriptions } from './views/subscriptions.ts'

/** The subscriber portal: plain DOM, one origin, the session in sessionStorage only. */

async function render(): Promise<void> {
  const isCurrent = portal.beginRender()
  const route = parseRoute(location)
  if (route.name === 'login') {
    portal.renderAccount()
    return renderLogin(portal, isCurrent, route.store)
  }

  const expired = sessionExpired()
  const session = currentSession()
  if (!session) {
    portal.renderAccount()
    if (expired && !portal.signInMessage) {
      portal.signInMessage = { text: 'Your session has expired. For your security, sessions last 15 minutes: request a new sign-in link to continue.', kind: 'error' }
    }
    const store = route.name === 'home' ? route.store : null
    // Any other address shows sign-in too; the address says so.
    if (route.name !== 'home') rewriteAddress(signInPath(store ?? portal.storeHash))
    return renderSignIn(portal, isCurrent, store ?? portal.storeHash)
  }

  portal.scheduleExpiry(session)
  portal.renderAccount()
  void portal.me().catch(() => {})
  // The store's time zone before any date is written (read once per session; the browser's if it cannot be read).
  await portal.portalStore()
  if (!isCurrent()) return
  switch (route.name) {
    case 'home':
      if (route.store) rewriteAddress(ROOT)
      return renderSubscriptions(portal, isCurrent)
    case 'subscription':
      return renderDetail(portal, isCurrent, route.id)
    case 'change-requests':
      return renderChangeRequests(portal, isCurrent)
    case 'not-found':
      replaceChildren(portal.main, h('h1', null, 'Page not found'), h('p', null, h('a', { href: ROOT }, 'See your subscriptions')))
      portal.finishRender('Page not found')
  }
}

setUnauthorizedHandler((error) => portal.handleUnauthorized(error))
portal.start(router, render)
