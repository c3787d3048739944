import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

const ACCEPTABLE = /^[A-Za-z0-9._-]{1,128}$/

/** Echoes a caller's request id when it is safe to log and return, otherwise makes one. */
export function requestIdFor(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id']
  return typeof incoming === 'string' && ACCEPTABLE.test(incoming) ? incoming : `req_${randomUUID().replaceAll('-', '')}`
}
