import { setUnauthorizedHandler } from './api.ts'
import { app } from './app.ts'
import { h, replaceChildren } from '../shared/dom.ts'
import { parseRoute, paths, router } from './router.ts'
import { currentKey, takeSessionFromFragment } from './session.ts'
import { errorBox } from './ui.ts'
import { renderSignIn } from './views/sign-in.ts'
import { renderSubscriptions } from './views/subscriptions.ts'
import { renderSubscription } from './views/subscription.ts'
import { renderSubscriber } from './views/subscriber.ts'
import { renderAttention } from './views/attention.ts'
import { renderWebhooks, renderWebhook } from './views/webhooks.ts'
import { renderCatalogue } from './views/catalogue.ts'
import { renderSettings } from './views/settings.ts'
import { renderOverview } from './views/overview.ts'
import { renderDiscounts } from './views/discounts.ts'
import { renderImport } from './views/import.ts'
import { renderBulkChanges } from './views/bulk-changes.ts'

/** The merchant console: plain DOM modules, the admin API only, the key in sessionStorage only. */

async function render(): Promise<void> {
  const isCurrent = app.beginRender()
  if (!currentKey()) {
    app.renderChrome()
    return renderSignIn(app, isCurrent, () => void render())
  }
  app.renderChrome()
  try {
    await app.loadStore()
  } catch (error) {
    if (!isCurrent()) return
    replaceChildren(app.main, h('h1', null, 'The console could not start'), errorBox(error))
    app.finishRender('Error')
    return
  }
  if (!isCurrent()) return
  app.showClock()
  const route = parseRoute(location)
  switch (route.name) {
    case 'overview':
      return renderOverview(app, isCurrent)
    case 'subscriptions':
      return renderSubscriptions(app, isCurrent, route.params)
    case 'subscription':
      return renderSubscription(app, isCurrent, route.id)
    case 'subscriber':
      return renderSubscriber(app, isCurrent, route.id)
    case 'attention':
      return renderAttention(app, isCurrent)
    case 'webhooks':
      return renderWebhooks(app, isCurrent)
    case 'webhook':
      return renderWebhook(app, isCurrent, route.id)
    case 'catalogue':
      return renderCatalogue(app, isCurrent)
    case 'discounts':
      return renderDiscounts(app, isCurrent)
    case 'settings':
      return renderSettings(app, isCurrent)
    case 'import':
      return renderImport(app, isCurrent)
    case 'bulk-changes':
      return renderBulkChanges(app, isCurrent, route.params)
    case 'not-found':
      replaceChildren(app.main, h('h1', null, 'Page not found'), h('p', null, h('a', { href: paths.overview }, 'Go to the overview')))
      app.finishRender('Page not found')
  }
}

// Opened from the BigCommerce control panel: the load callback handed over a console session.
if (takeSessionFromFragment()) app.flashNext('Signed in from the BigCommerce control panel.')
setUnauthorizedHandler((error) => app.handleUnauthorized(error))
app.start(router, render)
