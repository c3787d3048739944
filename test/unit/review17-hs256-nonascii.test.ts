/**
 * Review of issue 17 (src/lib/hs256-jwt.ts): a signature part of the right *character* length but not
 * ASCII makes timingSafeEqual throw a RangeError (the two Buffers differ in byte length), which is not
 * an InvalidJwt: callers turn only InvalidJwt into 401, so the request becomes a 500.
 */
import assert from 'node:assert/strict'
import { createHmac, createSecretKey } from 'node:crypto'
import { test } from 'node:test'
import { InvalidJwt, verifyHs256 } from '../../src/lib/hs256-jwt.ts'

const SECRET = new TextEncoder().encode('a-test-secret-of-reasonable-length-1234')
const KEY = createSecretKey(SECRET)
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

test('a non-ASCII signature of the expected length is refused as InvalidJwt, not a RangeError', () => {
  const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ iss: 'i', aud: 'portal', sub: 's', jti: 'j', iat: 1, exp: 9e9 })}`
  const real = createHmac('sha256', SECRET).update(input).digest('base64url')
  const forged = `${input}.é${real.slice(1)}` // 43 characters, 44 UTF-8 bytes
  assert.throws(
    () => verifyHs256(forged, KEY, { issuer: 'i', audience: 'portal', nowSeconds: 100, requiredClaims: ['sub'] }),
    (error: unknown) => error instanceof InvalidJwt,
  )
})
