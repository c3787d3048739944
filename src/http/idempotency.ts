import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { createHash } from 'node:crypto'
import type { Db } from '../db/database.ts'
import { canonicalJson } from '../lib/canonical-json.ts'
import { AppError, type ErrorCode } from '../lib/errors.ts'

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000
/** How long a request may hold its key before a crash is assumed and a retry may run it. */
const LEASE_MS = 60_000
const WAIT_FOR_FIRST_MS = 5_000
const POLL_MS = 25

/**
 * Refusals that are about the moment, not the request: the same request succeeds once the condition
 * passes (the wait ends; the merchant switches the store's billing back on), so replaying them for
 * 24 hours would keep refusing a request that is now fine. Like a 5xx, they are not kept.
 */
const NOT_KEPT: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['rate_limited', 'billing_disabled'])

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: { scope: string; key: string } | null
  }
}

interface Options {
  db: Db
  /** Who owns a key: the store behind the admin credential, or the caller's address when anonymous. */
  scopeOf: (request: FastifyRequest) => string
}

/**
 * `Idempotency-Key` on POST: the first request's response is kept for 24 hours and replayed for the
 * same key and body; the same key with another body is a conflict. A second request arriving while
 * the first runs waits for its answer rather than running the operation again.
 */
export function registerIdempotency(app: FastifyInstance, { db, scopeOf }: Options): void {
  app.decorateRequest('idempotency', null)

  // Both hooks run on every request and are synchronous until there is a key to claim or an answer
  // to record: an async hook would cost every other request a promise.
  app.addHook('preHandler', (request, reply, done) => {
    const key = request.headers['idempotency-key']
    if (request.method !== 'POST' || typeof key !== 'string' || request.routeOptions.config.idempotentReplay === false) return done()
    claimOrReplay(request, reply, key).then(() => done(), done)
  })

  async function claimOrReplay(request: FastifyRequest, reply: FastifyReply, key: string): Promise<void> {
    const scope = scopeOf(request)
    const hash = requestHash(request)
    const deadline = Date.now() + WAIT_FOR_FIRST_MS

    for (;;) {
      const now = new Date()
      const claimed = await db
        .insertInto('idempotency_keys')
        .values({ scope, key, request_hash: hash, locked_until: new Date(now.getTime() + LEASE_MS), created_at: now })
        .onConflict((oc) =>
          // An expired record, or one whose request died holding it, may be taken over.
          oc.columns(['scope', 'key']).doUpdateSet({
            request_hash: hash,
            locked_until: new Date(now.getTime() + LEASE_MS),
            created_at: now,
            response_status: null,
            response_body: null,
            response_content_type: null,
          }).where((eb) =>
            eb.or([
              eb('idempotency_keys.created_at', '<', new Date(now.getTime() - IDEMPOTENCY_TTL_MS)),
              eb.and([eb('idempotency_keys.response_status', 'is', null), eb('idempotency_keys.locked_until', '<', now), eb('idempotency_keys.request_hash', '=', hash)]),
            ]),
          ),
        )
        .returning('key')
        .executeTakeFirst()
      if (claimed) {
        request.idempotency = { scope, key }
        return
      }

      const existing = await db
        .selectFrom('idempotency_keys')
        .select(['request_hash', 'response_status', 'response_body', 'response_content_type'])
        .where('scope', '=', scope)
        .where('key', '=', key)
        .executeTakeFirst()
      if (!existing) continue
      if (existing.request_hash !== hash) {
        throw new AppError('idempotency_conflict', 'this Idempotency-Key was used with a different request; use a new key for a new request')
      }
      if (existing.response_status !== null) {
        reply.code(existing.response_status).header('idempotent-replayed', 'true')
        if (existing.response_content_type) reply.type(existing.response_content_type)
        reply.send(existing.response_body ?? undefined)
        return
      }
      if (Date.now() >= deadline) {
        throw new AppError('idempotency_conflict', 'a request with this Idempotency-Key is still being processed; retry shortly')
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    }
  }

  app.addHook('onSend', (request, reply, payload, done) => {
    const claim = request.idempotency
    if (!claim) return done(null, payload)
    request.idempotency = null
    record(request, reply, claim, payload).then(() => done(null, payload))
  })

  async function record(request: FastifyRequest, reply: FastifyReply, claim: { scope: string; key: string }, payload: unknown): Promise<void> {
    try {
      if (reply.statusCode >= 500 || reply.statusCode === 429 || (request.problemCode !== null && NOT_KEPT.has(request.problemCode))) {
        // A server failure is not an answer, nor is "too soon, retry after" or "billing is switched off": let the client retry with the same key.
        await db.deleteFrom('idempotency_keys').where('scope', '=', claim.scope).where('key', '=', claim.key).execute()
      } else {
        await db
          .updateTable('idempotency_keys')
          .set({
            response_status: reply.statusCode,
            response_body: typeof payload === 'string' ? payload : payload == null ? null : String(payload),
            response_content_type: String(reply.getHeader('content-type') ?? '') || null,
          })
          .where('scope', '=', claim.scope)
          .where('key', '=', claim.key)
          .execute()
      }
    } catch (error) {
      request.log.error({ err: error }, 'could not record the idempotent response')
    }
  }
}

function requestHash(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method} ${request.url}\n`)
    .update(canonicalJson(request.body ?? null))
    .digest('hex')
}

/** Drops records older than the replay window; run periodically. */
export async function purgeExpiredIdempotencyKeys(db: Db, now = new Date()): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<', new Date(now.getTime() - IDEMPOTENCY_TTL_MS))
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
