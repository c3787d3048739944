import type { Executor } from '../../db/database.ts'

/** Sign-in tokens (stored only as hashes) and signed-out sessions. */

export async function insertSignInToken(db: Executor, token: { tokenHash: string; storeId: string; subscriberId: string; expiresAt: Date }): Promise<void> {
  await db.insertInto('magic_link_tokens').values({ token_hash: token.tokenHash, store_id: token.storeId, subscriber_id: token.subscriberId, expires_at: token.expiresAt }).execute()
}

/** Uses a token once: of two racing uses, one gets the row and the other nothing. */
export function useSignInToken(db: Executor, tokenHash: string, now: Date): Promise<{ subscriber_id: string; store_id: string } | undefined> {
  return db
    .updateTable('magic_link_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['subscriber_id', 'store_id'])
    .executeTakeFirst()
}

export async function insertRevokedSession(db: Executor, session: { jti: string; expiresAt: Date }): Promise<void> {
  await db.insertInto('revoked_sessions').values({ jti: session.jti, expires_at: session.expiresAt }).onConflict((oc) => oc.column('jti').doNothing()).execute()
}

/** Removes sign-in tokens a day past their end, and revocations of sessions that have expired anyway. */
export async function purgeExpired(db: Executor, now: Date): Promise<void> {
  await db.deleteFrom('magic_link_tokens').where('expires_at', '<', new Date(now.getTime() - 24 * 3_600_000)).execute()
  await db.deleteFrom('revoked_sessions').where('expires_at', '<', now).execute()
}
