import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import type { EventLog } from '../events/index.ts'
import type { Module } from '../module.ts'
import type { ProductVariants, StoredInstruments } from '../platform/index.ts'
import { createChangeRequestService, type ChangeRequestService } from './change-requests.service.ts'
import { createCheckoutService, type CheckoutService, type RedeemCheckoutDiscount } from './checkout.service.ts'
import { dueWorkJob } from './due-work.jobs.ts'
import { processDueWork, type DueCounts, type DueKind } from './due-work.ts'
import type { RenewNow } from './order-now.ts'
import { subscriptionSchemas } from './subscription.schemas.ts'
import { createSubscriptionWrites, type SubscriptionWrites } from './subscription-writes.ts'
import { subscriptionAdminRoutes } from './subscriptions.routes.ts'
import { subscriberEmails } from './subscriptions.repository.ts'
import { createSubscriptionService, type SubscriptionService } from './subscriptions.service.ts'

export interface SubscriptionsModuleDeps {
  db: Db
  clock: Clock
  events: EventLog
  /** The platform's stored instruments: a platform store's instruments are checked against the customer's. */
  instruments?: StoredInstruments | undefined
  /** The platform catalogue's variants: what a subscriber may change their subscription's variant to. */
  variants?: ProductVariants | undefined
  /** Order now runs the renewal engine for one subscription (the billing module, given by the composition root). */
  renewNow?: RenewNow | undefined
  /** Items' discount codes, redeemed in the checkout's transaction (the discounts module, given by the composition root). */
  redeemDiscount?: RedeemCheckoutDiscount | undefined
  log?: FastifyBaseLogger
}

export interface SubscriptionsModuleService {
  subscriptions: SubscriptionService
  checkouts: CheckoutService
  changeRequests: ChangeRequestService
  /** Every change to subscription rows with its events, for the modules that move subscriptions (billing, discounts). */
  writes: SubscriptionWrites
  /** Runs due lifecycle work now (the worker does it every second; the test clock after each move). */
  processDueWork(options?: { limit?: number; storeId?: string; kinds?: readonly DueKind[]; catchUpFrom?: Date }): Promise<DueCounts>
}

/** Subscribers and their subscriptions: checkouts start them, actions change them, due work moves them on the store's clock. */
export function createSubscriptionsModule({ db, clock, events, instruments, variants, renewNow, redeemDiscount, log }: SubscriptionsModuleDeps): Module<SubscriptionsModuleService> {
  const writes = createSubscriptionWrites(events)
  // An event a subscriber caused names them by their email (docs/contract.md, Events: `actor`).
  events.labelSubscribers(subscriberEmails)
  const service: SubscriptionsModuleService = {
    subscriptions: createSubscriptionService({ db, clock, writes, instruments, variants, renewNow }),
    checkouts: createCheckoutService({ db, clock, events, instruments, redeemDiscount }),
    changeRequests: createChangeRequestService({ db, clock, events, writes }),
    writes,
    processDueWork: (options = {}) => processDueWork(db, clock, writes, { ...options, ...(log ? { log } : {}) }),
  }
  return {
    name: 'subscriptions',
    service,
    routes: { admin: (app) => subscriptionAdminRoutes(app, service) },
    jobs: [dueWorkJob({ db, clock, writes, ...(log ? { log } : {}) })],
    schemas: subscriptionSchemas,
  }
}

export {
  BillingIssue,
  CheckoutBody,
  ShippingAddress,
  Subscriber,
  Subscription,
  SUBSCRIPTION_STATUSES,
  SubscriptionListQuery,
  ChangeRequest,
  ChangeRequestBody,
  ChangeRequestListQuery,
  type CheckoutInput,
  type SubscriberView,
  type SubscriptionView,
} from './subscription.schemas.ts'
export type { SubscriberListFilter, SubscriberProfile, SubscriptionListFilter, SubscriptionService, VariantChoice } from './subscriptions.service.ts'
export type { SubscriberWithCount } from './subscriptions.repository.ts'
export { SEARCH_MAX_LENGTH } from './subscription-search.ts'
export { NATIVE_COLUMNS, nativeRecord, type NativeCell, type NativeColumn, type NativeRecord, type NativeSource } from './subscription-columns.ts'
export type { CheckoutService } from './checkout.service.ts'
export type { ChangeRequestService } from './change-requests.service.ts'
export type { SubscriptionWrites } from './subscription-writes.ts'
export { dueMutation, UNPAID_CANCELLATION_REASON, type DueCounts, type DueKind } from './due-work.ts'
export { registerSubscriptionActions } from './subscription-action.routes.ts'
export { lockForActor, withMark, type ActionMark, type Actor, type Mutation } from './subscription-mutation.ts'
export { presentSubscription } from './subscription.presenter.ts'
export { firstRenewalAtOrAfter, NO_SCHEDULED_PRICE } from './price-schedule.ts'
export { assertRenewalAmount } from './renewal-amount.ts'
export { lockPlanSubscriptionsPage, planSubscriptionFigures, planSubscriptionIdsPage } from './price-schedule.repository.ts'
export { findSubscriberIdByEmail, findSubscriber, findSubscribersByIds, findSubscription, findSubscriptionsByIds } from './subscriptions.repository.ts'
export { findSubscriptionsWithSubscriber, listSubscriptionsNeedingAttention, type AttentionRow } from './attention.repository.ts'
export { assertCanRetryNow } from './order-now.ts'
export { anyRenewalDue, countRenewalsSetAside, lockDueFairly, lockDueForRenewal, lockSubscriptionsByIds, renewalOrderDetails, type RenewalOrderDetails } from './renewal.repository.ts'
export { setBillingIssue, type SubscriptionChange } from './subscription-batch.repository.ts'
export { existingExternalIds, insertImportedSubscriptions, subscribersForImport, type WantedSubscriber } from './subscription-import.repository.ts'
export { CHARGE_REQUIRES_REVIEW, PAYMENT_METHOD_REQUIRED, RENEWAL_FAILED } from './billing-issues.ts'
export { findInstrumentsExpiringBeforeRenewal, type ExpiringInstrument } from './instrument-expiry.repository.ts'
export { subscriptionsRenewingBefore } from './renewal-forecast.repository.ts'
export { metricWindows, PERIODS_PER_YEAR, subscriptionMetrics, type MetricWindow, type SubscriptionWindowFigures } from './subscription-metrics.repository.ts'
export { transition, assertChangeAllowed, type ChangeAction } from './subscription-state.ts'
export type { AppliedDiscount, ShippingAddressValue } from './subscriptions.tables.ts'
export { DueWork } from './due-work.jobs.ts'
