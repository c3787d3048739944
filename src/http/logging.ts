import type { FastifyRequest, FastifyServerOptions } from 'fastify'
import { maskCardNumbers } from '../lib/card-data.ts'

/** Query parameters whose values are credentials wherever they appear. */
const SECRET_PARAMS = /([?&](?:token|key|api_key|secret|access_token|signature)=)[^&#]*/gi

/** A URL as it may appear in logs: credentials and anything shaped like a card number removed. */
export function safeUrl(url: string): string {
  return maskCardNumbers(url.replace(SECRET_PARAMS, '$1[redacted]'))
}

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["idempotency-key"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.secret',
  '*.token',
  '*.access_token',
  '*.api_key',
  '*.apiKey',
  '*.adminApiKey',
  '*.key',
]

/** Pino as Fastify runs it, with requests logged without credentials, secrets or card data. */
export function loggerOptions(level: string): NonNullable<FastifyServerOptions['logger']> {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: {
      req: (request: FastifyRequest) => ({
        id: request.id,
        method: request.method,
        url: safeUrl(request.url),
        remoteAddress: request.ip,
      }),
    },
  }
}
