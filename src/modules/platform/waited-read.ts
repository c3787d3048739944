import { AppError } from '../../lib/errors.ts'
import type { PlatformAccess } from './connections.ts'
import { rateLimitWaitMs, type PlatformCall, type PlatformClient } from './platform-client.ts'

/**
 * A read of the platform a person waits on (the portal's stored cards, a product's variants): its
 * answer, or a 503 `platform_unavailable` that says why in words (with `Retry-After` for a rate limit),
 * so the person can retry; nothing is changed either way.
 */

export function platformUnavailable(detail: string, retryAfterSeconds?: number): AppError {
  return new AppError('platform_unavailable', `${detail}; nothing was changed, retry later`, retryAfterSeconds === undefined ? {} : { headers: { 'retry-after': String(retryAfterSeconds) } })
}

/**
 * The body of a 2xx answer (with its status), or `undefined` for 404 (nothing there). `what` names what
 * was asked for ("the stored payment methods"), `scope` the scope a refused token lacks.
 */
export async function waitedRead(client: PlatformClient, access: PlatformAccess, call: PlatformCall, { what, scope }: { what: string; scope: string }): Promise<{ statusCode: number; body: unknown } | undefined> {
  const reply = await client.call(access, call)
  if (!reply.sent) throw platformUnavailable(`BigCommerce could not be reached (${reply.reason})`)
  const { statusCode, body, headers } = reply.answer
  if (statusCode === 429) {
    const waitMs = rateLimitWaitMs(headers)
    throw platformUnavailable('BigCommerce is rate limiting this store', Math.max(1, Math.ceil((waitMs ?? 30_000) / 1000)))
  }
  if (statusCode === 404) return undefined
  if (statusCode === 401 || statusCode === 403) throw platformUnavailable(`BigCommerce refused the store's access token (${statusCode}): the store must be reconnected with the ${scope} scope`)
  if (statusCode < 200 || statusCode >= 300) throw platformUnavailable(`BigCommerce answered ${statusCode} when asked for ${what}`)
  return { statusCode, body }
}
