import { Type, type Static } from 'typebox'
import { adminStore } from '../../http/admin-auth.ts'
import { Id, Nullable, problemResponses, Timestamp } from '../../http/schemas.ts'
import type { App, AppDeps } from '../../http/types.ts'
import { AppError, notFound } from '../../lib/errors.ts'
import { toRfc3339, toRfc3339OrNull } from '../../lib/time.ts'
import type { AdminApiKeyRow } from '../../db/database.ts'
import type { AuthCacheInvalidation } from './auth-cache.ts'
import { listAdminKeys, revokeStoreAdminKey } from './stores.repository.ts'
import { createAdminKey } from './stores.service.ts'

/**
 * The store's admin API keys, managed through the API (the console's Settings, or a script): list
 * (never a key, only its first characters), create (the key is shown in this one answer), revoke.
 * The last active key cannot be revoked this way: the store would lock itself out (the CLI can).
 */

export const ApiKey = Type.Object(
  {
    id: Id('key'),
    object: Type.Literal('api_key'),
    name: Type.String(),
    prefix: Type.String({ description: 'The first characters of the key, to tell keys apart; never the key' }),
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

const ApiKeyList = Type.Object({ object: Type.Literal('list'), data: Type.Array(ApiKey) }, { additionalProperties: false })

function present(row: AdminApiKeyRow, currentId: string | undefined): ApiKeyView {
  return {
    id: row.id,
    object: 'api_key',
    name: row.name,
    prefix: row.key_prefix,
    current: row.id === currentId,
    created_at: toRfc3339(row.created_at),
    last_used_at: toRfc3339OrNull(row.last_used_at),
    revoked_at: toRfc3339OrNull(row.revoked_at),
  }
}

export async function apiKeyRoutes(app: App, { db, clock, authCache }: AppDeps & { authCache: AuthCacheInvalidation }): Promise<void> {
  app.get('/api-keys', {
    schema: {
      operationId: 'listApiKeys',
      summary: "List the store's admin API keys (never the keys themselves)",
      tags: ['Store'],
      response: { 200: ApiKeyList },
    },
  }, async (request) => {
    const store = adminStore(request)
    const rows = await listAdminKeys(db, store.id)
    return { object: 'list' as const, data: rows.map((row) => present(row, request.admin?.keyId)) }
  })

  app.post('/api-keys', {
    schema: {
      operationId: 'createApiKey',
      summary: 'Create an admin API key; the key is in this answer only',
      tags: ['Store'],
      body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }),
      response: { 201: CreatedApiKey, ...problemResponses(400) },
    },
  }, async (request, reply) => {
    const store = adminStore(request)
    const created = await createAdminKey(db, store, request.body.name)
    const row = (await listAdminKeys(db, store.id)).find((candidate) => candidate.id === created.id)!
    return reply.code(201).send({ ...present(row, request.admin?.keyId), key: created.key })
  })

  app.delete('/api-keys/:id', {
    schema: {
      operationId: 'revokeApiKey',
      summary: 'Revoke an admin API key at once (not the last active one)',
      tags: ['Store'],
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
      response: { 200: ApiKey, ...problemResponses(404, 409) },
    },
  }, async (request) => {
    const store = adminStore(request)
    const keys = await listAdminKeys(db, store.id)
    const target = keys.find((row) => row.id === request.params.id && row.revoked_at === null)
    if (!target) throw notFound('api key', request.params.id)
    if (keys.filter((row) => row.revoked_at === null).length === 1) {
      throw new AppError('invalid_state', 'this is the store\'s last active key: create another first, or revoke it with the CLI')
    }
    const revoked = await revokeStoreAdminKey(db, store.id, target.id, clock.now())
    if (!revoked) throw notFound('api key', request.params.id)
    authCache.forgetKey(revoked.key_hash)
    return present(revoked, request.admin?.keyId)
  })
}
