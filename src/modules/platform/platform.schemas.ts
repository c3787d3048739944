import { Type, type Static } from 'typebox'
import { Nullable, Ref, StringEnum, Timestamp } from '../../http/schemas.ts'

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

export const PaymentInstrument = Type.Object(
  {
    token: Type.String({ description: 'The stored instrument\'s token: send it as `payment_instrument_id`' }),
    brand: Nullable(Type.String({ description: 'e.g. VISA, MASTERCARD, as the platform names it' })),
    last_4: Nullable(Type.String({ pattern: '^[0-9]{4}$' })),
    expiry_month: Nullable(Type.Integer({ minimum: 1, maximum: 12 })),
    expiry_year: Nullable(Type.Integer()),
    is_default: Type.Boolean({ description: 'The customer\'s default instrument on the platform' }),
  },
  {
    $id: 'PaymentInstrument',
    title: 'PaymentInstrument',
    additionalProperties: false,
    description: 'A stored card of the platform customer, as the platform reports it; never more of the card than this',
  },
)

export const PaymentInstrumentList = Type.Object(
  {
    gateway: StringEnum(['platform', 'test'] as const, {
      description: "The store's gateway. `platform`: `data` is the customer's stored cards on BigCommerce, and only these tokens are accepted as `payment_instrument_id`. `test`: the built-in test gateway keeps no instruments, `data` is empty and any instrument id is accepted",
    }),
    data: Type.Array(Ref(PaymentInstrument)),
  },
  { additionalProperties: false, description: "The signed-in subscriber's stored payment instruments" },
)
export type PaymentInstrumentListView = Static<typeof PaymentInstrumentList>
