import type { FastifyRequest } from 'fastify'

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
  const groups = expandIPv6(address)
  if (!groups) return address.toLowerCase()
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.')
  }
  return `${groups.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`
}

/** The eight 16-bit groups of an IPv6 address (zone id dropped), or undefined when it is not one. */
function expandIPv6(address: string): number[] | undefined {
  const halves = address.replace(/%.*$/, '').split('::')
  if (halves.length > 2) return undefined
  const parts = halves.map((half) => (half === '' ? [] : half.split(':')))
  const last = parts[parts.length - 1]!
  const dotted = last[last.length - 1]
  if (dotted?.includes('.')) {
    const octets = dotted.split('.').map(Number)
    if (octets.length !== 4 || octets.some((octet) => !(octet >= 0 && octet <= 255))) return undefined
    last.splice(-1, 1, ((octets[0]! << 8) | octets[1]!).toString(16), ((octets[2]! << 8) | octets[3]!).toString(16))
  }
  const [head, tail = []] = parts as [string[], string[]?]
  const missing = 8 - head.length - tail.length
  if (parts.length === 2 ? missing < 1 : missing !== 0) return undefined
  const all = [...head, ...Array<string>(parts.length === 2 ? missing : 0).fill('0'), ...tail]
  if (!all.every((group) => /^[0-9a-f]{1,4}$/i.test(group))) return undefined
  return all.map((group) => Number.parseInt(group, 16))
}
