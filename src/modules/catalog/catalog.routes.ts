import { adminStore } from '../../http/admin-auth.ts'
import { IdParams, NoContent, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import type { CatalogService } from './catalog.service.ts'
import {
  AdminPlanListQuery,
  AdminProductListQuery,
  CreatePlanBody,
  CreateProductBody,
  Plan,
  PlanPage,
  Product,
  ProductPage,
  UpdatePlanBody,
  UpdateProductBody,
} from './catalog.schemas.ts'

/** The merchant's catalogue: products and the plans they are sold on. Registered under the admin prefix. */
export async function catalogAdminRoutes(app: App, catalog: CatalogService): Promise<void> {
  const ProductParams = IdParams('prod')
  const PlanParams = IdParams('plan')

  app.post('/products', {
    schema: {
      operationId: 'createProduct',
      summary: 'Create a product',
      tags: ['Catalogue'],
      body: CreateProductBody,
      response: { 201: Ref(Product), ...problemResponses(409) },
    },
  }, async (request, reply) => reply.code(201).send(await catalog.createProduct(adminStore(request), request.body)))

  app.get('/products', {
    schema: { operationId: 'listProducts', summary: 'List products, newest first', tags: ['Catalogue'], querystring: AdminProductListQuery, response: { 200: ProductPage } },
  }, async (request) => catalog.listProducts(adminStore(request), request.query))

  app.get('/products/:id', {
    schema: { operationId: 'getProduct', summary: 'Read a product', tags: ['Catalogue'], params: ProductParams, response: { 200: Ref(Product), ...problemResponses(404) } },
  }, async (request) => catalog.getProduct(adminStore(request), request.params.id))

  app.patch('/products/:id', {
    schema: {
      operationId: 'updateProduct',
      summary: 'Change a product',
      tags: ['Catalogue'],
      params: ProductParams,
      body: UpdateProductBody,
      response: { 200: Ref(Product), ...problemResponses(404) },
    },
  }, async (request) => catalog.updateProduct(adminStore(request), request.params.id, request.body))

  app.delete('/products/:id', {
    schema: {
      operationId: 'deleteProduct',
      summary: 'Delete a product that has no plans',
      description: 'A product with plans answers 409 `conflict`; set `active` to false to hide it instead.',
      tags: ['Catalogue'],
      params: ProductParams,
      response: { 204: NoContent, ...problemResponses(404, 409) },
    },
  }, async (request, reply) => {
    await catalog.deleteProduct(adminStore(request), request.params.id)
    return reply.code(204).send(null)
  })

  app.post('/plans', {
    schema: {
      operationId: 'createPlan',
      summary: 'Create a plan for a product',
      tags: ['Catalogue'],
      body: CreatePlanBody,
      response: { 201: Ref(Plan), ...problemResponses(404) },
    },
  }, async (request, reply) => reply.code(201).send(await catalog.createPlan(adminStore(request), request.body)))

  app.get('/plans', {
    schema: { operationId: 'listPlans', summary: 'List plans, newest first', tags: ['Catalogue'], querystring: AdminPlanListQuery, response: { 200: PlanPage } },
  }, async (request) => catalog.listPlans(adminStore(request), request.query))

  app.get('/plans/:id', {
    schema: { operationId: 'getPlan', summary: 'Read a plan', tags: ['Catalogue'], params: PlanParams, response: { 200: Ref(Plan), ...problemResponses(404) } },
  }, async (request) => catalog.getPlan(adminStore(request), request.params.id))

  app.patch('/plans/:id', {
    schema: {
      operationId: 'updatePlan',
      summary: 'Rename, archive or restore a plan',
      description: 'Price, currency and cadence are fixed once a plan exists; `active: false` archives it (hidden from storefronts, kept for its subscriptions).',
      tags: ['Catalogue'],
      params: PlanParams,
      body: UpdatePlanBody,
      response: { 200: Ref(Plan), ...problemResponses(404) },
    },
  }, async (request) => catalog.updatePlan(adminStore(request), request.params.id, request.body))

  app.delete('/plans/:id', {
    schema: {
      operationId: 'deletePlan',
      summary: 'Delete a plan no subscription uses',
      description: 'A plan that subscriptions use cannot be deleted (409 `conflict`): archive it with `PATCH {"active": false}`.',
      tags: ['Catalogue'],
      params: PlanParams,
      response: { 204: NoContent, ...problemResponses(404, 409) },
    },
  }, async (request, reply) => {
    await catalog.deletePlan(adminStore(request), request.params.id)
    return reply.code(204).send(null)
  })
}

