import type { ColumnType, Generated } from 'kysely'
import type { Timestamp, NullableTimestamp } from '../../db/column-types.ts'

/** The tables this part of the service owns, as Kysely sees them (assembled into the database type in src/db/database.ts). */

export type WebhookStatus = 'enabled' | 'disabled'

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed'

export interface WebhookSubscriptionsTable {
  id: string
  store_id: string
  url: string
  event_types: ColumnType<string[], string[], string[]>
  description: string | null
  status: WebhookStatus
  disabled_reason: string | null
  secret: string
  previous_secret: string | null
  previous_secret_expires_at: NullableTimestamp
  failing_since: NullableTimestamp
  created_at: Timestamp
  updated_at: Timestamp
}

export interface WebhookDeliveriesTable {
  id: string
  store_id: string
  webhook_subscription_id: string
  event_id: string
  event_type: string
  entity_id: string
  event_position: ColumnType<number, number | string, number | string>
  status: DeliveryStatus
  attempts: Generated<number>
  next_attempt_at: NullableTimestamp
  locked_until: NullableTimestamp
  lease_token: string | null
  last_status_code: number | null
  last_error: string | null
  created_at: Timestamp
  updated_at: Timestamp
  delivered_at: NullableTimestamp
  /** A first-attempt success kept on the delivery instead of a webhook_attempts row: its latency (null otherwise). */
  delivered_latency_ms: ColumnType<number | null, number | null | undefined, number | null>
  /** ... and the first KiB of its answer. */
  delivered_response_body: ColumnType<string | null, string | null | undefined, string | null>
  /** ... the real time it was sent (its webhook-timestamp; delivered_at may be on a test store's clock) ... */
  delivered_sent_at: NullableTimestamp
  /** ... and the webhook-signature it carried (migration 0029). */
  delivered_request_signature: ColumnType<string | null, string | null | undefined, string | null>
}

export interface WebhookAttemptsTable {
  id: Generated<number>
  delivery_id: string
  attempted_at: Timestamp
  status_code: number | null
  latency_ms: number
  error: string | null
  /** The first KiB of the answer (at most 1,024 bytes stored). */
  response_body: string | null
  /** The real time the request was sent (its webhook-timestamp); null when nothing was sent, or before migration 0029. */
  sent_at: NullableTimestamp
  /** The webhook-signature header sent; null when nothing was sent, or before migration 0029. */
  request_signature: ColumnType<string | null, string | null | undefined, string | null>
}
