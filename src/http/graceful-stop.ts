import type { Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { AppError } from '../lib/errors.ts'
import { sendProblem } from './error-handler.ts'

// How often a stop looks again at requests whose client hung up while they ran.
const DRAIN_POLL_MS = 10
// The set of running requests is swept of hung-up requests that have ended whenever it doubles.
const SWEEP_FLOOR = 1024

interface ConnectionCount {
  active: number
}
const COUNTED_ON = Symbol('graceful-stop.countedOn')
type CountedReply = FastifyReply & { [COUNTED_ON]: ConnectionCount | null }

/**
 * Stopping without cutting work off (docs/contract.md, Running it). Fastify's close stops listening and
 * waits for open connections, which is not enough on its own:
 *   - a request whose client hung up has no connection left, but its handler still runs and still
 *     has database work ahead of it; closing the database under it fails that work half-way;
 *   - a keep-alive connection stays open after its last answer, and a connection a client opened
 *     without sending anything yet (browsers and proxies open them ahead) stays open too; Node's
 *     server waits for both until a timeout longer than any shutdown deadline.
 * So from the moment close starts, a request that arrives is refused with 503 service_unavailable
 * (problem+json, `Connection: close`); every answer still to come carries `Connection: close`; a
 * connection with no request running is closed at once, or as soon as its last answer is written;
 * and the app's close resolves only once every request that started has run to its end, whether or
 * not anyone still waits for its answer. The caller closes the database after that (src/server.ts).
 *
 * Register it before any hook that may answer or do work, and before whatever closes what requests
 * use (onClose hooks run in reverse order of registration, so this one runs after those added later).
 */
export function registerGracefulStop(app: FastifyInstance): void {
  const running = new Set<FastifyReply>()
  // Every open connection of the server, with how many of its requests are running; each running
  // request holds the count of its connection (COUNTED_ON), changed in place: this is on every
  // request's path, where a WeakMap from request to connection cost more than the rest of the hook.
  const connections = new Map<Socket, ConnectionCount>()
  app.decorateReply(COUNTED_ON, null)
  let closing = false
  let sweepAt = SWEEP_FLOOR

  // A request has run to its end once its answer was written, even to a connection that is gone.
  const sweep = () => {
    for (const reply of running) if (reply.sent) running.delete(reply)
  }
  // Ends every connection with no request running; what was written on it is flushed first.
  const closeIdleConnections = () => {
    for (const [socket, count] of connections) {
      if (count.active === 0 && !socket.destroyed) socket.end(() => socket.destroy())
    }
  }

  app.server.on('connection', (socket: Socket) => {
    connections.set(socket, { active: 0 })
    socket.once('close', () => connections.delete(socket))
  })

  app.addHook('onRequest', (request, reply, done) => {
    if (closing) {
      reply.header('connection', 'close')
      sendProblem(request, reply, new AppError('service_unavailable', 'the service is shutting down; retry shortly (another instance will answer)'))
      return
    }
    running.add(reply)
    const count = connections.get(request.raw.socket)
    if (count) {
      count.active += 1
      ;(reply as CountedReply)[COUNTED_ON] = count
    }
    if (running.size >= sweepAt) {
      sweep()
      sweepAt = Math.max(SWEEP_FLOOR, running.size * 2)
    }
    done()
  })

  app.addHook('onResponse', (_request, reply, done) => {
    running.delete(reply)
    // A sweep may have dropped the request already (its answer was written): its count still ends here.
    const count = (reply as CountedReply)[COUNTED_ON]
    if (count) {
      ;(reply as CountedReply)[COUNTED_ON] = null
      count.active -= 1
    }
    // The connection may just have gone idle: close it now rather than at the keep-alive timeout.
    if (closing) setImmediate(closeIdleConnections)
    done()
  })

  app.addHook('preClose', (done) => {
    closing = true
    for (const reply of running) if (!reply.sent) reply.header('connection', 'close')
    closeIdleConnections()
    done()
  })

  app.addHook('onClose', async () => {
    for (;;) {
      sweep()
      if (running.size === 0) return
      await sleep(DRAIN_POLL_MS)
    }
  })
}
