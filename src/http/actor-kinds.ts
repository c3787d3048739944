// The actor types alone, importing nothing: table types (refunds.requested_by) name them without a cycle.

/**
 * Who acts (docs/contract.md, Events: `actor`): the merchant through an admin API key or through the
 * console (a session opened by the platform's load callback), a subscriber on their own subscriptions
 * only, BigCommerce through its callbacks and webhooks, or the service itself (the renewal engine,
 * due work). Every event is recorded with the actor whose action caused it.
 */
export type Actor =
  | { kind: 'admin_key'; keyId: string; keyName: string }
  | { kind: 'console'; sessionId: string }
  | { kind: 'subscriber'; subscriberId: string }
  | { kind: 'platform'; label: string }
  | { kind: 'system'; id: SystemActorId }

/** The parts of the service that act by themselves, and how each is named in an event. */
export const SYSTEM_ACTORS = {
  renewals: 'Renewal worker',
  due_work: 'Scheduled work',
  command_line: 'Command line',
} as const
export type SystemActorId = keyof typeof SYSTEM_ACTORS

/** The renewal engine: renewals, retries (dunning), their settlement. */
export const RENEWALS: Actor = { kind: 'system', id: 'renewals' }
/** Work due at a time: activations after a trial, resumptions, cancellations at period end, reminders. */
export const DUE_WORK: Actor = { kind: 'system', id: 'due_work' }
/** An operator at the service's command line (`npm run cli -- import`), with the database's own access. */
export const COMMAND_LINE: Actor = { kind: 'system', id: 'command_line' }
/** BigCommerce, through the order webhooks it sends. */
export const PLATFORM_ORDERS: Actor = { kind: 'platform', label: 'BigCommerce order webhook' }
