import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify'

/**
 * A POST whose body fields are all optional accepts no body at all, as `{}` (docs/contract.md, Edges
 * every route keeps): a client that has nothing to say sends nothing, whichever route it is. Decided
 * once per route from its body schema when the route is added, so no route can forget it.
 */
export function acceptMissingOptionalBodies(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const body = (route.schema as { body?: unknown } | undefined)?.body
    if (!body || !everyFieldOptional(body)) return
    // Only an absent body: a JSON `null` is a body, and the schema says whether it may be one.
    const asEmpty = async (request: FastifyRequest) => {
      if (request.body === undefined) request.body = {}
    }
    const earlier = route.preValidation === undefined ? [] : Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation]
    route.preValidation = [asEmpty, ...earlier]
  })
}

/**
 * An object schema with no required field, or a union (a nullable body) holding one. A body that must
 * name at least one field (`minProperties`, a PATCH: a change that changes nothing is refused) is not.
 */
export function everyFieldOptional(schema: unknown): boolean {
  if (schema === null || typeof schema !== 'object') return false
  const s = schema as { type?: unknown; required?: unknown; minProperties?: unknown; anyOf?: unknown; oneOf?: unknown }
  const union = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined
  if (union) return union.some(everyFieldOptional)
  const needsAField = typeof s.minProperties === 'number' && s.minProperties > 0
  return s.type === 'object' && (!Array.isArray(s.required) || s.required.length === 0) && !needsAField
}
