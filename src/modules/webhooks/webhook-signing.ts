import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto'

/** `whsec_` + base64 of 32 random bytes (docs/contract.md, Resources): what Standard Webhooks receivers expect. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

// Decoding a secret and importing it as a key costs more than the HMAC itself; endpoints are few and
// their secrets long-lived, so keep the keys. node:crypto with an imported KeyObject signs a 1.3 KB body
// in ~2 µs where standardwebhooks' pure-JS SHA-256 took ~12 µs; the bytes signed and the output are the
// same (test/unit/webhook-signing.test.ts checks them against standardwebhooks).
const keys = new Map<string, KeyObject>()
const MAX_KEYS = 10_000

function keyFor(secret: string): KeyObject {
  let key = keys.get(secret)
  if (!key) {
    if (keys.size >= MAX_KEYS) keys.clear()
    // As standardwebhooks reads it: the base64 after the `whsec_` prefix.
    key = createSecretKey(Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64'))
    keys.set(secret, key)
  }
  return key
}

/**
 * The `webhook-signature` header: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` per secret,
 * space-separated, so a receiver holding either secret verifies the delivery during a rotation.
 */
export function signatureHeader(secrets: readonly string[], messageId: string, timestamp: Date, body: string): string {
  const signed = `${messageId}.${Math.floor(timestamp.getTime() / 1000)}.`
  let header = ''
  for (const secret of secrets) {
    header += `${header === '' ? '' : ' '}v1,${createHmac('sha256', keyFor(secret)).update(signed).update(body).digest('base64')}`
  }
  return header
}

export const WEBHOOK_USER_AGENT = 'subscription-billing-webhooks/1'

/**
 * The headers of one delivery attempt, exactly as the dispatcher sends them: the inspector rebuilds an
 * attempt's request from its event id, its time and the signature kept with it, by this same function.
 */
export function deliveryHeaders(messageId: string, attemptedAt: Date, signature: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(attemptedAt.getTime() / 1000)),
    'webhook-signature': signature,
  }
}
