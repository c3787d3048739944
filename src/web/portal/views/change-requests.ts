import { api, errorText, planById } from '../api.ts'
import type { PortalApp } from '../app.ts'
import { h, replaceChildren } from '../../shared/dom.ts'
import { subscriptionPath } from '../router.ts'
import type { Plan } from '../types.ts'
import { changeRequestItem } from './detail.ts'
import { productName, withNames } from './subscriptions.ts'

/** Every change request the subscriber made (business plans), with its status. */
export async function renderChangeRequests(app: PortalApp, isCurrent: () => boolean): Promise<void> {
  let page
  try {
    ;[page] = await Promise.all([api.changeRequests(), app.me()])
  } catch (failure) {
    if (!isCurrent()) return
    replaceChildren(app.main, h('h1', null, 'Change requests'), h('p', { class: 'alert error', role: 'alert' }, errorText(failure)))
    app.finishRender('Change requests')
    return
  }
  const subscriptionIds = [...new Set(page.data.map((request) => request.subscription_id))]
  const names = new Map(
    await Promise.all(
      subscriptionIds.map(async (id) => [id, await api.subscription(id).then(withNames).then(productName).catch(() => 'Subscription')] as const),
    ),
  )
  const planIds = [...new Set(page.data.map((request) => request.changes.plan_id).filter((id): id is string => Boolean(id)))]
  const plans = (await Promise.all(planIds.map(planById))).filter((plan): plan is Plan => plan !== null).map((plan) => ({ plan }))
  if (!isCurrent()) return

  replaceChildren(
    app.main,
    h('h1', null, 'Change requests'),
    h('p', { class: 'lead' }, 'Changes you proposed to business subscriptions, and what the store decided.'),
    page.data.length === 0
      ? h('div', { class: 'card' }, h('p', null, 'You have not requested any changes.'))
      : h(
          'div',
          { class: 'card' },
          h(
            'ul',
            { class: 'request-list' },
            page.data.map((request) =>
              changeRequestItem(request, plans, h('p', null, h('a', { href: subscriptionPath(request.subscription_id) }, names.get(request.subscription_id) ?? 'Subscription'))),
            ),
          ),
        ),
  )
  app.finishRender('Change requests')
}
