/**
 * The one registry of deprecated routes. A route listed here is marked `deprecated: true` in the
 * OpenAPI document and answers with Deprecation (RFC 9745), Sunset (RFC 8594) and a successor Link.
 */
export interface Deprecation {
  /** When the route became deprecated. */
  since: Date
  /** When it stops answering. */
  sunset: Date
  /** The route that replaces it, as a path under the API origin. */
  successor: string
}

export const DEPRECATED_ROUTES: Record<string, Deprecation> = {
  // The widget's first release read plans per product under a path segment; the query form replaced it.
  'GET /api/v1/storefront/products/:platform_product_id/plans': {
    since: new Date('2026-11-01T00:00:00Z'),
    sunset: new Date('2027-06-01T00:00:00Z'),
    successor: '/api/v1/storefront/plans',
  },
}

export function deprecationHeaders(deprecation: Deprecation): Record<string, string> {
  return {
    deprecation: `@${Math.floor(deprecation.since.getTime() / 1000)}`,
    sunset: deprecation.sunset.toUTCString(),
    link: `<${deprecation.successor}>; rel="successor-version"`,
  }
}
