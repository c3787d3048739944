import { Type, type Static } from 'typebox'
import { adminActor } from '../../http/actors.ts'
import { adminStore } from '../../http/admin-auth.ts'
import { Id, Nullable, problemResponses, Ref, StringEnum, Timestamp } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { toRfc3339, toRfc3339OrNull } from '../../lib/time.ts'
import { Store, StorefrontStore, UpdateStoreBody } from './store.schemas.ts'
import type { StoresService } from './stores.service.ts'
import { ADMIN_KEY_SCOPES } from './stores.tables.ts'

/**
 * The store's admin API keys, managed through the API (the console's Settings, or a script): list
 * (never a key, only its first characters), create (the key is shown in this one answer), revoke.
 */
const AdminKeyScopeSchema = StringEnum(ADMIN_KEY_SCOPES, {
  description: 'What the key may do: `full` (everything), `read_only` (reads only) or `support` (reads, and the actions on subscriptions, charges and change requests; no keys, webhooks, settings, platform connection or catalogue changes). Each operation lists the scopes it takes (`x-admin-scopes`); another is 403 `insufficient_scope`',
})

export const ApiKey = Type.Object(
  {
    id: Id('key'),
    object: Type.Literal('api_key'),
    name: Type.String(),
    prefix: Type.String({ description: 'The first characters of the key, to tell keys apart; never the key' }),
    scope: AdminKeyScopeSchema,
    current: Type.Boolean({ description: 'True for the key that made this request' }),
    created_at: Timestamp,
    last_used_at: Nullable(Timestamp, { description: 'Updated at most once a minute' }),
    revoked_at: Nullable(Timestamp),
  },
  { title: 'AdminApiKey', additionalProperties: false },
)
type ApiKeyView = Static<typeof ApiKey>

const CreatedApiKey = Type.Object(
  { ...ApiKey.properties, key: Type.String({ description: 'The key itself: shown in this answer only, stored as a hash' }) },
  { additionalProperties: false },
)

const ApiKeyList = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(ApiKey), next_cursor: Type.Null({ description: 'Always null: every key of the store is in one page' }) },
  { additionalProperties: false },
)

function presentKey(row: Awaited<ReturnType<StoresService['listApiKeys']>>[number], currentId: string | undefined): ApiKeyView {
  return {
    id: row.id,
    object: 'api_key',
    name: row.name,
    prefix: row.key_prefix,
    scope: row.scope,
    current: row.id === currentId,
    created_at: toRfc3339(row.created_at),
    last_used_at: toRfc3339OrNull(row.last_used_at),
    revoked_at: toRfc3339OrNull(row.revoked_at),
  }
}

/** Admin routes for the authenticated store's own settings and admin keys. */
export async function storeAdminRoutes(app: App, stores: StoresService): Promise<void> {
  app.get('/store', {
    schema: {
      operationId: 'getStore',
      summary: 'Read the store the API key belongs to',
      tags: ['Store'],
      response: { 200: Ref(Store) },
    },
  }, async (request) => stores.present(adminStore(request)))

  app.patch('/store', {
    schema: {
      operationId: 'updateStore',
      summary: 'Change the store name, time zone, currency, billing settings or payment gateway',
      description:
        "`gateway` may be `test` or `platform` on a test-mode store; a live store always uses `platform` (`test` is 400 validation_failed). " +
        'A change records the event `store.updated` naming who made it, with each changed setting before and after; a request that changes nothing records nothing.',
      tags: ['Store'],
      body: UpdateStoreBody,
      response: { 200: Ref(Store), ...problemResponses(404) },
    },
  }, async (request) => {
    const { store, actor } = adminActor(request)
    return stores.updateSettings(store, request.body, actor)
  })

  app.get('/api-keys', {
    schema: {
      operationId: 'listApiKeys',
      summary: "List the store's admin API keys (never the keys themselves)",
      tags: ['Store'],
      response: { 200: ApiKeyList },
    },
  }, async (request) => {
    const rows = await stores.listApiKeys(adminStore(request))
    return { object: 'list' as const, data: rows.map((row) => presentKey(row, request.admin?.keyId)), next_cursor: null }
  })

  app.post('/api-keys', {
    // The answer holds the key itself: never stored (idempotency keeps answers), never for a console session.
    config: { idempotentReplay: false, consoleSessions: false },
    schema: {
      operationId: 'createApiKey',
      summary: 'Create an admin API key; the key is in this answer only',
      description: 'Only with an admin API key: a console session (the app opened from the BigCommerce control panel) is 403 `forbidden`, so a session cannot outlive the app by minting a permanent key. `Idempotency-Key` is ignored here: the answer holds the key, and no answer holding it is ever stored.',
      tags: ['Store'],
      body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }), scope: Type.Optional({ ...AdminKeyScopeSchema, default: 'full' }) }, { additionalProperties: false }),
      response: { 201: CreatedApiKey, ...problemResponses(400, 403) },
    },
  }, async (request, reply) => {
    const { row, key } = await stores.createApiKey(adminStore(request), request.body.name, request.body.scope ?? 'full')
    return reply.code(201).send({ ...presentKey(row, request.admin?.keyId), key })
  })

  app.delete('/api-keys/:id', {
    schema: {
      operationId: 'revokeApiKey',
      summary: 'Revoke an admin API key at once (not the last active one)',
      tags: ['Store'],
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
      response: { 200: ApiKey, ...problemResponses(404, 409) },
    },
  }, async (request) => presentKey(await stores.revokeApiKey(adminStore(request), request.params.id), request.admin?.keyId))
}

const StorefrontQuery = Type.Object({ store_hash: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false })

/** What a page may show about a store without credentials: its name. */
export async function storefrontStoreRoutes(app: App, stores: StoresService): Promise<void> {
  app.get('/storefront/store', {
    schema: {
      operationId: 'getStorefrontStore',
      summary: "A store's public name, for the portal's sign-in page and widgets",
      tags: ['Storefront'],
      security: [],
      querystring: StorefrontQuery,
      response: { 200: Ref(StorefrontStore), ...problemResponses(404) },
    },
  }, async (request, reply) => {
    const answer = await stores.storefrontStore(request.query.store_hash)
    reply.header('cache-control', 'public, max-age=60')
    return answer
  })
}
