import { all, api, emailOf } from '../api.ts'
import type { ConsoleApp } from '../app.ts'
import { h, replaceChildren } from '../../shared/dom.ts'
import { dateTime, money } from '../format.ts'
import { paths } from '../router.ts'
import type { Charge, Subscription } from '../types.ts'
import { errorBox, loading, pageHeader, section, table } from '../ui.ts'
import { resolveForms } from './subscription.ts'

/**
 * What needs a person: charges whose outcome is unknown (requires_review, resolved here), failed
 * charges still in dunning with their next retry, past_due subscriptions, and subscriptions whose
 * renewal was set aside (billing_issue). The API has no billing_issue filter: the active and
 * past_due subscriptions are read (up to 1,000) and those with one are shown.
 */
export async function renderAttention(app: ConsoleApp, isCurrent: () => boolean, { focus = true }: { focus?: boolean } = {}): Promise<void> {
  if (focus) {
    replaceChildren(app.main, pageHeader('Needs attention'), loading())
    app.finishRender('Needs attention')
  }
  let review: Charge[], failed: Charge[], pastDue: Subscription[], withIssue: Subscription[]
  try {
    ;[review, failed, pastDue, withIssue] = await Promise.all([
      all((cursor) => api.charges({ status: 'requires_review', cursor, limit: 100 }), 500),
      all((cursor) => api.charges({ status: 'failed', cursor, limit: 100 }), 500),
      all((cursor) => api.subscriptions({ status: 'past_due', cursor, limit: 100 }), 500),
      all((cursor) => api.subscriptions({ status: 'active', cursor, limit: 100 }), 1000).then((rows) => rows.filter((s) => s.billing_issue)),
    ])
  } catch (error) {
    if (!isCurrent()) return
    replaceChildren(app.main, pageHeader('Needs attention'), errorBox(error))
    return
  }
  if (!isCurrent()) return
  // A renewal waiting for stock is retried too, but no card is failing: it is not dunning.
  const dunning = failed.filter((charge) => charge.next_retry_at && charge.failure_code !== 'out_of_stock')
  withIssue = [...withIssue, ...pastDue.filter((s) => s.billing_issue)]
  const reload = () =>
    renderAttention(app, isCurrent, { focus: false }).then(() => {
      if (!isCurrent()) return
      app.focusHeading()
      app.announce(app.takeFlash() ?? 'Updated.')
    })
  // Rows name the subscriber (read once per subscription), the id under it.
  const ids = [...new Set([...review, ...dunning].map((c) => c.subscription_id).concat([...pastDue, ...withIssue].map((s) => s.id)))]
  const emails = new Map(await Promise.all(ids.map(async (id) => [id, await emailOf(id)] as const)))
  if (!isCurrent()) return
  const subscriptionLink = (id: string) => h('span', { class: 'who' }, h('a', { href: paths.subscription(id) }, emails.get(id) ?? id), emails.get(id) ? h('code', null, id) : null)
  const total = review.length + dunning.length + pastDue.length + withIssue.length
  replaceChildren(
    app.main,
    pageHeader('Needs attention', h('p', { class: 'subtitle' }, total === 0 ? 'Nothing needs attention.' : `${total} item${total === 1 ? '' : 's'} to look at.`)),
    section(
      `Charges to review (${review.length})`,
      h('p', { class: 'hint' }, "The gateway never answered these charges. Check the payment in the gateway's dashboard, then resolve each as paid or failed."),
      review.length === 0
        ? h('p', null, 'None.')
        : table(
            'Charges that require review',
            ['Subscription', 'Amount', 'Since', 'Why', 'Resolve'],
            review.map((c) => [subscriptionLink(c.subscription_id), money(c.amount, c.currency), dateTime(c.review?.since ?? c.created_at), c.review?.message ?? '—', resolveForms(c, reload)]),
            { captionHidden: true },
          ),
    ),
    section(
      `Failed charges in dunning (${dunning.length})`,
      dunning.length === 0
        ? h('p', null, 'None.')
        : table(
            'Failed charges with a retry to come',
            ['Subscription', 'Amount', 'Failed', 'Reason', 'Attempt', 'Next retry'],
            dunning.map((c) => [subscriptionLink(c.subscription_id), money(c.amount, c.currency), dateTime(c.settled_at ?? c.created_at), c.failure_message ?? c.failure_code ?? '—', String(c.attempt), dateTime(c.next_retry_at)]),
            { captionHidden: true },
          ),
    ),
    section(
      `Past due subscriptions (${pastDue.length})`,
      pastDue.length === 0
        ? h('p', null, 'None.')
        : table(
            'Past due subscriptions',
            ['Subscription', 'Last failed charge', 'Unpaid since'],
            pastDue.map((s) => {
              // What is owed is what the last attempt asked for (failed charges come newest first).
              const last = failed.find((c) => c.subscription_id === s.id)
              return [subscriptionLink(s.id), last ? money(last.amount, last.currency) : '—', dateTime(s.current_period_end ?? s.next_charge_at)]
            }),
            { captionHidden: true },
          ),
    ),
    section(
      `Subscriptions with a billing issue (${withIssue.length})`,
      withIssue.length === 0
        ? h('p', null, 'None.')
        : table(
            'Subscriptions with a billing issue',
            ['Subscription', 'Issue', 'Since'],
            withIssue.map((s) => [subscriptionLink(s.id), s.billing_issue!.message, dateTime(s.billing_issue!.since)]),
            { captionHidden: true },
          ),
    ),
  )
  if (focus) app.refocusHeading()
}
