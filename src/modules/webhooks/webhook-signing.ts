import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'

/** `whsec_` + base64 of 32 random bytes (docs/contract.md, Resources): what Standard Webhooks receivers expect. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

// Building a signer decodes the key; endpoints are few and their secrets long-lived, so keep them.
const signers = new Map<string, Webhook>()
const MAX_SIGNERS = 10_000

function signerFor(secret: string): Webhook {
  let signer = signers.get(secret)
  if (!signer) {
    if (signers.size >= MAX_SIGNERS) signers.clear()
    signer = new Webhook(secret)
    signers.set(secret, signer)
  }
  return signer
}

/**
 * The `webhook-signature` header: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` per secret,
 * space-separated, so a receiver holding either secret verifies the delivery during a rotation.
 */
export function signatureHeader(secrets: readonly string[], messageId: string, timestamp: Date, body: string): string {
  return secrets.map((secret) => signerFor(secret).sign(messageId, timestamp, body)).join(' ')
}
