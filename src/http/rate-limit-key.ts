import type { FastifyRequest } from 'fastify'
import { Address6 } from 'ip-address'

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
  let parsed: Address6
  try {
    parsed = new Address6(address)
  } catch {
    return address.toLowerCase()
  }
  if (parsed.isMapped4()) return parsed.to4().correctForm()
  // canonicalForm is eight 4-digit groups; the first four are the /64.
  const network = parsed.canonicalForm().split(':').slice(0, 4).map((group) => Number.parseInt(group, 16).toString(16))
  return `${network.join(':')}::/64`
}
