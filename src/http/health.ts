import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import type { Db } from '../db/database.ts'

/**
 * Liveness says the process answers; readiness says it can reach its database. Neither is ever
 * rate-limited (docs/contract.md, Bodies and rate limits): a load balancer polling from one address
 * must never take the service out of rotation because of the limit.
 */
export function registerHealth(app: FastifyInstance, db: Db): void {
  app.get('/healthz', { schema: { hide: true }, config: { rateLimit: false } }, async () => ({ status: 'ok' }))

  app.get('/readyz', { schema: { hide: true }, config: { rateLimit: false } }, async (request, reply) => {
    try {
      await sql`select 1`.execute(db)
      return { status: 'ready' }
    } catch (error) {
      request.log.warn({ err: error }, 'database not reachable')
      return reply.code(503).send({ status: 'unavailable', reason: 'database not reachable' })
    }
  })
}
