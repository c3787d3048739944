/**
 * The portal session: the JWT lives in sessionStorage only (this tab, gone when it closes), never in
 * localStorage and never in a cookie. Nothing else is stored.
 */

const KEY = 'portal.session'

export interface Session {
  token: string
  /** Epoch milliseconds after which the service no longer accepts the token. */
  expiresAt: number
}

export function saveSession(accessToken: string, expiresInSeconds: number): Session {
  const session = { token: accessToken, expiresAt: Date.now() + expiresInSeconds * 1000 }
  sessionStorage.setItem(KEY, JSON.stringify(session))
  return session
}

/** The stored session if it has not expired; an expired one is removed. */
export function currentSession(): Session | null {
  const text = sessionStorage.getItem(KEY)
  if (!text) return null
  try {
    const parsed = JSON.parse(text) as Partial<Session>
    if (typeof parsed.token === 'string' && typeof parsed.expiresAt === 'number' && parsed.expiresAt > Date.now()) {
      return { token: parsed.token, expiresAt: parsed.expiresAt }
    }
  } catch {
    // fall through: unreadable means signed out
  }
  clearSession()
  return null
}

/** True when a session was stored but has run out (as opposed to never having signed in). */
export function sessionExpired(): boolean {
  const text = sessionStorage.getItem(KEY)
  if (!text) return false
  try {
    const parsed = JSON.parse(text) as Partial<Session>
    return typeof parsed.expiresAt === 'number' && parsed.expiresAt <= Date.now()
  } catch {
    return false
  }
}

export function clearSession(): void {
  sessionStorage.removeItem(KEY)
}
