/** Issue codes a change to the subscription clears (its data may now be fixed); others need their own action. */
export const RENEWAL_FAILED = 'renewal_failed' as const
export const CHARGE_REQUIRES_REVIEW = 'charge_requires_review' as const
/** An imported subscription with no usable stored card: cleared when a payment instrument is set (docs/contract.md, Import). */
export const PAYMENT_METHOD_REQUIRED = 'payment_method_required' as const
