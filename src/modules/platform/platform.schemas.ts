import { Type, type Static } from 'typebox'
import { StringEnum, Timestamp } from '../../http/schemas.ts'

export const PlatformConnection = Type.Object(
  {
    object: Type.Literal('platform_connection'),
    connected: Type.Boolean({ description: 'true while the service holds a token for the store' }),
    source: Type.Optional(StringEnum(['app', 'api_account'] as const, { description: '`app`: the BigCommerce app install; `api_account`: a store-level API account token given with PUT' })),
    scopes: Type.Optional(Type.Array(Type.String(), { description: 'The scopes the platform granted at install; absent for an API account token (the platform publishes no way to ask)' })),
    connected_at: Type.Optional(Timestamp),
    uninstalled_at: Type.Optional(Type.String({ format: 'date-time', description: 'When the app was uninstalled or the connection removed; billing stopped then' })),
  },
  { $id: 'PlatformConnection', title: 'PlatformConnection', additionalProperties: false, description: 'The store\'s connection to BigCommerce. The access token is never shown.' },
)
export type PlatformConnectionView = Static<typeof PlatformConnection>

export const PutPlatformConnectionBody = Type.Object(
  {
    access_token: Type.String({
      minLength: 1,
      maxLength: 1024,
      // Printable ASCII without spaces: what a header value carries unchanged.
      pattern: '^[\\x21-\\x7e]+$',
      description: 'A store-level API account access token (BigCommerce control panel, Settings > API accounts); kept encrypted, never shown again',
      writeOnly: true,
    }),
  },
  { additionalProperties: false },
)
