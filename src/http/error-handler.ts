import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isDatabaseUnavailable, isStillReferenced, isUniqueViolation } from '../db/errors.ts'
import { AppError, ERROR_TITLES, type ErrorCode, type FieldError } from '../lib/errors.ts'
import type { ProblemBody } from './schemas.ts'
import { API_VERSION } from './versioning.ts'

const PROBLEM_CONTENT_TYPE = 'application/problem+json'

declare module 'fastify' {
  interface FastifyRequest {
    /** The code of the problem this request was answered with, if any (idempotency.ts reads it). */
    problemCode: ErrorCode | null
  }
}

export function problemType(code: string): string {
  return `urn:problem-type:${code}`
}

/** Renders every failure, ours or the framework's, as RFC 9457 problem details with a stable code. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.decorateRequest('problemCode', null)
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const appError = toAppError(error)
    if (appError.status >= 500) {
      request.log.error({ err: error }, 'request failed')
    } else if (error !== appError && appError.code !== 'validation_failed') {
      request.log.info({ code: appError.code }, appError.message)
    }
    return sendProblem(request, reply, appError)
  })

  app.setNotFoundHandler((request, reply) =>
    sendProblem(request, reply, new AppError('not_found', `no route for ${request.method} ${request.url.split('?')[0]}`)),
  )
}

/**
 * Fastify's `frameworkErrors` option: the router refused the request before any hook ran (a path
 * parameter whose %-escapes do not decode, one longer than the router allows). It answers like every
 * other failure, with the headers the onRequest hooks would have set (`headers`: the security
 * headers, see security-headers.ts).
 */
export function frameworkErrorHandler(headers: Readonly<Record<string, string>>) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    reply.headers(headers).header('x-request-id', request.id).header('api-version', API_VERSION)
    const appError = toAppError(error)
    if (appError.status >= 500) request.log.error({ err: error }, 'request failed')
    else request.log.info({ code: appError.code, reason: error.code }, appError.message)
    return sendProblem(request, reply, appError)
  }
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  const body: ProblemBody = {
    type: problemType(error.code),
    title: ERROR_TITLES[error.code],
    status: error.status,
    detail: error.message,
    code: error.code,
    request_id: request.id,
    ...(error.errors ? { errors: error.errors } : {}),
  }
  request.problemCode = error.code
  if (error.status === 401) reply.header('www-authenticate', 'Bearer')
  for (const [name, value] of Object.entries(error.headers ?? {})) reply.header(name, value)
  return reply.code(error.status).type(PROBLEM_CONTENT_TYPE).send(body)
}


function toAppError(error: FastifyError & { validation?: unknown; validationContext?: string }): AppError {
  if (error instanceof AppError) return error
  // Ids are opaque and every path parameter names a resource: one that does not fit its route's
  // form names none, exactly like a well-formed id that is not in the caller's store.
  if (Array.isArray(error.validation) && error.validationContext === 'params') return nothingAt()
  // Only request validation names a part of the request; a response failing its schema is our bug.
  if (Array.isArray(error.validation) && error.validationContext) return validationError(error.validation, error.validationContext)
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return new AppError('validation_failed', 'the path holds a %-escape that does not decode to UTF-8 text', {
        errors: [{ path: '/path', message: 'is not valid percent-encoded UTF-8' }],
      })
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return nothingAt()
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type', 'request bodies must be application/json')
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'request bodies are limited to 1 MiB')
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_json', 'the body is empty but the content type says JSON')
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('invalid_json', 'the body is not valid JSON')
  }
  // The database is down or restarting: the request failed for want of it, not for a bug, and asking
  // again shortly helps (docs/contract.md, section 18: fail fast with 503 while it is down).
  if (isDatabaseUnavailable(error)) return new AppError('service_unavailable', 'the database cannot be reached right now; retry shortly')
  if (isUniqueViolation(error)) return new AppError('conflict', 'a resource with these unique values already exists')
  if (isStillReferenced(error)) return new AppError('conflict', 'the resource is still referenced by other resources')
  if (error.statusCode === 429) return new AppError('rate_limited', error.message)
  if (error instanceof SyntaxError || (error.statusCode === 400 && error.code?.startsWith('FST_ERR_CTP'))) {
    return new AppError('invalid_json', 'the body is not valid JSON')
  }
  if (error.statusCode === 413) return new AppError('payload_too_large', 'request bodies are limited to 1 MiB')
  if (error.statusCode === 415) return new AppError('unsupported_media_type', 'request bodies must be application/json')
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new AppError('validation_failed', error.message)
  }
  return new AppError('internal_error', 'an unexpected error occurred; quote the request_id when reporting it')
}

/** The path is not repeated: a refused one may hold anything, a card number included. */
function nothingAt(): AppError {
  return new AppError('not_found', 'the path names no resource of this API')
}

interface AjvIssue {
  instancePath?: string
  keyword?: string
  message?: string
  params?: Record<string, unknown>
}

const PART_NAMES: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' }

function validationError(issues: AjvIssue[], context: string): AppError {
  const part = PART_NAMES[context] ?? context
  const errors: FieldError[] = issues.map((issue) => {
    let path = `/${part}${issue.instancePath ?? ''}`
    let message = issue.message ?? 'is invalid'
    if (issue.keyword === 'required' && typeof issue.params?.missingProperty === 'string') {
      path += `/${issue.params.missingProperty}`
      message = 'is required'
    } else if (issue.keyword === 'additionalProperties' && typeof issue.params?.additionalProperty === 'string') {
      path += `/${issue.params.additionalProperty}`
      message = 'is not a known field'
    }
    return { path, message }
  })
  const first = errors[0]
  const detail = first ? `${first.path} ${first.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}` : 'invalid request'
  return new AppError('validation_failed', detail, { errors })
}
