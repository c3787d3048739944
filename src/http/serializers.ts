import type SerializerSelector from '@fastify/fast-json-stringify-compiler'

/**
 * Fastify's response serialisers (its default factory, `@fastify/fast-json-stringify-compiler`'s
 * SerializerSelector), each compiled when its route and status first answer rather than when the app
 * is assembled (the same reason as compileOnFirstUse in src/http/ajv.ts: ~45% of the schema
 * compilation at every start). The compiled serialiser is the factory's own, unchanged.
 */
export function serializeOnFirstUse(factory: SerializerSelector.SerializerFactory): SerializerSelector.SerializerFactory {
  return (externalSchemas, options) => {
    const compile = factory(externalSchemas, options)
    return (route) => {
      let serialize: ((body: unknown) => string) | undefined
      return (body: unknown) => (serialize ??= compile(route))(body)
    }
  }
}
