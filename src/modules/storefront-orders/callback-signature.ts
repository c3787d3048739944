import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import type { Clock } from '../../lib/clock.ts'

/** The Standard Webhooks rule: a callback signed more than this far from now is refused (a replay, or a clock badly off). */
export const SIGNATURE_TOLERANCE_SECONDS = 5 * 60

/**
 * Checks a platform callback's Standard Webhooks signature (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`; HMAC-SHA256 under the app's client secret, which the scheme takes base64
 * encoded) with the `standardwebhooks` package. Answers undefined when the callback carries no
 * signature, false when it is wrong or its timestamp is outside the tolerance, true otherwise.
 *
 * The package checks the timestamp against the process's wall clock; the window is checked first
 * against the injected clock too, so the rule holds (and is tested) in the service's own time.
 */
export function callbackSignatureChecker(clientSecret: string, clock: Clock) {
  const webhook = new Webhook(Buffer.from(clientSecret, 'utf8').toString('base64'))
  return (headers: Record<string, string | string[] | undefined>, rawBody: Buffer): boolean | undefined => {
    const id = headers['webhook-id']
    const timestamp = headers['webhook-timestamp']
    const signature = headers['webhook-signature']
    if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signature !== 'string') return undefined
    const sentAt = /^\d{1,12}$/.test(timestamp) ? Number(timestamp) : Number.NaN
    if (!(Math.abs(clock.now().getTime() / 1000 - sentAt) <= SIGNATURE_TOLERANCE_SECONDS)) return false
    try {
      webhook.verify(rawBody, { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature }, { jsonParse: false })
      return true
    } catch (error) {
      if (error instanceof WebhookVerificationError) return false
      throw error
    }
  }
}
