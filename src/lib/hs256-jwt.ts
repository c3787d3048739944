import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto'

/**
 * Verification of the service's own HS256 session tokens (portal and console), on every request.
 *
 * Why not `jose.jwtVerify`, which signs them: it runs WebCrypto's HMAC as an asynchronous job on the
 * thread pool and builds a general JOSE pipeline around it, about 56-105 µs per request on this
 * service's machines (BENCHMARKS.md, Portal); one algorithm pinned in advance needs one synchronous
 * HMAC and string compare (a few µs). Every check `jwtVerify` made with the options we gave it is kept:
 * compact form, the pinned algorithm (`none` and every other refused), no `crit`, the signature,
 * `iss`, `aud` (a string or a list holding ours), `exp` (expired at `exp <= now`), `nbf` when present,
 * `iat` a number, and the required claims present. Stricter in two ways: each part must be canonical
 * base64url (so one token has one spelling), and nothing an unauthenticated sender wrote is parsed
 * before the signature is checked.
 */
export const HS256 = 'HS256'

/** Why a token was refused; callers answer every kind with the same 401. */
export class InvalidJwt extends Error {
  override name = 'InvalidJwt'
}

export interface Hs256Expectations {
  issuer: string
  audience: string
  /** Seconds since the epoch, from the service's clock. */
  nowSeconds: number
  /** Claims that must be present, beside `exp` (always required). */
  requiredClaims: readonly string[]
}

// Far beyond any token the service issues (~400 characters), well under Node's header limit.
const MAX_TOKEN_LENGTH = 4096
const BASE64URL = /^[A-Za-z0-9_-]+$/

export function verifyHs256(token: string, key: KeyObject, expect: Hs256Expectations): Record<string, unknown> {
  if (token.length > MAX_TOKEN_LENGTH) throw new InvalidJwt('token too long')
  const firstDot = token.indexOf('.')
  const secondDot = token.indexOf('.', firstDot + 1)
  if (firstDot < 1 || secondDot < 0 || token.indexOf('.', secondDot + 1) !== -1) throw new InvalidJwt('not a compact JWS')
  const signingInput = token.slice(0, secondDot)
  const signature = token.slice(secondDot + 1)
  const expected = createHmac('sha256', key).update(signingInput).digest('base64url')
  // base64url is ASCII, so equal lengths in characters are equal lengths in bytes (timingSafeEqual needs that).
  if (signature.length !== expected.length || !BASE64URL.test(signature) || !timingSafeEqual(Buffer.from(signature), Buffer.from(expected))) {
    throw new InvalidJwt('signature verification failed')
  }

  const header = decodePart(token.slice(0, firstDot))
  if (header.alg !== HS256) throw new InvalidJwt('algorithm not allowed')
  if (header.crit !== undefined) throw new InvalidJwt('unsupported critical header parameters')
  if (header.typ !== undefined && header.typ !== 'JWT') throw new InvalidJwt('unexpected typ')

  const claims = decodePart(token.slice(firstDot + 1, secondDot))
  for (const name of expect.requiredClaims) if (claims[name] === undefined) throw new InvalidJwt(`missing ${name}`)
  if (claims.iss !== expect.issuer) throw new InvalidJwt('unexpected iss')
  const audience = claims.aud
  if (!(audience === expect.audience || (Array.isArray(audience) && audience.includes(expect.audience)))) throw new InvalidJwt('unexpected aud')
  if (typeof claims.exp !== 'number' || !Number.isFinite(claims.exp)) throw new InvalidJwt('exp must be a number')
  if (claims.exp <= expect.nowSeconds) throw new InvalidJwt('expired')
  if (claims.nbf !== undefined && (typeof claims.nbf !== 'number' || claims.nbf > expect.nowSeconds)) throw new InvalidJwt('not yet valid')
  if (claims.iat !== undefined && (typeof claims.iat !== 'number' || !Number.isFinite(claims.iat))) throw new InvalidJwt('iat must be a number')
  return claims
}

function decodePart(part: string): Record<string, unknown> {
  if (!BASE64URL.test(part)) throw new InvalidJwt('not base64url')
  const bytes = Buffer.from(part, 'base64url')
  // Canonical only: re-encoding must give the same text (no stray trailing bits).
  if (bytes.toString('base64url') !== part) throw new InvalidJwt('not canonical base64url')
  let value: unknown
  try {
    value = JSON.parse(bytes.toString('utf8'))
  } catch {
    throw new InvalidJwt('not JSON')
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InvalidJwt('not a JSON object')
  return value as Record<string, unknown>
}

/**
 * A signing key fetched on first use (it may live in the database, which need not be migrated when
 * the app is assembled) and made a KeyObject once. `now()` answers it synchronously once loaded; a
 * failed fetch is forgotten, so a database hiccup does not poison every later request.
 */
export function lazySecretKey(secret: () => Promise<Uint8Array>): { load(): Promise<KeyObject>; now(): KeyObject | undefined } {
  let loading: Promise<KeyObject> | undefined
  let loaded: KeyObject | undefined
  return {
    load() {
      loading ??= secret()
        .then((bytes) => (loaded = createSecretKey(bytes)))
        .catch((error: unknown) => {
          loading = undefined
          throw error
        })
      return loading
    },
    now: () => loaded,
  }
}
