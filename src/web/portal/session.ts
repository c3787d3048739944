import { createCredentialStore, type Credential } from '../shared/session.ts'

/** The portal session: the JWT from verify and when it expires (src/web/shared/session.ts keeps it). */
export type Session = Credential

const store = createCredentialStore('portal.session')

export function saveSession(accessToken: string, expiresInSeconds: number): Session {
  return store.save(accessToken, { expiresAt: Date.now() + expiresInSeconds * 1000 })
}

export const currentSession = store.current
export const sessionExpired = store.expired
export const clearSession = store.clear
