import { AppError } from '../../lib/errors.ts'
import type { SubscriptionStatus } from './subscription.schemas.ts'

/** What moves a subscription from one status to another (docs/contract.md, Subscription states). */
export type StatusAction = 'activate' | 'pause' | 'resume' | 'dunning_exhausted' | 'recover' | 'expire' | 'cancel' | 'reactivate'

export const STATUS_ACTIONS: StatusAction[] = ['activate', 'pause', 'resume', 'dunning_exhausted', 'recover', 'expire', 'cancel', 'reactivate']

export const TRANSITIONS: Record<SubscriptionStatus, Partial<Record<StatusAction, SubscriptionStatus>>> = {
  pending: { activate: 'active', cancel: 'cancelled' },
  active: { pause: 'paused', dunning_exhausted: 'past_due', expire: 'expired', cancel: 'cancelled' },
  paused: { resume: 'active', cancel: 'cancelled' },
  past_due: { recover: 'active', cancel: 'cancelled' },
  // Reactivation starts a cancelled subscription again on its plan and instrument (docs/contract.md, Reactivation).
  cancelled: { reactivate: 'active' },
  expired: {},
}

export function transition(from: SubscriptionStatus, action: StatusAction): SubscriptionStatus {
  const to = TRANSITIONS[from][action]
  if (!to) throw new AppError('invalid_state', `cannot ${action.replace('_', ' ')} a ${from.replace('_', ' ')} subscription`)
  return to
}

/** Changes that keep the status; each lists the statuses it is allowed in. */
export type ChangeAction =
  | 'skip'
  | 'unskip'
  | 'swap'
  | 'change_quantity'
  | 'change_interval'
  | 'update_shipping_address'
  | 'update_payment_instrument'
  | 'request_change'

const LIVE: SubscriptionStatus[] = ['pending', 'active', 'paused', 'past_due']

export const CHANGES_ALLOWED: Record<ChangeAction, SubscriptionStatus[]> = {
  // Only a scheduled renewal can be skipped: active subscriptions have one.
  skip: ['active'],
  unskip: ['active', 'paused'],
  swap: LIVE,
  change_quantity: LIVE,
  change_interval: LIVE,
  update_shipping_address: LIVE,
  // A new instrument is how a past_due subscription recovers.
  update_payment_instrument: LIVE,
  request_change: LIVE,
}

export function assertChangeAllowed(status: SubscriptionStatus, change: ChangeAction): void {
  if (!CHANGES_ALLOWED[change].includes(status)) {
    throw new AppError('invalid_state', `cannot ${change.replaceAll('_', ' ')} on a ${status.replace('_', ' ')} subscription`)
  }
}

/** Statuses in which nothing about the subscription changes; only a cancelled one may be reactivated. */
export const FINAL_STATUSES: SubscriptionStatus[] = ['cancelled', 'expired']
