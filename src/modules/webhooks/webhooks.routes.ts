import { Type } from 'typebox'
import { adminStore } from '../../http/admin-auth.ts'
import { IdParams, NoContent, PageOf, PageQuery, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import type { WebhookService } from './webhook-subscriptions.service.ts'
import {
  CreateWebhookBody,
  DeliveryListQuery,
  RedeliverBody,
  ReplayBody,
  ReplayResult,
  RotatedSecret,
  UpdateWebhookBody,
  WebhookDelivery,
  WebhookSubscription,
  WebhookSubscriptionWithSecret,
} from './webhook.schemas.ts'

const Params = IdParams('wh')
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
  }, async (request, reply) => reply.code(202).send(await webhooks.sendTest(adminStore(request), request.params.id)))

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

