import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Mailer } from '../../lib/mailer.ts'
import type { EventLog } from '../events/index.ts'
import type { Module } from '../module.ts'
import { expiryCheckJob } from './expiry-check.ts'
import { Notification } from './notification.schemas.ts'
import { notificationAdminRoutes } from './notifications.routes.ts'
import { createNotificationsService, type NotificationsService } from './notifications.service.ts'
import { sendNotificationJob, type UpcomingOf } from './sender.ts'
import { queueNotificationsFor } from './triggers.ts'

export interface NotificationsModuleDeps {
  db: Db
  clock: Clock
  events: EventLog
  mailer: Mailer
  /** Where sign-in links point; a function because the listening address is known only after start. */
  portalUrl: () => string
  log: FastifyBaseLogger
  /**
   * The next renewal as the renewal engine will price it (module billing, given by the composition
   * root): the reminder email states its breakdown. Undefined answer: nothing is due to renew.
   */
  upcoming?: UpcomingOf | undefined
}

/** Subscriber emails: queued with the events that call for them, sent by the worker, logged for the merchant. */
export function createNotificationsModule({ db, clock, events, mailer, portalUrl, log, upcoming }: NotificationsModuleDeps): Module<NotificationsService> {
  // The email exists exactly when its event does: queued in the transaction that records the event.
  events.react(queueNotificationsFor)
  const service = createNotificationsService({ db, clock, events })
  return {
    name: 'notifications',
    service,
    routes: { admin: (app) => notificationAdminRoutes(app, service) },
    jobs: [sendNotificationJob({ db, clock, mailer, portalUrl, log, upcoming }), expiryCheckJob({ db, clock })],
    schemas: [Notification],
  }
}

export { Notification, type NotificationView } from './notification.schemas.ts'
export type { NotificationsService } from './notifications.service.ts'
export { EXPIRY_NOTICE_DAYS, queueExpiryWarnings } from './expiry-check.ts'
export { InstrumentExpiryCheck, SEND_ATTEMPTS, SendNotification } from './notifications.jobs.ts'
export { renderEmail } from './templates.ts'
export type { UpcomingOf } from './sender.ts'
