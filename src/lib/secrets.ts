import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/** A random token of `bytes` bytes of entropy, URL-safe. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url')
}

/** Hash for high-entropy secrets (API keys, one-time tokens): a fast hash suffices because they cannot be guessed. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex')
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}
