import type { FastifyBaseLogger } from 'fastify'
import type { Db, Executor } from '../../db/database.ts'
import { enqueue } from '../../jobs/job-kinds.ts'
import type { Clock } from '../../lib/clock.ts'
import { AppError } from '../../lib/errors.ts'
import type { Mailer } from '../../lib/mailer.ts'
import { randomToken, sha256Hex } from '../../lib/secrets.ts'
import { findStoreByHash } from '../stores/index.ts'
import { findSubscriberIdByEmail } from '../subscriptions/index.ts'
import { magicLinkEmail } from './magic-link-email.ts'
import { SendMagicLink } from './portal-auth.jobs.ts'
import { insertRevokedSession, insertSignInToken, useSignInToken } from './portal-auth.repository.ts'
import { SESSION_TTL_SECONDS, type PortalSessions, type SessionClaims } from './portal-sessions.ts'

export const MAGIC_LINK_TTL_MS = 15 * 60_000
// 32 bytes: 256 bits of entropy, far past guessing.
const TOKEN_BYTES = 32

export interface LinkRequest {
  store_hash: string
  email: string
}

export interface SessionAnswer {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
}

/**
 * Asking for a link does the same thing whoever asks: it queues one job. Whether the email belongs to
 * a subscriber is only looked at in the background, so neither the answer nor its timing tells.
 */
export async function requestMagicLink(db: Executor, request: LinkRequest): Promise<void> {
  // The store (public, unlike whether the email is a subscriber's) puts the job in its store's lane of the
  // queue, so one store's flood of sign-ins never delays another's links; a hash of no store gets none.
  const store = await findStoreByHash(db, request.store_hash)
  await enqueue(db, SendMagicLink, { store_hash: request.store_hash, email: request.email.toLowerCase() }, store ? { storeId: store.id } : {})
}

/** The background half: a token for a known subscriber, stored as a hash, and the email that carries it. */
export function createMagicLinkSender({ db, clock, mailer, portalUrl, log }: { db: Db; clock: Clock; mailer: Mailer; portalUrl: () => string; log: FastifyBaseLogger }) {
  return async function sendMagicLink({ store_hash: storeHash, email }: { store_hash: string; email: string }): Promise<void> {
    const store = await findStoreByHash(db, storeHash)
    const subscriberId = store ? await findSubscriberIdByEmail(db, store.id, email) : undefined
    if (!store || !subscriberId) {
      log.debug('sign-in link asked for an email with no subscriber: nothing sent')
      return
    }
    // A retry after a failed send makes a fresh token; the unsent one expires unused.
    const token = randomToken(TOKEN_BYTES)
    await insertSignInToken(db, { tokenHash: sha256Hex(token), storeId: store.id, subscriberId, expiresAt: new Date(clock.now().getTime() + MAGIC_LINK_TTL_MS) })
    const link = new URL('login', withTrailingSlash(portalUrl()))
    link.searchParams.set('token', token)
    // The page the link opens shows the store's name before the subscriber signs in.
    link.searchParams.set('store', store.store_hash)
    await mailer.send(magicLinkEmail({ to: email, storeName: store.name, link: link.toString(), validMinutes: MAGIC_LINK_TTL_MS / 60_000 }))
  }
}

/**
 * How long the sign-in link of a notification email works (docs/contract.md, Subscriber emails): the
 * subscriber did not ask for it and reads it when they read their mail, perhaps after a weekend, so
 * 15 minutes would leave most links dead; 72 hours covers a weekend and stays single-use.
 */
export const EMAIL_LINK_TTL_MS = 72 * 3_600_000

/** Where the portal goes once the link signed the subscriber in. */
export interface PortalLinkTarget {
  subscriptionId: string
  /** `payment-instrument` opens the payment method change; `skip` the subscription's skip. */
  action?: 'payment-instrument' | 'skip'
}

/**
 * A one-time sign-in link for an email the service sends on its own (not asked for): a token of 256
 * bits stored only as its hash, like a requested link, valid for EMAIL_LINK_TTL_MS; the portal opens
 * `target` after the subscriber presses Sign in.
 */
export async function issueEmailSignInLink(
  db: Executor,
  { now, storeId, storeHash, subscriberId, portalUrl, target }: { now: Date; storeId: string; storeHash: string; subscriberId: string; portalUrl: string; target: PortalLinkTarget },
): Promise<string> {
  const token = randomToken(TOKEN_BYTES)
  await insertSignInToken(db, { tokenHash: sha256Hex(token), storeId, subscriberId, expiresAt: new Date(now.getTime() + EMAIL_LINK_TTL_MS) })
  const link = new URL('login', withTrailingSlash(portalUrl))
  link.searchParams.set('token', token)
  link.searchParams.set('store', storeHash)
  link.searchParams.set('subscription', target.subscriptionId)
  if (target.action) link.searchParams.set('action', target.action)
  return link.toString()
}

function withTrailingSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`
}

/** Exchanges a one-time token for a session. The conditional update is the single use: of two racing verifies, one wins. */
export async function verifyMagicLink(db: Db, clock: Clock, sessions: PortalSessions, token: string): Promise<SessionAnswer> {
  const now = clock.now()
  const used = await useSignInToken(db, sha256Hex(token), now)
  if (!used) throw new AppError('invalid_token', 'this sign-in link is not valid: it was used, has expired or never existed; ask for a new one')
  const session = await sessions.issue(used.subscriber_id, used.store_id)
  return { access_token: session.token, token_type: 'Bearer', expires_in: SESSION_TTL_SECONDS }
}

/** Signs a session out before it expires; the row is kept only as long as the token could be used. */
export function revokeSession(db: Executor, claims: Pick<SessionClaims, 'jti' | 'exp'>): Promise<void> {
  return insertRevokedSession(db, { jti: claims.jti, expiresAt: new Date(claims.exp * 1000) })
}
