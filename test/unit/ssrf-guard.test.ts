import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { LookupAddress } from 'node:dns'
import { after, before, describe, test } from 'node:test'
import { request } from 'undici'
import {
  FORBIDDEN_ADDRESS_CODE,
  checkWebhookUrl,
  createWebhookAgent,
  forbiddenReason,
  guardedLookup,
} from '../../src/modules/webhooks/ssrf-guard.ts'

/*
 * SSRF guard (docs/contract.md, Webhook delivery: endpoint URLs). Only 127.0.0.1 / localhost are ever contacted here:
 * public addresses are exercised through injected resolvers and forbiddenReason alone.
 */

const FORBIDDEN: Array<[address: string, reasonPattern: RegExp]> = [
  ['127.0.0.1', /loopback/],
  ['127.255.255.254', /loopback/],
  ['10.1.2.3', /private/],
  ['172.16.0.1', /private/],
  ['172.31.255.255', /private/],
  ['192.168.1.1', /private/],
  ['169.254.169.254', /link-local/],
  ['169.254.0.1', /link-local/],
  ['0.0.0.0', /unspecified/],
  ['0.1.2.3', /unspecified/],
  ['100.64.0.1', /carrier-grade NAT/],
  ['100.127.255.254', /carrier-grade NAT/],
  ['224.0.0.1', /multicast/],
  ['239.255.255.250', /multicast/],
  ['255.255.255.255', /broadcast/],
  ['192.0.2.1', /reserved/],
  ['198.18.0.1', /reserved/],
  ['240.0.0.1', /reserved/],
  ['::1', /loopback/],
  ['[::1]', /loopback/],
  ['::', /unspecified/],
  ['fe80::1', /link-local/],
  ['fe80::1%eth0', /link-local/],
  ['fc00::1', /unique local/],
  ['fd12:3456::1', /unique local/],
  ['fd00:ec2::254', /unique local.*AWS metadata/],
  ['ff02::1', /multicast/],
  ['fec0::1', /site-local/],
  ['2001:db8::1', /reserved/],
  ['100::1', /discard/],
  ['2001::1', /Teredo/],
  // IPv4-mapped IPv6 is judged as the IPv4 inside it.
  ['::ffff:127.0.0.1', /^loopback$/],
  ['::ffff:7f00:1', /^loopback$/],
  ['::ffff:10.0.0.1', /^private$/],
  ['::ffff:169.254.169.254', /^link-local/],
  // Embedded IPv4 forms: ipaddr.js classifies 6to4 and NAT64 (not 'unicast'), the reason names the IPv4.
  ['2002:7f00:1::1', /6to4 of 127\.0\.0\.1 \(loopback\)/],
  ['64:ff9b::7f00:1', /NAT64 of 127\.0\.0\.1 \(loopback\)/],
  ['64:ff9b::a9fe:a9fe', /NAT64 of 169\.254\.169\.254 \(link-local/],
  ['::ffff:0:7f00:1', /IPv4-translated/],
  ['::7f00:1', /IPv4-compatible/],
  // Not strict IP literals.
  ['localhost', /not an IP address/],
  ['010.0.0.1', /not an IP address/],
  ['', /not an IP address/],
]

const ALLOWED = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '2606:4700:4700::1111',
  '2a00:1450:4001:80b::200e',
  '172.32.0.1',
  '172.15.255.255',
  '192.169.0.1',
  '100.128.0.1',
  '169.253.255.255',
  '11.0.0.1',
  '::ffff:8.8.8.8',
]

describe('forbiddenReason', () => {
  for (const [address, pattern] of FORBIDDEN) {
    test(`refuses ${address || '(empty)'}`, () => {
      const reason = forbiddenReason(address)
      assert.ok(reason !== undefined, `${address} must be forbidden`)
      assert.match(reason, pattern)
    })
  }

  for (const address of ALLOWED) {
    test(`allows public ${address}`, () => {
      assert.equal(forbiddenReason(address), undefined)
    })
  }

  test('the table is large enough', () => {
    assert.ok(FORBIDDEN.length >= 30)
  })
})

