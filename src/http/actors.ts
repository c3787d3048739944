import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { StoreRow } from '../db/database.ts'
import { AppError } from '../lib/errors.ts'
import { adminStore } from './admin-auth.ts'

/** Who acts: the merchant through the admin API, a subscriber on their own subscriptions only, or the service itself. */
export type Actor = { kind: 'admin' } | { kind: 'subscriber'; subscriberId: string } | { kind: 'system' }
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
export function adminActor(request: FastifyRequest): { store: StoreRow; actor: Extract<Actor, { kind: 'admin' }> } {
  return { store: adminStore(request), actor: { kind: 'admin' } }
}

/** Picks who acts on a route shared by the admin API and the portal. */
export type ActorOf = (request: FastifyRequest) => { store: StoreRow; actor: Actor }
