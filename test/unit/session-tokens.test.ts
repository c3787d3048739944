/**
 * Portal and console session tokens (src/modules/portal-auth/portal-sessions.ts,
 * src/modules/console-auth/console-sessions.ts) are verified by jose's jwtVerify with HS256 pinned:
 * what the sessions issue is accepted with its claims; every other token (another algorithm, `none`,
 * another key, issuer or audience, expired, missing claims, malformed, a non-ASCII signature) is
 * refused as the same 401 `invalid_token`, never another error.
 */
import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { describe, test } from 'node:test'
import { fixedClock } from '../../src/lib/clock.ts'
import { AppError } from '../../src/lib/errors.ts'
import { createConsoleSessionTokens } from '../../src/modules/console-auth/console-sessions.ts'
import { createPortalSessions } from '../../src/modules/portal-auth/portal-sessions.ts'

const SECRET = new TextEncoder().encode('a-test-secret-of-reasonable-length-1234')
const ISSUER = 'https://billing.example'
const NOW = 1_800_000_000
const clock = fixedClock(new Date(NOW * 1000))
const portal = createPortalSessions({ secret: async () => SECRET, issuer: ISSUER, clock })
const consoleSessions = createConsoleSessionTokens({ secret: async () => SECRET, issuer: ISSUER, clock })

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')
const signRaw = (header: unknown, payload: unknown, secret: Uint8Array = SECRET) => {
  const input = `${b64(header)}.${b64(payload)}`
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`
}
const goodClaims = { iss: ISSUER, aud: 'portal', sub: 'sub_1', jti: 'j1', iat: NOW - 10, exp: NOW + 900, store: 'st_1' }

async function accepted(verify: (token: string) => Promise<unknown>, token: string): Promise<boolean> {
  try {
    await verify(token)
    return true
  } catch (error) {
    assert.ok(error instanceof AppError && error.code === 'invalid_token', `a refusal is invalid_token (401), got ${String(error)}`)
    return false
  }
}

describe('portal session tokens', () => {
  test('a token the sessions issue is accepted with its claims', async () => {
    const issued = await portal.issue('sub_1', 'st_1')
    assert.deepEqual(await portal.verify(issued.token), issued.claims)
  })

  test('a token accepted before is refused once the service clock reaches its expiry (verified tokens are kept only until then)', async () => {
    const moving = fixedClock(new Date(NOW * 1000))
    const sessions = createPortalSessions({ secret: async () => SECRET, issuer: ISSUER, clock: moving })
    const { token, claims } = await sessions.issue('sub_1', 'st_1')
    assert.deepEqual(await sessions.verify(token), claims)
    moving.advance((claims.exp - NOW) * 1000 - 1500)
    assert.deepEqual(await sessions.verify(token), claims, 'still valid 1.5 s before expiry')
    moving.advance(1500)
    assert.equal(await accepted(sessions.verify, token), false, 'expired on the service clock')
  })

  const good = signRaw({ alg: 'HS256', typ: 'JWT' }, goodClaims)
  const [h, p, s] = good.split('.') as [string, string, string]
  const cases: Array<[string, string, boolean]> = [
    ['the well-formed token', good, true],
    ['an audience list holding ours', signRaw({ alg: 'HS256' }, { ...goodClaims, aud: ['other', 'portal'] }), true],
    ['alg none without a signature', `${b64({ alg: 'none' })}.${p}.`, false],
    ['alg none', signRaw({ alg: 'none' }, goodClaims), false],
    ['alg HS512 signed as HS256', signRaw({ alg: 'HS512' }, goodClaims), false],
    ['alg hs256 in lower case', signRaw({ alg: 'hs256' }, goodClaims), false],
    ['a crit header', signRaw({ alg: 'HS256', crit: ['exp'] }, goodClaims), false],
    ['another key', signRaw({ alg: 'HS256' }, goodClaims, new TextEncoder().encode('another-secret')), false],
    ['a changed payload', `${h}.${b64({ ...goodClaims, sub: 'sub_2' })}.${s}`, false],
    ['a truncated signature', `${h}.${p}.${s.slice(0, -2)}`, false],
    ['a signature with a stray trailing bit', `${h}.${p}.${s.slice(0, -1)}${s.at(-1) === 'A' ? 'B' : 'A'}`, false],
    ['a non-ASCII signature of the expected length', `${h}.${p}.é${s.slice(1)}`, false],
    ['a signature of Latin-1 characters only', `${h}.${p}.${'\u00e9'.repeat(43)}`, false],
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
    ['no store', signRaw({ alg: 'HS256' }, { ...goodClaims, store: undefined }), false],
    ['a store that is not text', signRaw({ alg: 'HS256' }, { ...goodClaims, store: 7 }), false],
    ['another issuer', signRaw({ alg: 'HS256' }, { ...goodClaims, iss: 'https://evil.example' }), false],
    ['another audience (a console session)', signRaw({ alg: 'HS256' }, { ...goodClaims, aud: 'console' }), false],
    ['a payload that is not JSON', signRaw({ alg: 'HS256' }, 'not json'), false],
    ['a payload that is an array', signRaw({ alg: 'HS256' }, [goodClaims]), false],
    ['a header that is not JSON', signRaw('{alg', goodClaims), false],
  ]
  for (const [name, token, accept] of cases) {
    test(`${name}: ${accept ? 'accepted' : 'refused as invalid_token'}`, async () => {
      assert.equal(await accepted(portal.verify, token), accept)
    })
  }
})

describe('console session tokens', () => {
  test('a token the console sessions issue is accepted; a portal session is not', async () => {
    const issued = await consoleSessions.sign('st_1')
    assert.deepEqual(await consoleSessions.verify(issued.token), issued.claims)
    assert.equal(await accepted(consoleSessions.verify, (await portal.issue('sub_1', 'st_1')).token), false)
    assert.equal(await accepted(portal.verify, issued.token), false, 'and the portal refuses a console session')
  })

  const claims = { iss: ISSUER, aud: 'console', sub: 'st_1', jti: 'c1', iat: NOW - 10, exp: NOW + 600 }
  const cases: Array<[string, string, boolean]> = [
    ['a well-formed console token', signRaw({ alg: 'HS256', typ: 'JWT' }, claims), true],
    ['alg none', `${b64({ alg: 'none' })}.${b64(claims)}.`, false],
    ['a lifetime longer than issued', signRaw({ alg: 'HS256' }, { ...claims, exp: NOW + 7200 }), false],
    ['expired', signRaw({ alg: 'HS256' }, { ...claims, iat: NOW - 3600, exp: NOW - 1 }), false],
    ['another issuer', signRaw({ alg: 'HS256' }, { ...claims, iss: 'https://evil.example' }), false],
    ['a non-ASCII signature', `${signRaw({ alg: 'HS256' }, claims).split('.').slice(0, 2).join('.')}.${'\u00e9'.repeat(43)}`, false],
  ]
  for (const [name, token, accept] of cases) {
    test(`${name}: ${accept ? 'accepted' : 'refused as invalid_token'}`, async () => {
      assert.equal(await accepted(consoleSessions.verify, token), accept)
    })
  }
})
