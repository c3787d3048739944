import type { WebhookAttemptRow, WebhookDeliveryRow, WebhookSubscriptionRow } from '../../db/database.ts'
import { toRfc3339, toRfc3339OrNull } from '../../lib/time.ts'
import { deliveryHeaders } from './webhook-signing.ts'
import { HIDDEN_SIGNATURE, type WebhookDeliveryDetailView, type WebhookDeliveryView, type WebhookSubscriptionView } from './webhook.schemas.ts'

/** Attempts shown per delivery. */
export const ATTEMPTS_SHOWN = 20

export function presentWebhookSubscription(row: WebhookSubscriptionRow): WebhookSubscriptionView {
  return {
    id: row.id,
    object: 'webhook_subscription',
    url: row.url,
    event_types: row.event_types,
    description: row.description,
    status: row.status,
    disabled_reason: row.disabled_reason,
    created_at: toRfc3339(row.created_at),
    updated_at: toRfc3339(row.updated_at),
  }
}

/**
 * A delivery as the merchant reads it. `storeClockOffsetMs` is how far the store's clock stands from
 * real time (0 for a real store): the next attempt is due in real time, and shown at its real distance
 * from the store's now, as the health's next_retry_at, so a test store's page reads one clock.
 */
export function presentDelivery(row: WebhookDeliveryRow, attempts: WebhookAttemptRow[], storeClockOffsetMs = 0): WebhookDeliveryView {
  return {
    id: row.id,
    object: 'webhook_delivery',
    webhook_subscription_id: row.webhook_subscription_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.status === 'pending' && row.next_attempt_at !== null ? toRfc3339(new Date(row.next_attempt_at.getTime() + storeClockOffsetMs)) : null,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    created_at: toRfc3339(row.created_at),
    delivered_at: toRfc3339OrNull(row.delivered_at),
    attempt_log: attemptLog(row, attempts),
  }
}

/**
 * The attempts, newest first: the rows of webhook_attempts, and a first attempt that succeeded, which
 * the dispatcher keeps on the delivery row itself (delivered_latency_ms set). That one is always the
 * newest: the row only gets another attempt after a redelivery, which moves it to webhook_attempts.
 */
function attemptLog(row: WebhookDeliveryRow, attempts: WebhookAttemptRow[]): WebhookDeliveryView['attempt_log'] {
  const log: WebhookDeliveryView['attempt_log'] = []
  if (row.delivered_latency_ms !== null && row.delivered_at !== null) {
    log.push({ attempted_at: toRfc3339(row.delivered_at), status_code: row.last_status_code, latency_ms: row.delivered_latency_ms, error: null, response_body: row.delivered_response_body })
  }
  for (const attempt of attempts) {
    if (log.length >= ATTEMPTS_SHOWN) break
    log.push({
      attempted_at: toRfc3339(attempt.attempted_at),
      status_code: attempt.status_code,
      latency_ms: attempt.latency_ms,
      error: attempt.error,
      response_body: attempt.response_body,
    })
  }
  return log
}

/**
 * The delivery inspector's view: the body every attempt sent (the stored event) and each attempt's
 * request headers as sent, rebuilt by the dispatcher's own deliveryHeaders from the real time it was
 * sent and the signature kept with it. Neither holds the secret; without `showSignatures` (a
 * read_only key) the signature is replaced by HIDDEN_SIGNATURE.
 */
export function presentDeliveryDetail(
  row: WebhookDeliveryRow,
  attempts: WebhookAttemptRow[],
  payload: string,
  { showSignatures, storeClockOffsetMs = 0 }: { showSignatures: boolean; storeClockOffsetMs?: number },
): WebhookDeliveryDetailView {
  const headers = (sentAt: Date | null, signature: string | null) =>
    sentAt && signature ? (deliveryHeaders(row.event_id, sentAt, showSignatures ? signature : HIDDEN_SIGNATURE) as WebhookDeliveryDetailView['attempt_log'][number]['request_headers']) : null
  const sent: WebhookDeliveryDetailView['attempt_log'][number]['request_headers'][] = []
  if (row.delivered_latency_ms !== null && row.delivered_at !== null) sent.push(headers(row.delivered_sent_at, row.delivered_request_signature))
  for (const attempt of attempts) sent.push(headers(attempt.sent_at, attempt.request_signature))
  const view = presentDelivery(row, attempts, storeClockOffsetMs)
  return { ...view, request_body: payload, attempt_log: view.attempt_log.map((attempt, i) => ({ ...attempt, request_headers: sent[i] ?? null })) }
}
