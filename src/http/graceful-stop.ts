import type { Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { AppError } from '../lib/errors.ts'
import { sendProblem } from './error-handler.ts'

// How often a stop looks again at requests whose client hung up while they ran.
const DRAIN_POLL_MS = 10
// The set of running requests is swept of hung-up requests that have ended whenever it doubles.
const SWEEP_FLOOR = 1024

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
  // Every open connection of the server, with how many of its requests are running; and the connection each running request counts on.
  const connections = new Map<Socket, number>()
  const countedOn = new WeakMap<FastifyReply, Socket>()
  let closing = false
  let sweepAt = SWEEP_FLOOR

  // A request has run to its end once its answer was written, even to a connection that is gone.
  const sweep = () => {
    for (const reply of running) if (reply.sent) running.delete(reply)
  }
  // Ends every connection with no request running; what was written on it is flushed first.
  const closeIdleConnections = () => {
    for (const [socket, active] of connections) {
      if (active === 0 && !socket.destroyed) socket.end(() => socket.destroy())
    }
  }

  app.server.on('connection', (socket: Socket) => {
    connections.set(socket, 0)
    socket.once('close', () => connections.delete(socket))
  })

  app.addHook('onRequest', (request, reply, done) => {
    if (closing) {
      reply.header('connection', 'close')
      sendProblem(request, reply, new AppError('service_unavailable', 'the service is shutting down; retry shortly (another instance will answer)'))
      return
    }
    running.add(reply)
    const socket = request.raw.socket
    const active = connections.get(socket)
    if (active !== undefined) {
      connections.set(socket, active + 1)
      countedOn.set(reply, socket)
    }
    if (running.size >= sweepAt) {
      sweep()
      sweepAt = Math.max(SWEEP_FLOOR, running.size * 2)
    }
    done()
  })

  app.addHook('onResponse', (_request, reply, done) => {
    running.delete(reply)
    const socket = countedOn.get(reply)
    if (socket) {
      countedOn.delete(reply)
      const active = connections.get(socket)
      if (active !== undefined) connections.set(socket, active - 1)
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
