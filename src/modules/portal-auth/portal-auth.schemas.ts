import { Type } from 'typebox'

export const RequestLinkBody = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 254, example: 'ada@example.com' }),
    store_hash: Type.String({ minLength: 1, maxLength: 64, example: 'demo-store' }),
  },
  { additionalProperties: false },
)

export const LinkRequested = Type.Object(
  { status: Type.Literal('sent', { description: 'Always "sent" for a valid request, whether or not the email is known' }) },
  { $id: 'LinkRequested', title: 'LinkRequested', additionalProperties: false },
)

export const VerifyBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 512, description: 'The one-time token from the emailed link' }) },
  { additionalProperties: false },
)

export const PortalSession = Type.Object(
  {
    access_token: Type.String({ description: 'A JWT for Authorization: Bearer on portal routes; keep it in session storage only' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ minimum: 1, description: 'Seconds until the token expires', example: 900 }),
  },
  { $id: 'PortalSession', title: 'PortalSession', additionalProperties: false },
)

export const portalAuthSchemas = [LinkRequested, PortalSession]
