import type { FastifyInstance, RouteOptions } from 'fastify'
import { problemResponse } from './schemas.ts'

const IdempotencyKeyHeader = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  description: 'Makes a retried POST safe: the same key and body within 24 hours replays the first answer (Idempotent-Replayed: true)',
}
// Blanks around the value are allowed, as the version check (versioning.ts) trims them.
const AcceptVersionHeader = { type: 'string', pattern: '^\\s*v?1\\s*$', description: 'Optional: `1` or `v1`; any other value answers 406' }

type Schema = Record<string, any>

function methodsOf(route: RouteOptions): string[] {
  return Array.isArray(route.method) ? route.method : [route.method]
}

function withHeaders(headers: Schema | undefined, extra: Record<string, Schema>): Schema {
  const base = headers ?? { type: 'object', properties: {} }
  return { ...base, type: 'object', properties: { ...(base.properties ?? {}), ...extra } }
}

/**
 * Every versioned route answers the contract's errors, so every operation declares them: the document
 * then tells the truth for routes added later without anyone remembering to.
 */
export function registerContractDefaults(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const schema = route.schema as Schema | undefined
    if (!route.url.startsWith('/api/v1') || !schema || schema.hide) return
    const methods = methodsOf(route)
    const statuses = [400, 406, 429, 500]
    // A path parameter that names nothing is 404 (error-handler.ts), whatever the route says.
    if (route.url.includes(':')) statuses.push(404)
    const headers: Record<string, Schema> = { 'accept-version': AcceptVersionHeader }
    if (methods.some((m) => m === 'POST' || m === 'PATCH' || m === 'PUT')) statuses.push(413, 415)
    if (methods.includes('POST')) {
      statuses.push(409)
      headers['idempotency-key'] = IdempotencyKeyHeader
    }
    const response: Schema = { ...(schema.response ?? {}) }
    for (const status of statuses) response[status] ??= problemResponse(status)
    route.schema = { ...schema, response, headers: withHeaders(schema.headers, headers) }
  })
}

/** Marks every route of a scope as needing a credential, in the document and in its 401 answer. */
export function requireSecurityScheme(app: FastifyInstance, scheme: string): void {
  app.addHook('onRoute', (route) => {
    const schema = (route.schema ?? {}) as Schema
    if (schema.hide) return
    route.schema = {
      ...schema,
      security: [{ [scheme]: [] }],
      response: { ...(schema.response ?? {}), 401: schema.response?.[401] ?? problemResponse(401) },
    }
  })
}
