import type { FastifyBaseLogger } from 'fastify'
import type { Db, StoreRow } from '../../db/database.ts'
import { handleJob, type JobHandler } from '../../jobs/job-kinds.ts'
import { JobGaveUp } from '../../jobs/runner.ts'
import type { Mailer } from '../../lib/mailer.ts'
import { containsCardNumber } from '../../lib/card-data.ts'
import type { Clock } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { printableText } from '../../lib/printable-text.ts'
import { findPlanRow } from '../catalog/index.ts'
import { issueEmailSignInLink, type PortalLinkTarget } from '../portal-auth/index.ts'
import { findStoreById, storeNow } from '../stores/index.ts'
import { findSubscriber, findSubscription } from '../subscriptions/index.ts'
import { isNotificationOn } from '../stores/index.ts'
import { isRequestedTemplate, type EmailTemplate } from './email-templates.ts'
import { SendNotification, type NotificationPayload } from './notifications.jobs.ts'
import { findNotificationByKey, recordAttempt, recordOutcome } from './notifications.repository.ts'
import { renderEmail, type EmailInput, type RenewalBreakdown } from './templates.ts'

/** Which links each email carries besides "manage". */
const EXTRA_LINKS: Record<EmailTemplate, Array<'skip' | 'paymentMethod'>> = {
  subscription_created: [],
  renewal_upcoming: ['skip'],
  payment_failed: ['paymentMethod'],
  past_due: ['paymentMethod'],
  cancelled: [],
  payment_instrument_expiring: ['paymentMethod'],
  renewal_skipped: [],
  price_change_notice: [],
  payment_update_link: ['paymentMethod'],
}

const ACTION_OF = { skip: 'skip', paymentMethod: 'payment-instrument' } as const

/** The next renewal's breakdown, as the renewal will charge it; undefined when nothing is due to renew. */
export type UpcomingOf = (store: StoreRow, subscriptionId: string) => Promise<RenewalBreakdown | undefined>

/**
 * The send job (docs/contract.md, Subscriber emails). Reads the store, the subscriber and the
 * subscription as they are now (a template switched off since sends nothing and records nothing),
 * records the attempt in the log, makes fresh single-use links, and sends. A failed send records
 * the error and throws, so the job runner retries with back-off; an email already recorded as sent
 * under its key is never sent again.
 */
export function sendNotificationJob({ db, clock, mailer, portalUrl, log, upcoming }: { db: Db; clock: Clock; mailer: Mailer; portalUrl: () => string; log: FastifyBaseLogger; upcoming?: UpcomingOf | undefined }): JobHandler {
  return handleJob(SendNotification, (payload) => sendNotification(payload))

  async function sendNotification(payload: NotificationPayload): Promise<void> {
    const store = await findStoreById(db, payload.store_id)
    // An email an admin asked for is sent whatever the store's switches say; the others follow them.
    if (!store || (!isRequestedTemplate(payload.template) && !isNotificationOn(store.notifications, payload.template))) return
    const subscription = await findSubscription(db, store.id, payload.subscription_id)
    const subscriber = subscription ? await findSubscriber(db, store.id, subscription.subscriber_id) : undefined
    if (!subscription || !subscriber) return

    const existing = await findNotificationByKey(db, payload.dedupe_key)
    // Sent by an earlier run whose job could not be removed afterwards: nothing more to do.
    if (existing?.status === 'sent') return
    // The log is on the store's clock (a test store's test clock, as its pages show); the links' expiry is real time.
    const now = clock.now()
    const id = existing?.id ?? newId('ntf')
    await recordAttempt(db, { id, storeId: store.id, template: payload.template, recipient: subscriber.email, subscriptionId: subscription.id, dedupeKey: payload.dedupe_key, at: storeNow(store, clock) })

    // Fresh links on every attempt: tokens are stored only as hashes, and an unsent one expires unused.
    const linkTo = (target: PortalLinkTarget) =>
      issueEmailSignInLink(db, { now, storeId: store.id, storeHash: store.store_hash, subscriberId: subscriber.id, portalUrl: portalUrl(), target })
    const links: EmailInput['links'] = { manage: await linkTo({ subscriptionId: subscription.id }) }
    for (const extra of EXTRA_LINKS[payload.template]) links[extra] = await linkTo({ subscriptionId: subscription.id, action: ACTION_OF[extra] })

    const plan = await findPlanRow(db, store.id, subscription.plan_id)
    // The reminder states the renewal as the engine will charge it (tax and shipping included), not a
    // figure of its own; the amount recorded with the event stands in when nothing is due any more.
    const breakdown = payload.template === 'renewal_upcoming' && upcoming ? await upcoming(store, subscription.id) : undefined
    const mail = renderEmail({
      template: payload.template,
      to: subscriber.email,
      storeName: store.name,
      timezone: store.timezone,
      planName: plan?.name ?? null,
      // The date of the renewal the figures are for: after a skip since the event, the next one's.
      facts: breakdown ? { ...payload.facts, next_charge_at: breakdown.next_charge_at } : (payload.facts ?? {}),
      ...(breakdown ? { breakdown } : {}),
      card: { brand: subscription.payment_instrument_brand, last4: subscription.payment_instrument_last4 },
      links,
    })
    // Never a card number in an email: the parts come from fields that cannot hold one, and this says so
    // (links aside: their random tokens are not written numbers).
    const withoutLinks = (body: string) => Object.values(links).reduce((rest, link) => rest.split(link).join(''), body)
    if ([mail.subject, withoutLinks(mail.text)].some(containsCardNumber)) {
      await record(store, id, 'failed', 'refused: the email would hold something that looks like a card number')
      throw new JobGaveUp('refusing to send an email that holds something that looks like a card number')
    }
    try {
      await mailer.send(mail)
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      await record(store, id, 'failed', message).catch((recordError: unknown) => log.error({ err: recordError, notification: id }, 'could not record a failed email'))
      throw error
    }
    await record(store, id, 'sent', null)
  }

  function record(store: StoreRow, id: string, status: 'sent' | 'failed', error: string | null): Promise<void> {
    return recordOutcome(db, id, { status, error: error === null ? null : printableText(Buffer.from(error.slice(0, 1000))), at: storeNow(store, clock) })
  }
}
