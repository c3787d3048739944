import type { FastifyRequest, FastifyServerOptions } from 'fastify'
import { maskCardNumbers } from '../lib/card-data.ts'

/** Query parameters whose values are credentials wherever they appear (`code` and `signed_payload_jwt`: the BigCommerce app callbacks). */
const SECRET_PARAMS = /([?&](?:token|key|api_key|secret|access_token|signature|code|signed_payload_jwt)=)[^&#]*/gi

/** A URL as it may appear in logs: credentials and anything shaped like a card number removed. */
export function safeUrl(url: string): string {
  const redacted = url.replace(SECRET_PARAMS, '$1[redacted]')
  // Card numbers are looked for in the URL as the guard reads its values: percent-decoded, `+` a space.
  const decoded = /[%+]/.test(redacted) ? decodeLoosely(redacted) : redacted
  const masked = maskCardNumbers(decoded)
  return masked === decoded ? redacted : masked
}

/** Percent-decodes escape sequences and reads `+` as a space; bytes that are not UTF-8 stay escaped. */
function decodeLoosely(url: string): string {
  return url.replace(/\+/g, ' ').replace(/(?:%[0-9A-Fa-f]{2})+/g, (escaped) => {
    try {
      return decodeURIComponent(escaped)
    } catch {
      // Not UTF-8 as a whole: decode the ASCII bytes, keep the others escaped.
      return escaped.replace(/%[0-7][0-9A-Fa-f]/g, (byte) => String.fromCharCode(Number.parseInt(byte.slice(1), 16)))
    }
  })
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
