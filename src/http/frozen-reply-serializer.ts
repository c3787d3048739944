import SerializerSelector from '@fastify/fast-json-stringify-compiler'

/**
 * Fastify's own response serialisers (fast-json-stringify, from the route's response schema), with
 * one addition: a frozen reply body is serialised once per route and status and the text reused.
 *
 * Why: list pages that concurrent readers share (src/modules/subscriptions/first-page-batcher.ts) are
 * one frozen object sent in many replies; serialising 20 subscriptions again for each reply was a
 * large part of the admin list's CPU (BENCHMARKS.md, Portal). Frozen means the service promised not to
 * change the object, so the text cannot go stale; anything not frozen is serialised as before.
 * Response validation (tests) still checks each reply's object, since it runs before serialisation.
 */
export function frozenAwareSerializerFactory(): SerializerSelector.SerializerFactory {
  const base = SerializerSelector()
  return (externalSchemas, options) => {
    const compile = base(externalSchemas, options)
    return (route) => {
      const serialize = compile(route)
      const texts = new WeakMap<object, string>()
      return (body: unknown) => {
        if (body === null || typeof body !== 'object' || !Object.isFrozen(body)) return serialize(body)
        let text = texts.get(body)
        if (text === undefined) {
          text = serialize(body)
          texts.set(body, text)
        }
        return text
      }
    }
  }
}
