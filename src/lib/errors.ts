/** The closed list of error codes a client may see, with the HTTP status each one answers. */
export const ERROR_STATUS = {
  validation_failed: 400,
  invalid_json: 400,
  card_data_rejected: 400,
  amount_too_large: 400,
  invalid_payment_instrument: 400,
  discount_not_found: 400,
  discount_expired: 400,
  discount_not_applicable: 400,
  unauthenticated: 401,
  invalid_token: 401,
  refund_failed: 402,
  forbidden: 403,
  insufficient_scope: 403,
  not_found: 404,
  method_not_allowed: 405,
  unsupported_version: 406,
  invalid_state: 409,
  conflict: 409,
  idempotency_conflict: 409,
  discount_exhausted: 409,
  billing_disabled: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
  platform_unavailable: 503,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

export const ERROR_TITLES: Record<ErrorCode, string> = {
  validation_failed: 'Validation failed',
  invalid_json: 'Malformed JSON body',
  card_data_rejected: 'Card data is not accepted',
  amount_too_large: 'Amount too large',
  invalid_payment_instrument: 'Not one of the customer\'s stored payment instruments',
  discount_not_found: 'No such discount code',
  discount_expired: 'The discount code is not usable now',
  discount_not_applicable: 'The discount code does not apply here',
  unauthenticated: 'Authentication required',
  invalid_token: 'Invalid or expired token',
  refund_failed: 'The gateway refused the refund',
  forbidden: 'Forbidden',
  insufficient_scope: "The key's scope does not allow this",
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  unsupported_version: 'Unsupported API version',
  invalid_state: 'Action not allowed in the current state',
  conflict: 'Conflict',
  idempotency_conflict: 'Idempotency key conflict',
  discount_exhausted: 'The discount code has been used up',
  billing_disabled: "The store's billing is switched off",
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  rate_limited: 'Too many requests',
  internal_error: 'Internal server error',
  service_unavailable: 'Service unavailable',
  platform_unavailable: 'The commerce platform could not be asked',
}

export interface FieldError {
  /** JSON pointer into the request, e.g. `/body/email` or `/query/limit`. */
  path: string
  message: string
}

/** The one error type domain code throws; the HTTP layer renders it as RFC 9457 problem details. */
export class AppError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly errors: FieldError[] | undefined
  readonly headers: Record<string, string> | undefined

  constructor(code: ErrorCode, detail: string, extra: { errors?: FieldError[]; headers?: Record<string, string> } = {}) {
    super(detail)
    this.name = 'AppError'
    this.code = code
    this.status = ERROR_STATUS[code]
    this.errors = extra.errors
    this.headers = extra.headers
  }
}

export const notFound = (what: string, id: string): AppError => new AppError('not_found', `${what} ${id} was not found`)

export const invalidField = (path: string, message: string): AppError =>
  new AppError('validation_failed', `${path} ${message}`, { errors: [{ path, message }] })
