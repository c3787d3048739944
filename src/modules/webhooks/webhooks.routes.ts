import { Type } from 'typebox'
import { adminStore } from '../../http/admin-auth.ts'
import { adminActor } from '../../http/actors.ts'
import { Id, IdParams, NoContent, PageOf, PageQuery, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import type { WebhookService } from './webhook-subscriptions.service.ts'
import {
  CreateWebhookBody,
  DeliveryListQuery,
  HIDDEN_SIGNATURE,
  RedeliverBody,
  ReplayBody,
  ReplayResult,
  RotatedSecret,
  UpdateWebhookBody,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookHealth,
  WebhookSubscription,
  WebhookSubscriptionWithSecret,
} from './webhook.schemas.ts'

const Params = IdParams('wh')
const DeliveryParams = Type.Object({ id: Id('wh'), delivery_id: Id('msg') }, { additionalProperties: false })
const PageOnly = Type.Object({ ...PageQuery }, { additionalProperties: false })
const tags = ['Webhooks']

/** The webhook-subscription routes, plus what operating endpoints needs (docs/contract.md, Webhook delivery). */
export async function webhookAdminRoutes(app: App, webhooks: WebhookService): Promise<void> {
  app.get('/webhook-subscriptions', {
    schema: {
      operationId: 'listWebhookSubscriptions',
      summary: 'Registered webhook endpoints, newest first',
      tags,
      querystring: PageOnly,
      response: { 200: PageOf(Ref(WebhookSubscription), 'A page of webhook subscriptions') },
    },
  }, async (request) => webhooks.list(adminStore(request), request.query))

  app.post('/webhook-subscriptions', {
    schema: {
      operationId: 'createWebhookSubscription',
      summary: 'Register an endpoint and the event types to deliver to it',
      description:
        'The answer holds the signing `secret` (Standard Webhooks, `whsec_...`); it is never shown again. ' +
        'Live stores need `https`; private, loopback and link-local addresses are refused (400) unless the service runs with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true.',
      tags,
      body: CreateWebhookBody,
      response: { 201: Ref(WebhookSubscriptionWithSecret), ...problemResponses(400) },
    },
  }, async (request, reply) => reply.code(201).send(await webhooks.create(adminStore(request), request.body)))

  app.get('/webhook-subscriptions/:id', {
    schema: { operationId: 'getWebhookSubscription', summary: 'One webhook subscription', tags, params: Params, response: { 200: Ref(WebhookSubscription), ...problemResponses(404) } },
  }, async (request) => webhooks.get(adminStore(request), request.params.id))

  app.patch('/webhook-subscriptions/:id', {
    schema: {
      operationId: 'updateWebhookSubscription',
      summary: 'Change the address, event types, description or status',
      description: '`"status": "enabled"` re-enables an endpoint that was disabled (by 410 Gone, five days of failures or an admin).',
      tags,
      params: Params,
      body: UpdateWebhookBody,
      response: { 200: Ref(WebhookSubscription), ...problemResponses(400, 404) },
    },
  }, async (request) => webhooks.update(adminStore(request), request.params.id, request.body))

  app.delete('/webhook-subscriptions/:id', {
    schema: {
      operationId: 'deleteWebhookSubscription',
      summary: 'Remove an endpoint; nothing more is delivered to it',
      tags,
      params: Params,
      response: { 204: NoContent, ...problemResponses(404) },
    },
  }, async (request, reply) => {
    await webhooks.remove(adminStore(request), request.params.id)
    return reply.code(204).send(null)
  })

  app.post('/webhook-subscriptions/:id/rotate-secret', {
    schema: {
      operationId: 'rotateWebhookSecret',
      summary: 'Replace the signing secret; the old one keeps signing beside it for 24 hours',
      tags,
      params: Params,
      response: { 200: Ref(RotatedSecret), ...problemResponses(404) },
    },
  }, async (request) => webhooks.rotateSecret(adminStore(request), request.params.id))

  app.post('/webhook-subscriptions/:id/test', {
    schema: {
      operationId: 'testWebhookSubscription',
      summary: 'Send a webhook.test event to this endpoint',
      tags,
      params: Params,
      response: { 202: Ref(WebhookDelivery), ...problemResponses(404) },
    },
  }, async (request, reply) => reply.code(202).send(await webhooks.sendTest(adminStore(request), request.params.id, adminActor(request).actor)))

  app.get('/webhook-subscriptions/:id/deliveries', {
    schema: {
      operationId: 'listWebhookDeliveries',
      summary: "An endpoint's deliveries with their latest attempts, newest first",
      tags,
      params: Params,
      querystring: DeliveryListQuery,
      response: { 200: PageOf(Ref(WebhookDelivery), 'A page of deliveries'), ...problemResponses(404) },
    },
  }, async (request) => webhooks.listDeliveries(adminStore(request), request.params.id, request.query))

  app.get('/webhook-subscriptions/:id/deliveries/:delivery_id', {
    schema: {
      operationId: 'getWebhookDelivery',
      summary: 'One delivery as it was sent and answered: the delivery inspector',
      description:
        'The body every attempt sent (the stored event, byte for byte) and, for each attempt (newest first, at most 20), the request headers exactly as sent ' +
        '(`webhook-id`, `webhook-timestamp`, `webhook-signature`: the signature, never the signing secret), the status answered and the first KiB of the answer (at most 1,024 bytes are kept). ' +
        `A \`read_only\` key reads \`webhook-signature\` as "${HIDDEN_SIGNATURE}": a signature with its body is a request the receiver would accept again within its timestamp tolerance.`,
      tags,
      params: DeliveryParams,
      response: { 200: Ref(WebhookDeliveryDetail), ...problemResponses(404) },
    },
  }, async (request) =>
    webhooks.delivery(adminStore(request), request.params.id, request.params.delivery_id, { showSignatures: request.admin?.scope !== 'read_only' }))

  app.get('/webhook-subscriptions/:id/health', {
    schema: {
      operationId: 'getWebhookHealth',
      summary: "An endpoint's health from its real attempts: the last 24 hours, failing now, disabled and why",
      description:
        'Counts the requests sent to the endpoint in the last 24 hours (real time; first attempts and retries alike): `attempts`, `succeeded` (2xx), `failed` and `success_rate`. ' +
        '`failing` and `failing_since` say whether it is failing now (no success since), `failures_since_success` how many attempts failed after its last success, ' +
        '`pending` and `next_retry_at` what waits; `status` and `disabled_reason` whether and why deliveries stopped.',
      tags,
      params: Params,
      response: { 200: Ref(WebhookHealth), ...problemResponses(404) },
    },
  }, async (request) => webhooks.health(adminStore(request), request.params.id))

  app.post('/webhook-subscriptions/:id/redeliver', {
    schema: {
      operationId: 'redeliverWebhookEvent',
      summary: 'Send one event to this endpoint again',
      tags,
      params: Params,
      body: RedeliverBody,
      response: { 202: Ref(WebhookDelivery), ...problemResponses(400, 404) },
    },
  }, async (request, reply) => reply.code(202).send(await webhooks.redeliver(adminStore(request), request.params.id, request.body.event_id)))

  app.post('/webhook-subscriptions/:id/replay', {
    schema: {
      operationId: 'replayFailedWebhookDeliveries',
      summary: 'Send every failed delivery since a time again',
      tags,
      params: Params,
      body: ReplayBody,
      response: { 202: Ref(ReplayResult), ...problemResponses(400, 404) },
    },
  }, async (request, reply) => reply.code(202).send(await webhooks.replay(adminStore(request), request.params.id, request.body.since)))
}

