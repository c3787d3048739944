import type { FastifyRequest } from 'fastify'
import ipaddr from 'ipaddr.js'

/**
 * Fastify's `trustProxy` for TRUST_PROXY (parsed in src/config.ts), which decides `request.ip`, the address
 * every limit below counts against. A list trusts those proxies only: X-Forwarded-For is read back
 * from the socket's peer while each hop is one of them. A hop count trusts that many hops whoever they
 * are (Fastify itself refuses a bare number, so it is given as a function): use it only when nothing
 * but the proxies can reach the service, or a client connecting directly can name its own address.
 */
export function trustProxyOption(setting: false | number | string[]): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof setting !== 'number') return setting
  const hops = setting
  return (_address, hop) => hop < hops
}

/**
 * Whom a request counts against: the client address, as @fastify/rate-limit's default key does,
 * without its per-request address parsing in the common case. An IPv4 address is its own key; an
 * IPv6 address counts against its /64 (one subscriber's usual allocation, so rotating addresses
 * within it does not escape the limit) and an IPv4-mapped one as its IPv4 address.
 */
export function rateLimitKey(request: FastifyRequest): string {
  // A client that has already gone has no address (the socket is closed): one shared key, not a crash (a 500 logged per request under load).
  const ip = request.ip as string | undefined
  if (!ip) return 'gone'
  return ip.includes(':') ? ipv6Key(ip) : ip
}

export function ipv6Key(address: string): string {
  let parsed: ipaddr.IPv6
  try {
    parsed = ipaddr.IPv6.parse(address)
  } catch {
    return address.toLowerCase()
  }
  if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString()
  // The first four 16-bit parts are the /64.
  return `${parsed.parts.slice(0, 4).map((part) => part.toString(16)).join(':')}::/64`
}
