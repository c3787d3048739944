import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import { describe, test } from 'node:test'
import fc from 'fast-check'
import { holdsEnoughDigits } from '../../src/http/card-guard.ts'
import type { FastifyRequest } from 'fastify'
import { ipv6Key, rateLimitKey } from '../../src/http/rate-limit-key.ts'
import { requestIdFor } from '../../src/http/request-id.ts'
import { containsCardNumber } from '../../src/lib/card-data.ts'

const requestWith = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage

describe('request ids', () => {
  test('generated ids are req_ and 32 letters a-p (no digit run a card scanner could mistake), all different', () => {
    const ids = Array.from({ length: 10_000 }, () => requestIdFor(requestWith({})))
    for (const id of ids) assert.match(id, /^req_[a-p]{32}$/)
    assert.equal(new Set(ids).size, ids.length)
  })

  test('a safe incoming id is kept, an unsafe one replaced', () => {
    assert.equal(requestIdFor(requestWith({ 'x-request-id': 'trace-42.a_b' })), 'trace-42.a_b')
    assert.match(requestIdFor(requestWith({ 'x-request-id': 'has space' })), /^req_/)
    assert.match(requestIdFor(requestWith({ 'x-request-id': 'x'.repeat(129) })), /^req_/)
  })
})

describe('card guard pre-check', () => {
  test('text the guard skips never holds a card number, even percent-decoded', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (text) => {
        if (holdsEnoughDigits(text)) return true
        let decoded = text
        try {
          decoded = decodeURIComponent(text)
        } catch {}
        return !containsCardNumber(text) && !containsCardNumber(decoded)
      }),
    )
  })

  test('counts digits wherever they are', () => {
    assert.equal(holdsEnoughDigits('/a?x=4111111111111111'), true)
    assert.equal(holdsEnoughDigits('/api/v1/storefront/plans?store_hash=s&platform_product_id=112'), false)
    assert.equal(holdsEnoughDigits('%34%31%31%31%31%31%31'), true)
  })
})

describe('rate-limit keys for IPv6 clients', () => {
  test('addresses in one /64 share a key, whatever their spelling', () => {
    const key = ipv6Key('2001:db8:85a3:1::1')
    for (const same of ['2001:0db8:85a3:0001:ffff:ffff:ffff:ffff', '2001:DB8:85A3:1:0:0:0:2', '2001:db8:85a3:1::1%eth0']) {
      assert.equal(ipv6Key(same), key, same)
    }
    assert.equal(key, '2001:db8:85a3:1::/64')
    assert.notEqual(ipv6Key('2001:db8:85a3:2::1'), key)
    assert.equal(ipv6Key('::1'), '0:0:0:0::/64')
  })

  test('an IPv4-mapped address counts as its IPv4 address', () => {
    assert.equal(ipv6Key('::ffff:10.1.2.3'), '10.1.2.3')
    assert.equal(ipv6Key('::ffff:a01:203'), '10.1.2.3')
    assert.equal(ipv6Key('0:0:0:0:0:ffff:10.1.2.3'), '10.1.2.3')
  })

  test('a request whose client has gone (no address any more) gets a key, not an exception', () => {
    assert.equal(rateLimitKey({ ip: undefined } as unknown as FastifyRequest), 'gone')
    assert.equal(rateLimitKey({ ip: '10.1.2.3' } as unknown as FastifyRequest), '10.1.2.3')
  })

  test('something that is not an address is its own key', () => {
    assert.equal(ipv6Key('1:2:3'), '1:2:3')
    assert.equal(ipv6Key('1::2::3'), '1::2::3')
  })
})
