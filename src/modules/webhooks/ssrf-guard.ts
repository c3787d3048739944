import dns from 'node:dns'
import { lookup as lookupPromise } from 'node:dns/promises'
import { isIP, type LookupFunction } from 'node:net'
import ipaddr from 'ipaddr.js'
import { Agent, buildConnector } from 'undici'

/*
 * SSRF guard for outbound webhooks (docs/contract.md, Webhook delivery, the rule on endpoint URLs).
 *
 * Two checks, both lifted by WEBHOOK_ALLOW_PRIVATE_NETWORKS=true (the caller passes `allowPrivateNetworks`):
 * - registration time, `checkWebhookUrl`: scheme, credentials, https for live stores, and every address the
 *   host resolves to must be public unicast;
 * - connection time, `createWebhookAgent`: the address the socket actually connects to is checked after DNS
 *   resolution (a `lookup` hook in net/tls.connect), so a name that resolved to a public address at
 *   registration and to 127.0.0.1 at delivery (DNS rebinding) is still refused. net.connect skips `lookup`
 *   for IP-literal hosts, so the agent's connector checks IP literals itself before connecting.
 *
 * Policy: an address is allowed only when ipaddr.js classifies it as 'unicast' (IPv4-mapped IPv6 is judged
 * as the IPv4 inside it). Every other range is refused, including NAT64 (64:ff9b::/96) and 6to4 (2002::/16)
 * even when the embedded IPv4 is public; their reason names the embedded address.
 */

export const FORBIDDEN_ADDRESS_CODE = 'ERR_WEBHOOK_ADDRESS_FORBIDDEN'

const IPV4_REASONS: Record<string, string> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local (includes cloud metadata 169.254.169.254)',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT',
  private: 'private',
  reserved: 'reserved',
  benchmarking: 'benchmarking',
  as112: 'AS112 anycast',
  amt: 'AMT anycast',
}

const IPV6_REASONS: Record<string, string> = {
  unspecified: 'unspecified',
  linkLocal: 'link-local',
  multicast: 'multicast',
  loopback: 'loopback',
  uniqueLocal: 'unique local',
  rfc6145: 'IPv4-translated',
  teredo: 'Teredo tunnel',
  deprecatedSiteLocal: 'site-local',
  discard: 'discard-only',
  reserved: 'reserved',
  benchmarking: 'benchmarking',
  amt: 'AMT anycast',
  as112v6: 'AS112 anycast',
}

/** AWS's IPv6 instance metadata endpoint (inside fc00::/7 anyway; named for a clearer reason). */
const AWS_IPV6_METADATA = ipaddr.IPv6.parse('fd00:ec2::254')

function ipv4Reason(address: ipaddr.IPv4): string | undefined {
  const range = address.range()
  if (range === 'unicast') return undefined
  return IPV4_REASONS[range] ?? `special-purpose (${range})`
}

function embeddedIpv4(parts: number[], high: number): ipaddr.IPv4 {
  const a = parts[high] ?? 0
  const b = parts[high + 1] ?? 0
  return new ipaddr.IPv4([a >> 8, a & 0xff, b >> 8, b & 0xff])
}

function ipv6Reason(address: ipaddr.IPv6): string | undefined {
  const range = address.range()
  switch (range) {
    case 'unicast': {
      // ::/96 outside :: and ::1 is the deprecated IPv4-compatible form (RFC 4291 2.5.5.1); ipaddr.js calls it unicast.
      if (address.parts.slice(0, 6).every((part) => part === 0)) return 'IPv4-compatible (deprecated)'
      return undefined
    }
    case 'ipv4Mapped':
      return ipv4Reason(address.toIPv4Address())
    case 'uniqueLocal':
      return address.match(AWS_IPV6_METADATA, 128) ? 'unique local (AWS metadata fd00:ec2::254)' : 'unique local'
    case 'rfc6052': {
      const inner = embeddedIpv4(address.parts, 6)
      const innerReason = ipv4Reason(inner)
      return `NAT64 of ${inner.toString()}${innerReason ? ` (${innerReason})` : ''}`
    }
    case '6to4': {
      const inner = embeddedIpv4(address.parts, 1)
      const innerReason = ipv4Reason(inner)
      return `6to4 of ${inner.toString()}${innerReason ? ` (${innerReason})` : ''}`
    }
    default:
      return IPV6_REASONS[range] ?? `special-purpose (${range})`
  }
}

/**
 * Why an outbound webhook may not connect to `address`, or undefined for a public unicast address.
 * Only strict IP literals are accepted (what net.isIP accepts, IPv6 with or without brackets/zone id);
 * anything else is refused as 'not an IP address'.
 */
export function forbiddenReason(address: string): string | undefined {
  const literal = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address
  if (isIP(literal) === 0) return 'not an IP address'
  let parsed: ipaddr.IPv4 | ipaddr.IPv6
  try {
    parsed = ipaddr.parse(literal)
  } catch {
    return 'not an IP address'
  }
  return parsed.kind() === 'ipv4' ? ipv4Reason(parsed as ipaddr.IPv4) : ipv6Reason(parsed as ipaddr.IPv6)
}