/** A resolver with a fixed answer per host that records the hosts asked about. */
function fakeResolver(answers: Record<string, string[]>) {
  const asked: string[] = []
  const resolve = async (host: string): Promise<string[]> => {
    asked.push(host)
    const answer = answers[host]
    if (answer === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
    return answer
  }
  return { resolve, asked }
}

const ANSWERS = {
  'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'mixed.example.com': ['93.184.216.34', '10.0.0.5'],
  'metadata.example.com': ['169.254.169.254'],
  'v6private.example.com': ['2606:4700:4700::1111', 'fd00::5'],
  'mapped.example.com': ['::ffff:127.0.0.1'],
  'empty.example.com': [],
}

describe('checkWebhookUrl (registration time)', () => {
  const strict = (resolve: (host: string) => Promise<string[]>) => ({ allowPrivateNetworks: false, requireHttps: true, resolve })

  test('accepts an https URL whose host resolves only to public addresses', async () => {
    const { resolve, asked } = fakeResolver(ANSWERS)
    assert.deepEqual(await checkWebhookUrl('https://hooks.example.com/webhooks?x=1', strict(resolve)), { ok: true })
    assert.deepEqual(asked, ['hooks.example.com'])
  })

  test('accepts http when https is not required (test stores)', async () => {
    const { resolve } = fakeResolver(ANSWERS)
    const result = await checkWebhookUrl('http://hooks.example.com/', { allowPrivateNetworks: false, requireHttps: false, resolve })
    assert.deepEqual(result, { ok: true })
  })

  test('refuses a host resolving to a mix of public and private addresses, naming the private one', async () => {
    const { resolve } = fakeResolver(ANSWERS)
    const result = await checkWebhookUrl('https://mixed.example.com/hook', strict(resolve))
    assert.equal(result.ok, false)
    assert.ok(!result.ok)
    assert.match(result.reason, /mixed\.example\.com resolves to 10\.0\.0\.5, a private address/)
  })

  test('refuses hosts resolving to metadata, unique local and IPv4-mapped loopback addresses', async () => {
    const { resolve } = fakeResolver(ANSWERS)
    const metadata = await checkWebhookUrl('https://metadata.example.com/', strict(resolve))
    assert.ok(!metadata.ok)
    assert.match(metadata.reason, /169\.254\.169\.254, a link-local address/)
    const v6 = await checkWebhookUrl('https://v6private.example.com/', strict(resolve))
    assert.ok(!v6.ok)
    assert.match(v6.reason, /fd00::5, a unique local address/)
    const mapped = await checkWebhookUrl('https://mapped.example.com/', strict(resolve))
    assert.ok(!mapped.ok)
    assert.match(mapped.reason, /::ffff:127\.0\.0\.1, a loopback address/)
  })

  test('refuses hosts that do not resolve (error or empty answer)', async () => {
    const { resolve } = fakeResolver(ANSWERS)
    for (const url of ['https://nowhere.example.com/', 'https://empty.example.com/']) {
      const result = await checkWebhookUrl(url, strict(resolve))
      assert.ok(!result.ok, url)
      assert.match(result.reason, /does not resolve/)
    }
  })

  test('refuses forbidden IP-literal hosts without DNS, in every spelling the URL parser normalises', async () => {
    const { resolve, asked } = fakeResolver(ANSWERS)
    for (const url of [
      'https://127.0.0.1/',
      'https://10.0.0.1:8443/x',
      'https://169.254.169.254/latest/meta-data/',
      'https://[::1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[fd00:ec2::254]/',
      'https://0x7f.1/', // WHATWG URL: 127.0.0.1
      'https://2130706433/', // 127.0.0.1
      'https://0/', // 0.0.0.0
    ]) {
      const result = await checkWebhookUrl(url, strict(resolve))
      assert.ok(!result.ok, url)
      assert.match(result.reason, /address/, url)
    }
    assert.deepEqual(asked, [])
    assert.deepEqual(await checkWebhookUrl('https://93.184.216.34/', strict(resolve)), { ok: true })
    assert.deepEqual(await checkWebhookUrl('https://[2606:4700:4700::1111]/', strict(resolve)), { ok: true })
  })

  test('refuses localhost and *.localhost without DNS', async () => {
    const { resolve, asked } = fakeResolver({ localhost: ['93.184.216.34'], 'api.localhost': ['93.184.216.34'] })
    for (const url of ['https://localhost/', 'https://LOCALHOST./', 'https://api.localhost:3000/']) {
      const result = await checkWebhookUrl(url, strict(resolve))
      assert.ok(!result.ok, url)
      assert.match(result.reason, /loopback/)
    }
    assert.deepEqual(asked, [])
  })

  test('refuses non-http(s) schemes, http when https is required, and credentials', async () => {
    const { resolve } = fakeResolver(ANSWERS)
    for (const allowPrivateNetworks of [false, true]) {
      const ftp = await checkWebhookUrl('ftp://hooks.example.com/', { allowPrivateNetworks, requireHttps: false, resolve })
      assert.ok(!ftp.ok)
      assert.match(ftp.reason, /not ftp/)
      const file = await checkWebhookUrl('file:///etc/passwd', { allowPrivateNetworks, requireHttps: false, resolve })
      assert.ok(!file.ok)
      const http = await checkWebhookUrl('http://hooks.example.com/', { allowPrivateNetworks, requireHttps: true, resolve })
      assert.ok(!http.ok)
      assert.match(http.reason, /https/)
      for (const url of ['https://user:pass@hooks.example.com/', 'https://user@hooks.example.com/', 'https://:pass@hooks.example.com/']) {
        const credentials = await checkWebhookUrl(url, { allowPrivateNetworks, requireHttps: true, resolve })
        assert.ok(!credentials.ok, url)
        assert.match(credentials.reason, /credentials/)
      }
      const invalid = await checkWebhookUrl('not a url', { allowPrivateNetworks, requireHttps: false, resolve })
      assert.ok(!invalid.ok)
    }
  })

  test('allowPrivateNetworks lifts the address rules (and does no DNS) but not the others', async () => {
    const { resolve, asked } = fakeResolver(ANSWERS)
    const lifted = { allowPrivateNetworks: true, requireHttps: false, resolve }
    for (const url of [
      'http://localhost:3000/hook',
      'http://127.0.0.1:3000/hook',
      'http://[::1]:3000/hook',
      'https://mixed.example.com/',
      'https://metadata.example.com/',
      'https://nowhere.example.com/',
    ]) {
      assert.deepEqual(await checkWebhookUrl(url, lifted), { ok: true }, url)
    }
    assert.deepEqual(asked, [])
    const live = await checkWebhookUrl('http://localhost:3000/hook', { allowPrivateNetworks: true, requireHttps: true, resolve })
    assert.ok(!live.ok)
  })
})

describe('guardedLookup (connection time, after DNS)', () => {
  const lookupAsync = (allow: boolean, host: string, options: { all?: boolean; family?: number }) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }>((resolve) => {
      guardedLookup(allow)(host, options, (err, address, family) => resolve({ err, address, family }))
    })

  test('fails a single-address lookup that lands on loopback', async () => {
    const { err } = await lookupAsync(false, 'localhost', { family: 4 })
    assert.ok(err)
    assert.equal(err.code, FORBIDDEN_ADDRESS_CODE)
    assert.match(err.message, /localhost \(127\.0\.0\.1\).*loopback/)
  })

  test('fails an all: true lookup that includes a loopback address', async () => {
    const { err } = await lookupAsync(false, 'localhost', { all: true })
    assert.ok(err)
    assert.equal(err.code, FORBIDDEN_ADDRESS_CODE)
  })

  test('passes results through unchanged when private networks are allowed', async () => {
    const single = await lookupAsync(true, 'localhost', { family: 4 })
    assert.equal(single.err, null)
    assert.equal(single.address, '127.0.0.1')
    assert.equal(single.family, 4)
    const all = await lookupAsync(true, 'localhost', { all: true })
    assert.equal(all.err, null)
    assert.ok(Array.isArray(all.address))
    assert.ok(all.address.some((entry) => entry.address === '127.0.0.1'))
  })
})

