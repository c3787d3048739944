import type { Db } from '../../src/db/database.ts'
import { randomToken, sha256Hex } from '../../src/lib/secrets.ts'
import type { App } from '../../src/http/types.ts'

export interface PortalSignIn {
  accessToken: string
  /** Authorization headers for this portal session. */
  auth: { authorization: string }
}

/**
 * Signs a subscriber in through the real verify route, with a one-time token planted as the emailed
 * link would: for tests about portal routes rather than about the email itself.
 */
export async function signInSubscriber(app: App, db: Db, storeId: string, subscriberId: string): Promise<PortalSignIn> {
  const token = randomToken(32)
  await db
    .insertInto('magic_link_tokens')
    .values({ token_hash: sha256Hex(token), store_id: storeId, subscriber_id: subscriberId, expires_at: new Date(Date.now() + 15 * 60_000) })
    .execute()
  const response = await app.inject({ method: 'POST', url: '/api/v1/portal/auth/verify', payload: { token } })
  if (response.statusCode !== 200) throw new Error(`verify answered ${response.statusCode}: ${response.body}`)
  const accessToken = (response.json() as { access_token: string }).access_token
  return { accessToken, auth: { authorization: `Bearer ${accessToken}` } }
}
