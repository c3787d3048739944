import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { describe, it } from 'node:test'
import Fastify from 'fastify'
import pino from 'pino'
import { lazyRequestLogger, loggerOptions } from '../../src/http/logging.ts'

function capture(level: string) {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(JSON.parse(String(chunk)))
      callback()
    },
  })
  return { lines, logger: pino({ ...(loggerOptions(level) as object), base: null, timestamp: false }, stream) }
}

describe('request loggers made on first write', () => {
  it('write what an eager pino child writes, bindings and redaction included', () => {
    const eager = capture('info')
    const lazy = capture('info')
    const bindings = { reqId: 'req_abc' }
    eager.logger.child(bindings, {}).info({ user: { password: 'hunter2' }, n: 1 }, 'hello')
    lazyRequestLogger(lazy.logger, bindings, {}).info({ user: { password: 'hunter2' }, n: 1 }, 'hello')
    assert.deepEqual(lazy.lines, eager.lines)
    assert.equal(lazy.lines[0]!.reqId, 'req_abc')
    assert.deepEqual(lazy.lines[0]!.user, { password: '[redacted]' })
  })

  it('keep the level of the logger, or the one given for the route', () => {
    const { lines, logger } = capture('warn')
    const request = lazyRequestLogger(logger, { reqId: 'a' }, {})
    assert.equal(request.level, 'warn')
    request.info('not written')
    request.warn('written')
    const debugRoute = lazyRequestLogger(logger, { reqId: 'b' }, { level: 'debug' })
    assert.equal(debugRoute.level, 'debug')
    debugRoute.debug('written too')
    debugRoute.trace('not written')
    assert.deepEqual(lines.map((line) => [line.reqId, line.msg]), [['a', 'written'], ['b', 'written too']])
  })

  it('make children and take level changes like a pino child', () => {
    const { lines, logger } = capture('warn')
    const request = lazyRequestLogger(logger, { reqId: 'c' }, {})
    request.level = 'info'
    request.info('now written')
    request.child({ step: 2 }).warn('from a child')
    assert.deepEqual(lines.map((line) => [line.reqId, line.step, line.msg]), [['c', undefined, 'now written'], ['c', 2, 'from a child']])
  })

  it('serve as Fastify request loggers', async () => {
    const { lines, logger } = capture('info')
    const app = Fastify({ loggerInstance: logger, childLoggerFactory: lazyRequestLogger })
    app.get('/', async (request) => {
      request.log.warn('in the handler')
      return { ok: true }
    })
    const response = await app.inject({ method: 'GET', url: '/' })
    await app.close()
    assert.equal(response.statusCode, 200)
    const ids = new Set(lines.map((line) => line.reqId))
    assert.equal(ids.size, 1)
    assert.deepEqual(lines.map((line) => line.msg), ['incoming request', 'in the handler', 'request completed'])
  })
})