/** "10.0.0.5, a private address"; "169.254.169.254, a link-local address (includes cloud metadata ...)". */
function describeForbidden(address: string, reason: string): string {
  const match = /^([^(]*?)\s*(\(.*\))?$/.exec(reason)
  const head = match?.[1] || reason
  const tail = match?.[2] ? ` ${match[2]}` : ''
  const article = /^[aeiou]/i.test(head) && !/^unique/i.test(head) ? 'an' : 'a'
  return `${address}, ${article} ${head} address${tail}`
}

function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '')
  return name === 'localhost' || name.endsWith('.localhost')
}

async function defaultResolve(host: string): Promise<string[]> {
  const results = await lookupPromise(host, { all: true, verbatim: true })
  return results.map((result) => result.address)
}

export type WebhookUrlCheck = { ok: true } | { ok: false; reason: string }

/**
 * Registration-time check of a webhook endpoint URL. Reasons are sentences for a 400 error's detail.
 * With `allowPrivateNetworks` only the scheme, credentials and https rules apply (no DNS is done).
 */
export async function checkWebhookUrl(
  url: string,
  options: { allowPrivateNetworks: boolean; requireHttps: boolean; resolve?: (host: string) => Promise<string[]> },
): Promise<WebhookUrlCheck> {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return { ok: false, reason: 'The webhook URL is not a valid absolute URL.' }
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    return { ok: false, reason: `The webhook URL must use https (or http outside live mode), not ${parsed.protocol.replace(/:$/, '')}.` }
  }
  if (options.requireHttps && parsed.protocol !== 'https:') {
    return { ok: false, reason: 'The webhook URL must use https for live stores.' }
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return { ok: false, reason: 'The webhook URL must not contain credentials (user:password@).' }
  }
  if (options.allowPrivateNetworks) return { ok: true }

  const host = parsed.hostname
  const literal = host.startsWith('[') ? host.slice(1, -1) : host
  if (isIP(literal) !== 0) {
    const reason = forbiddenReason(literal)
    return reason === undefined
      ? { ok: true }
      : { ok: false, reason: `The webhook URL's host is ${describeForbidden(literal, reason)}; webhook endpoints must be public.` }
  }
  if (isLocalhostName(host)) {
    return { ok: false, reason: `The webhook URL's host ${host} is a loopback name; webhook endpoints must be public.` }
  }

  let addresses: string[]
  try {
    addresses = await (options.resolve ?? defaultResolve)(host)
  } catch {
    addresses = []
  }
  if (addresses.length === 0) {
    return { ok: false, reason: `The webhook URL's host ${host} does not resolve.` }
  }
  for (const address of addresses) {
    const reason = forbiddenReason(address)
    if (reason !== undefined) {
      return { ok: false, reason: `The webhook URL's host ${host} resolves to ${describeForbidden(address, reason)}; webhook endpoints must be public.` }
    }
  }
  return { ok: true }
}

export type ForbiddenAddressError = NodeJS.ErrnoException & { hostname: string; address: string }

export function forbiddenAddressError(hostname: string, address: string, reason: string): ForbiddenAddressError {
  const shown = hostname === address ? address : `${hostname} (${address})`
  const error = new Error(
    `Webhook connection to ${shown} refused: ${describeForbidden(address, reason)}.`,
  )
  return Object.assign(error, { code: FORBIDDEN_ADDRESS_CODE, hostname, address })
}

/**
 * A `dns.lookup`-compatible function (for net/tls.connect's `lookup`, which undici's connector passes on)
 * that fails the connection when the resolved address is forbidden. With `all: true` (what net.connect asks
 * for when autoSelectFamily is on, the default since Node 20) the connection fails if ANY resolved address is
 * forbidden, matching the registration-time rule.
 */
export function guardedLookup(allowPrivateNetworks: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, options, (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => {
      if (err) {
        callback(err, '', undefined)
        return
      }
      if (!allowPrivateNetworks) {
        const list = Array.isArray(address) ? address.map((entry) => entry.address) : [address]
        for (const candidate of list) {
          const reason = forbiddenReason(candidate)
          if (reason !== undefined) {
            callback(forbiddenAddressError(hostname, candidate, reason), '', undefined)
            return
          }
        }
      }
      callback(null, address, family)
    })
  }
}

/**
 * The undici dispatcher for webhook deliveries: keep-alive, connect timeout, the guarded lookup for names,
 * and an IP-literal check before connecting. Redirects are never followed (no redirect interceptor).
 */
export function createWebhookAgent(options: { allowPrivateNetworks: boolean; connectTimeoutMs?: number; connections?: number }): Agent {
  const connector = buildConnector({
    timeout: options.connectTimeoutMs ?? 10_000,
    keepAlive: true,
    lookup: guardedLookup(options.allowPrivateNetworks),
  })
  const connect: buildConnector.connector = (connectOptions, callback) => {
    if (!options.allowPrivateNetworks && isIP(connectOptions.hostname) !== 0) {
      const reason = forbiddenReason(connectOptions.hostname)
      if (reason !== undefined) {
        const error = forbiddenAddressError(connectOptions.hostname, connectOptions.hostname, reason)
        queueMicrotask(() => callback(error, null))
        return
      }
    }
    connector(connectOptions, callback)
  }
  return new Agent({
    connect,
    connections: options.connections ?? 16,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
  })
}
