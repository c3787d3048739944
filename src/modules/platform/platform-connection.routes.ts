import { adminStore } from '../../http/admin-auth.ts'
import { Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import type { PlatformConnections } from './connections.ts'
import { PlatformConnection, PutPlatformConnectionBody } from './platform.schemas.ts'

/** Admin routes for the authenticated store's connection to BigCommerce; the token is written, never read. */
export async function platformConnectionRoutes(app: App, connections: PlatformConnections): Promise<void> {
  app.get('/platform-connection', {
    schema: {
      operationId: 'getPlatformConnection',
      summary: "Read the store's connection to BigCommerce (never the token)",
      tags: ['Platform connection'],
      response: { 200: Ref(PlatformConnection) },
    },
  }, async (request) => connections.status(adminStore(request).id))

  app.put('/platform-connection', {
    schema: {
      operationId: 'putPlatformConnection',
      summary: 'Connect the store with a store-level API account token',
      description: 'The token is kept encrypted and never shown again; it replaces any earlier connection (an app install\'s too), and a store whose billing was stopped by an uninstall bills again.',
      tags: ['Platform connection'],
      body: PutPlatformConnectionBody,
      response: { 200: Ref(PlatformConnection) },
    },
  }, async (request) => connections.connect(adminStore(request).id, { accessToken: request.body.access_token, source: 'api_account' }))

  app.delete('/platform-connection', {
    schema: {
      operationId: 'deletePlatformConnection',
      summary: 'Disconnect the store: its token is deleted and its billing stops (as an app uninstall)',
      tags: ['Platform connection'],
      response: { 200: Ref(PlatformConnection) },
    },
  }, async (request) => connections.disconnect(adminStore(request).id))
}
