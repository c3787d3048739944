import type { FastifyRequest } from 'fastify'
import ipaddr from 'ipaddr.js'

/**
 * Whom a request counts against: the client address, as @fastify/rate-limit's default key does,
 * without its per-request address parsing in the common case. An IPv4 address is its own key; an
 * IPv6 address counts against its /64 (one subscriber's usual allocation, so rotating addresses
 * within it does not escape the limit) and an IPv4-mapped one as its IPv4 address.
 */
export function rateLimitKey(request: FastifyRequest): string {
  const ip = request.ip
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
