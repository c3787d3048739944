/**
 * HTTP plumbing of the BigCommerce simulator: error bodies, refusals, header and body checks.
 *
 * "§n" in the comments refers to a section of docs/platform-api.md, the source of truth; where that
 * file leaves a point open, the choice made here is marked "(simulator's reading)".
 */
import type { IncomingHttpHeaders } from 'node:http'

/** The three hosts (§0 "Hosts and paths"). */
export type Host = 'api' | 'payments' | 'login'

/**
 * Error body shapes (§0 "Error bodies"):
 * - v2: a bare array `[{status, message}]`;
 * - v3 and the payments host: `{status, title, type, detail?, code?, errors?}`;
 * - v3 refunds (createOrderRefund): `{data:[{status, title, type}]}`;
 * - customers 401/403: `{code, message}` (CUST example; other customers errors use the v3 shape);
 * - login: not in the reference (§1.2); RFC 6749 `{error, error_description}` (simulator's reading).
 */
export type ErrorStyle = 'v2' | 'v3' | 'v3-refund' | 'customers' | 'payments' | 'login'

/** Why a request was refused; every refusal is a violation the test can assert on. */
export type ViolationKind =
  | 'route' // unknown host, path or method
  | 'auth' // missing or wrong credentials (401)
  | 'scope' // token lacks the operation's scope (403)
  | 'header' // Accept / Content-Type / Authorization format (406, 415, 400)
  | 'body' // malformed JSON or a shape the reference does not allow (400, 422)
  | 'state' // well-formed but refused because of the store's state (404, 409, 422 with 30xxx)
  | 'leak' // accepted, but carried something it must not (X-Auth-Token on the payments host)

export interface Violation {
  at: Date
  operation: string
  method: string
  url: string
  status: number
  kind: ViolationKind
  message: string
  /** The integer platform code, on the payments host (§3.3). */
  code?: number
}

export const ERROR_TYPE_URL = 'https://developer.bigcommerce.com/api-docs/getting-started/api-status-codes'

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
}

export function titleOf(status: number): string {
  return TITLES[status] ?? 'Error'
}

/** Thrown by a handler to refuse a request; the server answers it and records a violation. */
export class Refusal extends Error {
  readonly status: number
  readonly kind: ViolationKind
  readonly code: number | undefined
  readonly errors: Record<string, string> | undefined
  readonly title: string | undefined
  /** Overrides the route's error style (e.g. a refund 422 inside a v3 route). */
  readonly style: ErrorStyle | undefined
  /** A platform outcome (a decline), not the client's mistake: answered, not recorded as a violation. */
  readonly platformOutcome: boolean
  constructor(
    status: number,
    kind: ViolationKind,
    message: string,
    extra: { code?: number; errors?: Record<string, string>; title?: string; style?: ErrorStyle; platformOutcome?: boolean } = {},
  ) {
    super(message)
    this.status = status
    this.kind = kind
    this.code = extra.code
    this.errors = extra.errors
    this.title = extra.title
    this.style = extra.style
    this.platformOutcome = extra.platformOutcome ?? false
  }
}

/** The body the platform would send for a refusal, in the route's style (§0 "Error bodies"). */
export function errorBody(style: ErrorStyle, r: Refusal): unknown {
  const title = r.title ?? r.message
  switch (style) {
    case 'v2':
      return [{ status: r.status, message: r.message }]
    case 'v3-refund':
      return { data: [{ status: r.status, title, type: ERROR_TYPE_URL }] }
    case 'customers':
      if (r.status === 401 || r.status === 403) return { code: r.status, message: r.status === 401 ? 'Unauthorized' : r.message }
      return withOptional({ status: r.status, title, type: ERROR_TYPE_URL, detail: r.message }, r)
    case 'login':
      return { error: r.title ?? 'invalid_request', error_description: r.message }
    case 'v3':
    case 'payments':
      return withOptional({ status: r.status, title, type: ERROR_TYPE_URL, detail: r.message }, r)
  }
}

function withOptional(body: Record<string, unknown>, r: Refusal): Record<string, unknown> {
  if (r.code !== undefined) body.code = r.code
  if (r.errors !== undefined) body.errors = r.errors
  return body
}

// ---------------------------------------------------------------------------------------------
// Header checks (§0 "Headers"; CODES: 406 for an unsupported Accept, 415 for Content-Type).
// ---------------------------------------------------------------------------------------------

function mediaTypes(value: string | undefined): string[] {
  if (!value) return []
  return value.split(',').map((part) => part.split(';')[0]!.trim().toLowerCase()).filter(Boolean)
}

