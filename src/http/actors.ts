import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { StoreRow } from '../db/database.ts'
import { AppError } from '../lib/errors.ts'
import type { Actor } from './actor-kinds.ts'
import { adminStore } from './admin-auth.ts'

export { COMMAND_LINE, DUE_WORK, PLATFORM_ORDERS, RENEWALS, SYSTEM_ACTORS, type Actor, type SystemActorId } from './actor-kinds.ts'

/** The merchant, through either credential. */
export type MerchantActor = Extract<Actor, { kind: 'admin_key' | 'console' }>

export type SubscriberActor = Extract<Actor, { kind: 'subscriber' }>

/** A verified portal session's claims (src/modules/portal-auth/portal-sessions.ts issues and verifies them). */
export interface PortalSessionClaims {
  /** The subscriber: the only source of who is asking. */
  sub: string
  /** The store the subscriber belongs to. */
  store: string
  jti: string
  iat: number
  exp: number
}

/** Set by the portal's authenticator on every portal route that needs a session. */
export interface PortalContext {
  subscriberId: string
  store: StoreRow
  session: PortalSessionClaims
}

declare module 'fastify' {
  interface FastifyRequest {
    portal: PortalContext | null
  }
}

export function registerPortalContext(app: FastifyInstance): void {
  app.decorateRequest('portal', null)
}

/** The signed-in subscriber and their store; only on routes behind the portal authenticator. */
export function portalActor(request: FastifyRequest): { store: StoreRow; actor: SubscriberActor } {
  if (!request.portal) throw new AppError('unauthenticated', 'this route needs a portal session')
  return { store: request.portal.store, actor: { kind: 'subscriber', subscriberId: request.portal.subscriberId } }
}

/** The merchant and their store; only on routes behind the admin authenticator. */
export function adminActor(request: FastifyRequest): { store: StoreRow; actor: MerchantActor } {
  const store = adminStore(request)
  const admin = request.admin!
  if (admin.via === 'console_session') return { store, actor: { kind: 'console', sessionId: admin.sessionId ?? admin.keyId } }
  return { store, actor: { kind: 'admin_key', keyId: admin.keyId, keyName: admin.keyName ?? admin.keyId } }
}

/** Picks who acts on a route shared by the admin API and the portal. */
export type ActorOf = (request: FastifyRequest) => { store: StoreRow; actor: Actor }
