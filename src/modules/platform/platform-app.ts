import { errors as joseErrors, jwtVerify } from 'jose'
import { request, type Dispatcher } from 'undici'
import { AppError } from '../../lib/errors.ts'
import { sha256Hex } from '../../lib/secrets.ts'

/**
 * The BigCommerce app's side of the install (docs/platform-api.md section 1): trading the auth
 * callback's code for the store's token, and verifying the signed payload of the load and uninstall
 * callbacks. Neither the code, the token nor the client secret ever enters an error or a log line.
 */

export interface PlatformAppSettings {
  /** PLATFORM_LOGIN_URL */
  loginUrl: string
  /** PLATFORM_CLIENT_ID and PLATFORM_CLIENT_SECRET; undefined: the app routes answer 503. */
  app: { clientId: string; clientSecret: string } | undefined
  /** PUBLIC_URL: the auth callback registered with the app is `{publicUrl}/platform/auth`. */
  publicUrl: string | undefined
  /** PLATFORM_API_TIMEOUT_MS, from sending to the last byte of the answer. */
  timeoutMs: number
  dispatcher?: Dispatcher
}

/** `stores/{hash}` as the platform names a store; the hash is lower-case letters and digits. */
const STORE_CONTEXT = /^stores\/([a-z0-9]{1,64})$/

export function storeHashOfContext(context: string): string | undefined {
  return STORE_CONTEXT.exec(context)?.[1]
}

function requireApp(settings: PlatformAppSettings, needsPublicUrl: boolean): { clientId: string; clientSecret: string } {
  if (!settings.app) {
    throw new AppError('service_unavailable', 'the BigCommerce app is not configured: set PLATFORM_CLIENT_ID and PLATFORM_CLIENT_SECRET (docs/bigcommerce.md)')
  }
  if (needsPublicUrl && !settings.publicUrl) {
    throw new AppError('service_unavailable', 'the BigCommerce app needs PUBLIC_URL: the auth callback registered with the app is {PUBLIC_URL}/platform/auth (docs/bigcommerce.md)')
  }
  return settings.app
}

/** Fails fast with 503 when the app is not configured (before anything else is looked at). */
export function assertAppConfigured(settings: PlatformAppSettings, needsPublicUrl = false): void {
  requireApp(settings, needsPublicUrl)
}

export interface GrantedToken {
  storeHash: string
  accessToken: string
  scopes: string
}

/**
 * POST {PLATFORM_LOGIN_URL}/oauth2/token with the callback's code, scope and context (section 1.2).
 * A refusal (4xx) is 401 invalid_token; an unreachable or failing login host is 503.
 */
export async function exchangeCode(settings: PlatformAppSettings, callback: { code: string; scope: string; context: string }): Promise<GrantedToken> {
  const app = requireApp(settings, true)
  const storeHash = storeHashOfContext(callback.context)
  if (!storeHash) throw new AppError('validation_failed', '/query/context must be stores/{store_hash}', { errors: [{ path: '/query/context', message: 'must be stores/{store_hash}' }] })
  const body = {
    client_id: app.clientId,
    client_secret: app.clientSecret,
    code: callback.code,
    scope: callback.scope,
    grant_type: 'authorization_code',
    redirect_uri: `${settings.publicUrl!.replace(/\/+$/, '')}/platform/auth`,
    context: callback.context,
  }
  let statusCode: number
  let answer: unknown
  try {
    const response = await request(`${settings.loginUrl.replace(/\/+$/, '')}/oauth2/token`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(settings.timeoutMs),
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
      ...(settings.dispatcher ? { dispatcher: settings.dispatcher } : {}),
    })
    statusCode = response.statusCode
    const text = await response.body.text()
    try {
      answer = text ? JSON.parse(text) : undefined
    } catch {
      answer = undefined
    }
  } catch (error) {
    // The transport's message names the host at most, never the body.
    const reason = error instanceof Error ? error.name : 'error'
    throw new AppError('service_unavailable', `the BigCommerce login host could not be reached (${reason}); try installing again`)
  }
  if (statusCode >= 400 && statusCode < 500) throw new AppError('invalid_token', `the BigCommerce login host refused the authorization code (${statusCode}); start the install again from the control panel`)
  if (statusCode < 200 || statusCode >= 300) throw new AppError('service_unavailable', `the BigCommerce login host answered ${statusCode}; try installing again`)
  const granted = answer as { access_token?: unknown; scope?: unknown; context?: unknown } | undefined
  if (typeof granted?.access_token !== 'string' || !/^[\x21-\x7e]{1,1024}$/.test(granted.access_token)) {
    throw new AppError('service_unavailable', 'the BigCommerce login host answered without a usable access_token')
  }
  // The answer names the store the token is for: it must be the one the callback named.
  if (granted.context !== undefined && granted.context !== callback.context) {
    throw new AppError('service_unavailable', 'the BigCommerce login host answered for another store than the callback named')
  }
  return { storeHash, accessToken: granted.access_token, scopes: typeof granted.scope === 'string' ? granted.scope : callback.scope }
}

/**
 * Verifies a load or uninstall callback's signed_payload_jwt as BigCommerce's own client does
 * (section 1.3): HS256 only, signed with the client secret, aud = client id, iss = "bc", exp and nbf
 * checked (a minute's leeway), sub = stores/{hash}. A bad signature, a malformed or expired token is
 * 401 invalid_token; a valid token for another app, issuer or no store is 403 forbidden.
 */
export async function verifySignedPayload(settings: PlatformAppSettings, token: string, now: Date): Promise<{ storeHash: string; loadKey: string }> {
  const app = requireApp(settings, false)
  let sub: unknown
  let jti: unknown
  try {
    const { payload } = await jwtVerify(token, new TextEncoder().encode(app.clientSecret), {
      algorithms: ['HS256'],
      audience: app.clientId,
      issuer: 'bc',
      clockTolerance: 60,
      currentDate: now,
      requiredClaims: ['exp', 'sub'],
    })
    sub = payload.sub
    jti = payload.jti
  } catch (error) {
    if (error instanceof joseErrors.JWTClaimValidationFailed && !(error instanceof joseErrors.JWTExpired) && (error.claim === 'aud' || error.claim === 'iss')) {
      throw new AppError('forbidden', `the signed payload is not for this app (${error.claim})`)
    }
    throw new AppError('invalid_token', 'the signed payload is not valid: bad signature, malformed, expired or not yet valid')
  }
  const storeHash = typeof sub === 'string' ? storeHashOfContext(sub) : undefined
  if (!storeHash) throw new AppError('forbidden', 'the signed payload names no store (sub must be stores/{store_hash})')
  // What makes this payload one of a kind: its `jti` (the platform sends one, a UUID), else the payload itself.
  // Without a jti, the signed part (header and claims): the signature's text has more than one
  // encoding that verifies (spare bits, padding, whitespace), the signed part one.
  const signed = token.trim().split('.').slice(0, 2).join('.')
  const loadKey = `${storeHash}:${typeof jti === 'string' && jti !== '' ? `jti:${jti.slice(0, 200)}` : `sha256:${sha256Hex(signed)}`}`
  return { storeHash, loadKey }
}
