import { Type } from 'typebox'
import type { FastifyRequest } from 'fastify'
import { jsonNestingExceeds } from '../../http/json-body.ts'
import { rateLimitKey } from '../../http/rate-limit-key.ts'
import type { App } from '../../http/types.ts'
import { AppError } from '../../lib/errors.ts'
import { WEBHOOK_PATH, WEBHOOK_SECRET_HEADER, type OrderWebhookPayload, type OrderWebhooks } from './order-webhooks.service.ts'

/**
 * `POST /platform/webhooks`: BigCommerce's order callbacks (docs/platform-api.md §7.3), outside
 * /api/v1 and outside the API document like the app's other callbacks. Called by the platform, so:
 * a small body limit, the store's secret header checked in constant time (401 otherwise), the
 * payload's shape checked (400), one receipt per payload `hash`, and 200 with no body as soon as the
 * job is enqueued (§7.4: answer fast; every 2xx is a success).
 */

/** A callback is a few hundred bytes (§7.3); anything near this is not one. */
export const WEBHOOK_BODY_LIMIT_BYTES = 16 * 1024

const WebhookBody = Type.Object(
  {
    scope: Type.String({ minLength: 1, maxLength: 200 }),
    store_id: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Integer()])),
    data: Type.Object({ type: Type.String({ minLength: 1, maxLength: 64 }), id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) }, { additionalProperties: true }),
    // SHA-1 of the payload (§7.3): not a signature, the deduplication key.
    hash: Type.String({ pattern: '^[A-Za-z0-9]{8,128}$' }),
    created_at: Type.Optional(Type.Integer({ minimum: 0 })),
    producer: Type.String({ pattern: '^stores/[a-z0-9]{1,64}$' }),
  },
  { additionalProperties: true },
)

const SECRET_FORMAT = /^[A-Za-z0-9_-]{16,128}$/

/**
 * BigCommerce delivers every store's callbacks from a shared pool of addresses, so one address can
 * carry many stores' order traffic: the route counts in a bucket of its own, this many times the
 * per-address limit of the API (RATE_LIMIT_MAX), instead of sharing the API's.
 */
export const WEBHOOK_RATE_LIMIT_FACTOR = 10

export async function orderWebhookRoutes(app: App, orderWebhooks: OrderWebhooks, rateLimit: { max: number; windowMs: number }): Promise<void> {
  // The raw bytes are kept for a Standard Webhooks signature, which is computed over them (§7.5).
  const rawBodies = new WeakMap<FastifyRequest, Buffer>()
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT_BYTES }, (request, raw, done) => {
    const bytes = typeof raw === 'string' ? Buffer.from(raw) : raw
    const text = bytes.toString('utf8')
    if (jsonNestingExceeds(text, 8)) {
      done(new AppError('invalid_json', 'the body is nested deeper than a webhook payload is'), undefined)
      return
    }
    rawBodies.set(request, bytes)
    parse(request, text, done)
  })

  app.post(WEBHOOK_PATH, {
    bodyLimit: WEBHOOK_BODY_LIMIT_BYTES,
    schema: { hide: true, body: WebhookBody },
    config: {
      rateLimit: {
        max: rateLimit.max * WEBHOOK_RATE_LIMIT_FACTOR,
        timeWindow: rateLimit.windowMs,
        keyGenerator: (request: FastifyRequest) => `platform-webhooks:${rateLimitKey(request)}`,
      },
    },
    // No secret, no reading of the body: refused before a byte of it is parsed.
    onRequest: async (request) => {
      const secret = request.headers[WEBHOOK_SECRET_HEADER]
      if (typeof secret !== 'string' || !SECRET_FORMAT.test(secret)) {
        throw new AppError('unauthenticated', `a BigCommerce webhook carries the ${WEBHOOK_SECRET_HEADER} header this service registered`)
      }
    },
  }, async (request, reply) => {
    const outcome = await orderWebhooks.receive(request.body as OrderWebhookPayload, request.headers, rawBodies.get(request) ?? Buffer.alloc(0))
    if (!outcome.accepted) {
      request.log.warn({ producer: (request.body as OrderWebhookPayload).producer, reason: outcome.reason }, 'BigCommerce webhook refused')
      // One answer for every refusal: a caller learns nothing about which stores exist.
      throw new AppError('unauthenticated', 'the webhook could not be authenticated')
    }
    request.log.info({ scope: request.body.scope, orderId: request.body.data.id, duplicate: outcome.duplicate, enqueued: outcome.enqueued }, 'BigCommerce webhook received')
    return reply.code(200).send()
  })
}
