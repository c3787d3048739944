import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import type { Db } from '../db/database.ts'

/** Liveness says the process answers; readiness says it can reach its database. */
export function registerHealth(app: FastifyInstance, db: Db): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }))

  app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
    try {
      await sql`select 1`.execute(db)
      return { status: 'ready' }
    } catch (error) {
      request.log.warn({ err: error }, 'database not reachable')
      return reply.code(503).send({ status: 'unavailable', reason: 'database not reachable' })
    }
  })
}