/**
 * `Accept` must name `expected` (O2/O3/PAT/METH mark `Accept: application/json` required; PROC's enum
 * allows only `application/vnd.bc.v1+json`). A missing header or a bare `*∕*` is refused with 406
 * (simulator's reading: the reference marks the parameter required and CODES gives 406).
 */
export function requireAccept(headers: IncomingHttpHeaders, expected: string): void {
  const types = mediaTypes(headers.accept)
  if (!types.includes(expected)) {
    throw new Refusal(406, 'header', `The Accept header must be ${expected}; got ${headers.accept ?? '(none)'}`)
  }
}

/** `Content-Type: application/json` on every request with a body (§0; CODES 415). */
export function requireJsonContentType(headers: IncomingHttpHeaders, alsoAllowed: readonly string[] = []): string {
  const type = mediaTypes(headers['content-type'])[0]
  if (type !== 'application/json' && !(type && alsoAllowed.includes(type))) {
    throw new Refusal(415, 'header', `The Content-Type header must be application/json; got ${headers['content-type'] ?? '(none)'}`)
  }
  return type
}

// ---------------------------------------------------------------------------------------------
// Body checks. `check` collects field errors so one answer can name every bad field, as the v3
// `errors:{field: text}` map does (§0).
// ---------------------------------------------------------------------------------------------

export function parseJson(raw: string): unknown {
  if (raw.trim() === '') throw new Refusal(400, 'body', 'The request body is empty')
  try {
    return JSON.parse(raw)
  } catch {
    throw new Refusal(400, 'body', 'The request body is not valid JSON')
  }
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

export function isInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v)
}

/** A JSON number with at most `decimals` places (money in decimal major units, §0 "Money"). */
export function isDecimal(v: unknown, decimals: number): v is number {
  if (typeof v !== 'number' || !Number.isFinite(v)) return false
  const scaled = v * 10 ** decimals
  return Math.abs(scaled - Math.round(scaled)) < 1e-6
}

export class FieldErrors {
  readonly errors: Record<string, string> = {}
  add(field: string, message: string): void {
    if (!(field in this.errors)) this.errors[field] = message
  }
  get empty(): boolean {
    return Object.keys(this.errors).length === 0
  }
  /** Throws a refusal naming every bad field. */
  throwIfAny(status: number, extra: { code?: number; style?: ErrorStyle } = {}): void {
    if (this.empty) return
    const message = Object.entries(this.errors)
      .map(([field, text]) => `${field}: ${text}`)
      .join('; ')
    throw new Refusal(status, 'body', message, { ...extra, errors: this.errors, title: 'Input is invalid' })
  }
}

/** Money held as integer ten-thousandths, the precision v2 answers in ("225.0000", §0 "Money"). */
export const toUnits = (major: number): number => Math.round(major * 10_000)
export const fourDp = (units: number): string => (units / 10_000).toFixed(4)
export const twoDpNumber = (units: number): number => Math.round(units / 100) / 100
export const minorOf = (units: number): number => Math.round(units / 100)

/** RFC 2822 as v2 writes dates: 'Tue, 05 Mar 2019 21:40:11 +0000' (O2 order_Resp example). */
export function rfc2822(d: Date): string {
  return d.toUTCString().replace('GMT', '+0000')
}

export function pick<T>(list: readonly T[], page: number, limit: number): T[] {
  return list.slice((page - 1) * limit, page * limit)
}

export function pagination(total: number, page: number, limit: number): Record<string, unknown> {
  return {
    pagination: {
      total,
      count: Math.max(0, Math.min(limit, total - (page - 1) * limit)),
      per_page: limit,
      current_page: page,
      total_pages: Math.max(1, Math.ceil(total / limit)),
      links: { current: `?page=${page}&limit=${limit}` },
    },
  }
}

/** `page` / `limit` query parameters; invalid values are a 400/422 in the route's style. */
export function pageParams(query: URLSearchParams, status: number, maxLimit = 250, defaultLimit = 50): { page: number; limit: number } {
  const page = query.get('page') === null ? 1 : Number(query.get('page'))
  const limit = query.get('limit') === null ? defaultLimit : Number(query.get('limit'))
  if (!Number.isInteger(page) || page < 1) throw new Refusal(status, 'body', 'page must be a positive integer')
  if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit) throw new Refusal(status, 'body', `limit must be an integer from 1 to ${maxLimit}`)
  return { page, limit }
}
