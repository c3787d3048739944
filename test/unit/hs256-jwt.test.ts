/**
 * The service's own HS256 verifier (src/lib/hs256-jwt.ts) accepts exactly what `jose.jwtVerify` with
 * the same options accepted, and nothing jose would refuse: each case runs through both.
 */
import assert from 'node:assert/strict'
import { createHmac, createSecretKey } from 'node:crypto'
import { describe, test } from 'node:test'
import { jwtVerify, SignJWT } from 'jose'
import { InvalidJwt, verifyHs256 } from '../../src/lib/hs256-jwt.ts'

const SECRET = new TextEncoder().encode('a-test-secret-of-reasonable-length-1234')
const KEY = createSecretKey(SECRET)
const ISSUER = 'https://billing.example'
const AUDIENCE = 'portal'
const NOW = 1_800_000_000
const REQUIRED = ['sub', 'jti', 'iat', 'exp'] as const

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')
const signRaw = (header: unknown, payload: unknown, secret: Uint8Array = SECRET) => {
  const input = `${b64(header)}.${b64(payload)}`
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`
}
const goodClaims = { iss: ISSUER, aud: AUDIENCE, sub: 'sub_1', jti: 'j1', iat: NOW - 10, exp: NOW + 900, store: 'st_1' }

async function joseAccepts(token: string): Promise<boolean> {
  try {
    await jwtVerify(token, SECRET, { algorithms: ['HS256'], issuer: ISSUER, audience: AUDIENCE, currentDate: new Date(NOW * 1000), requiredClaims: [...REQUIRED] })
    return true
  } catch {
    return false
  }
}
function oursAccepts(token: string): boolean {
  try {
    verifyHs256(token, KEY, { issuer: ISSUER, audience: AUDIENCE, nowSeconds: NOW, requiredClaims: REQUIRED })
    return true
  } catch (error) {
    assert.ok(error instanceof InvalidJwt, `only InvalidJwt escapes, got ${String(error)}`)
    return false
  }
}

describe('HS256 session verification', () => {
  test('a token jose signs is accepted with its claims', async () => {
    const token = await new SignJWT({ store: 'st_1' }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuer(ISSUER).setAudience(AUDIENCE)
      .setSubject('sub_1').setJti('j1').setIssuedAt(NOW - 5).setExpirationTime(NOW + 60).sign(SECRET)
    assert.equal(await joseAccepts(token), true)
    const claims = verifyHs256(token, KEY, { issuer: ISSUER, audience: AUDIENCE, nowSeconds: NOW, requiredClaims: REQUIRED })
    assert.deepEqual({ sub: claims.sub, store: claims.store, jti: claims.jti, exp: claims.exp }, { sub: 'sub_1', store: 'st_1', jti: 'j1', exp: NOW + 60 })
  })

  const good = signRaw({ alg: 'HS256', typ: 'JWT' }, goodClaims)
  const [h, p, s] = good.split('.') as [string, string, string]
  const cases: Array<[string, string, boolean]> = [
    ['the well-formed token', good, true],
    ['an audience list holding ours', signRaw({ alg: 'HS256' }, { ...goodClaims, aud: ['other', AUDIENCE] }), true],
    ['alg none without a signature', `${b64({ alg: 'none' })}.${p}.`, false],
    ['alg none', signRaw({ alg: 'none' }, goodClaims), false],
    ['alg HS512 signed as HS256', signRaw({ alg: 'HS512' }, goodClaims), false],
    ['alg hs256 in lower case', signRaw({ alg: 'hs256' }, goodClaims), false],
    ['a crit header', signRaw({ alg: 'HS256', crit: ['exp'] }, goodClaims), false],
    ['another key', signRaw({ alg: 'HS256' }, goodClaims, new TextEncoder().encode('another-secret')), false],
    ['a changed payload', `${h}.${b64({ ...goodClaims, sub: 'sub_2' })}.${s}`, false],
    ['a truncated signature', `${h}.${p}.${s.slice(0, -2)}`, false],
    ['a signature with a stray trailing bit', `${h}.${p}.${s.slice(0, -1)}${s.at(-1) === 'A' ? 'B' : 'A'}`, false],
    ['a fourth part', `${good}.x`, false],
    ['two parts', `${h}.${p}`, false],
    ['an empty header', `.${p}.${s}`, false],
    ['padding in a part', `${h}=.${p}.${s}`, false],
    ['expired now', signRaw({ alg: 'HS256' }, { ...goodClaims, exp: NOW }), false],
    ['expiry a string', signRaw({ alg: 'HS256' }, { ...goodClaims, exp: String(NOW + 60) }), false],
    ['no expiry', signRaw({ alg: 'HS256' }, { ...goodClaims, exp: undefined }), false],
    ['not yet valid', signRaw({ alg: 'HS256' }, { ...goodClaims, nbf: NOW + 60 }), false],
    ['valid from now', signRaw({ alg: 'HS256' }, { ...goodClaims, nbf: NOW }), true],
    ['iat a string', signRaw({ alg: 'HS256' }, { ...goodClaims, iat: 'yesterday' }), false],
    ['no jti', signRaw({ alg: 'HS256' }, { ...goodClaims, jti: undefined }), false],
    ['no sub', signRaw({ alg: 'HS256' }, { ...goodClaims, sub: undefined }), false],
    ['another issuer', signRaw({ alg: 'HS256' }, { ...goodClaims, iss: 'https://evil.example' }), false],
    ['another audience', signRaw({ alg: 'HS256' }, { ...goodClaims, aud: 'console' }), false],
    ['a payload that is not JSON', signRaw({ alg: 'HS256' }, 'not json'), false],
    ['a payload that is an array', signRaw({ alg: 'HS256' }, [goodClaims]), false],
    ['a header that is not JSON', signRaw('{alg', goodClaims), false],
  ]
  for (const [name, token, accepted] of cases) {
    test(`${name}: ${accepted ? 'accepted' : 'refused'}, as jose decides`, async () => {
      assert.equal(oursAccepts(token), accepted)
      assert.equal(await joseAccepts(token), accepted, 'jose must agree, or the case does not test a kept check')
    })
  }

  test('a token longer than any issued is refused before any work', () => {
    const long = signRaw({ alg: 'HS256' }, { ...goodClaims, pad: 'x'.repeat(5000) })
    assert.equal(oursAccepts(long), false)
  })
})
