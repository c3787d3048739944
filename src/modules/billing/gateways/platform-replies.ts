import type { PlatformReply } from '../../platform/index.ts'
import { storableText } from '../../../lib/printable-text.ts'
import { titleOf } from './platform-outcomes.ts'

/** Reading the platform client's replies, for the gateway's steps (platform-gateway.ts, platform-checkout.ts). */

export type Redact = (text: string) => string

/** Secrets out, and nothing a database column refuses (the text may quote the platform). */
export function redactor(secrets: string[]): Redact {
  return (text) => storableText(secrets.reduce((out, secret) => (secret ? out.replaceAll(secret, '[redacted]') : out), text))
}

/** Why a reply was not a clear answer, for an outcome. */
export function replyReason(step: string, reply: PlatformReply): string {
  if (!reply.sent) return `${step}: ${reply.reason}`
  const { statusCode, body } = reply.answer
  const said = titleOf(body)
  const waited = reply.rateLimitedFor > 0 ? ` after waiting ${Math.round(reply.rateLimitedFor / 1000)} s for the rate limit` : ''
  return `${step}: the platform answered ${statusCode}${said ? ` (${said})` : ''}${waited}`
}

/** The HTTP status answered, 0 when there was no answer. */
export const statusOf = (reply: PlatformReply): number => (reply.sent ? reply.answer.statusCode : 0)
export const is2xx = (reply: PlatformReply): boolean => statusOf(reply) >= 200 && statusOf(reply) < 300
/** The parsed body of an answer, undefined when there was none. */
export const bodyOf = (reply: PlatformReply): unknown => (reply.sent ? reply.answer.body : undefined)

/** A refusal of our credentials or a missing resource of ours: no retry helps until someone fixes it. */
export const isConfigurationRefusal = (status: number) => status === 401 || status === 403

/** A platform id as the number the reference types it as (`product_id`, `customer_id`, order ids are integers). */
export function platformInt(value: string | null | undefined): number | undefined {
  if (!value || !/^[1-9][0-9]{0,9}$/.test(value)) return undefined
  const n = Number(value)
  return n <= 2_147_483_647 ? n : undefined
}

