export {
  BillingIssue,
  CancelBody,
  ChangeRequest,
  ChangeRequestBody,
  ChangeRequestListQuery,
  IntervalBody,
  OptionalBody,
  PauseBody,
  PaymentInstrumentBody,
  QuantityBody,
  RescheduleBody,
  ShippingAddress,
  ShippingAddressBody,
  Subscriber,
  Subscription,
  SUBSCRIPTION_STATUSES,
  subscriptionSchemas,
  SwapBody,
  type SubscriberView,
  type SubscriptionView,
} from './subscription.schemas.ts'
export { createSubscriptionService, type SubscriptionService } from './subscriptions.service.ts'
export { createCheckoutService, type CheckoutService } from './checkout.service.ts'
export { createChangeRequestService, type ChangeRequestService } from './change-requests.service.ts'
export { dueMutation, processDueWork, UNPAID_CANCELLATION_REASON, type DueCounts, type DueKind } from './due-work.ts'
export { subscriptionAdminRoutes } from './subscriptions.routes.ts'
export type { Actor, ActionMark, Mutation } from './subscription-mutation.ts'
export { applyMutation, lockForActor, withMark } from './subscription-mutation.ts'
export { presentSubscriber, presentSubscription } from './subscription.presenter.ts'
export { findSubscriber, findSubscriberIdByEmail, updateSubscriber } from './subscriptions.repository.ts'
export { countRenewalsSetAside, lockDueForRenewal, lockSubscriptionsByIds, renewalOrderDetails, type RenewalOrderDetails } from './renewal-queries.ts'
export type { ShippingAddressValue } from './subscriptions.tables.ts'
export { registerSubscriptionActions } from './subscription-action.routes.ts'
export { applySubscriptionChanges, CHARGE_REQUIRES_REVIEW, RENEWAL_FAILED, setBillingIssue, type SubscriptionChange } from './subscription-batch.ts'
export { DUE_WORK_JOB, dueWorkJobs } from './due-work.jobs.ts'
export { findInstrumentsExpiringBeforeRenewal, type ExpiringInstrument } from './instrument-expiry.ts'
export { findSubscription } from './subscriptions.repository.ts'
export { metricWindows, PERIODS_PER_YEAR, subscriptionMetrics, type MetricWindow, type SubscriptionWindowFigures } from './subscription-metrics.ts'
