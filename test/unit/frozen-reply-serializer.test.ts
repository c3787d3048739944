/**
 * Replies are serialised by the route's response schema as Fastify would (src/http/frozen-reply-serializer.ts);
 * a frozen body's text is made once and reused, an unfrozen one is serialised on every reply.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import Fastify from 'fastify'
import { frozenAwareSerializerFactory } from '../../src/http/frozen-reply-serializer.ts'

test('frozen bodies are serialised once per route, others every time, both by the schema', async () => {
  const app = Fastify({ schemaController: { compilersFactory: { buildSerializer: frozenAwareSerializerFactory() } } })
  let getterCalls = 0
  const body = { name: 'kept', secret: 'not in the schema' }
  Object.defineProperty(body, 'count', { enumerable: true, get: () => ++getterCalls })
  const frozen = Object.freeze(body)
  const live = { name: 'live', count: 0, secret: 'not in the schema' }
  const schema = { response: { 200: { type: 'object', properties: { name: { type: 'string' }, count: { type: 'integer' } } } } }
  app.get('/frozen', { schema }, async () => frozen)
  app.get('/live', { schema }, async () => {
    live.count += 1
    return live
  })
  const first = await app.inject('/frozen')
  const second = await app.inject('/frozen')
  assert.equal(first.body, '{"name":"kept","count":1}', 'the schema decides what is written')
  assert.equal(second.body, first.body)
  assert.equal(getterCalls, 1, 'the frozen body was serialised once')
  assert.equal((await app.inject('/live')).body, '{"name":"live","count":1}')
  assert.equal((await app.inject('/live')).body, '{"name":"live","count":2}', 'an unfrozen body is serialised again')
  await app.close()
})