describe('createWebhookAgent (connection time)', () => {
  let server: Server
  let port: number
  let connections = 0
  let requests = 0

  before(async () => {
    server = createServer((_req, res) => {
      requests++
      res.writeHead(204).end()
    })
    server.on('connection', () => connections++)
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    port = (server.address() as AddressInfo).port
  })

  after(async () => {
    server.closeAllConnections()
    server.close()
    await once(server, 'close')
  })

  async function attempt(url: string, allowPrivateNetworks: boolean) {
    const agent = createWebhookAgent({ allowPrivateNetworks, connectTimeoutMs: 2_000 })
    try {
      const response = await request(url, { method: 'POST', body: '{}', dispatcher: agent })
      await response.body.dump()
      return { statusCode: response.statusCode, error: undefined }
    } catch (error) {
      return { statusCode: undefined, error: error as NodeJS.ErrnoException }
    } finally {
      await agent.destroy()
    }
  }

  test('refuses an IP-literal loopback URL before connecting', async () => {
    const before = { connections, requests }
    const { error } = await attempt(`http://127.0.0.1:${port}/hook`, false)
    assert.ok(error, 'the request must fail')
    assert.equal(error.code, FORBIDDEN_ADDRESS_CODE)
    assert.match(error.message, /127\.0\.0\.1.*loopback/)
    assert.deepEqual({ connections, requests }, before, 'the server must receive nothing')
  })

  test('refuses a name that resolves to loopback (the lookup path)', async () => {
    const before = { connections, requests }
    const { error } = await attempt(`http://localhost:${port}/hook`, false)
    assert.ok(error, 'the request must fail')
    assert.equal(error.code, FORBIDDEN_ADDRESS_CODE)
    assert.deepEqual({ connections, requests }, before, 'the server must receive nothing')
  })

  test('refuses the IPv4-mapped spelling of loopback', async () => {
    const before = { connections, requests }
    const { error } = await attempt(`http://[::ffff:127.0.0.1]:${port}/hook`, false)
    assert.ok(error)
    assert.equal(error.code, FORBIDDEN_ADDRESS_CODE)
    assert.deepEqual({ connections, requests }, before)
  })

  test('connects to both when private networks are allowed', async () => {
    const before = requests
    const literal = await attempt(`http://127.0.0.1:${port}/hook`, true)
    assert.equal(literal.error, undefined)
    assert.equal(literal.statusCode, 204)
    const named = await attempt(`http://localhost:${port}/hook`, true)
    assert.equal(named.error, undefined)
    assert.equal(named.statusCode, 204)
    assert.equal(requests, before + 2)
  })

  test('does not follow redirects', async () => {
    const redirecting = createServer((_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${port}/elsewhere` }).end())
    redirecting.listen(0, '127.0.0.1')
    await once(redirecting, 'listening')
    try {
      const before = requests
      const { statusCode } = await attempt(`http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/`, true)
      assert.equal(statusCode, 302)
      assert.equal(requests, before)
    } finally {
      redirecting.closeAllConnections()
      redirecting.close()
    }
  })
})
