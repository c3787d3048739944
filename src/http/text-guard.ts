import type { FastifyInstance } from 'fastify'
import { AppError, type FieldError } from '../lib/errors.ts'

const NUL = '\u0000'
const HOLDS_NUL = 'must not contain the NUL character (U+0000)'
const LONE_SURROGATE = 'must be well-formed Unicode text (it holds a lone surrogate)'

/**
 * Every string of this API is text PostgreSQL can store: no NUL character (U+0000), which text and
 * jsonb refuse, and no lone UTF-16 surrogate (`"\ud800"` is valid JSON but no character), which
 * jsonb refuses. Such a value could only fail later, as a 500. Every string of the decoded body, query,
 * path and headers, object keys included, is checked before validation, on every route, and the
 * error names each place.
 */
export function registerTextGuard(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    const errors: FieldError[] = []
    if (request.body !== undefined) findUnstorableText(request.body, '/body', errors)
    findUnstorableText(request.query, '/query', errors)
    findUnstorableText(request.params, '/path', errors)
    findUnstorableText(request.headers, '/header', errors)
    if (errors.length === 0) return done()
    const first = errors[0]!
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''
    done(new AppError('validation_failed', `${first.path} ${first.message}${more}`, { errors }))
  })
}

function problemOf(text: string): string | undefined {
  if (text.includes(NUL)) return HOLDS_NUL
  if (!text.isWellFormed()) return LONE_SURROGATE
  return undefined
}

/**
 * Adds the JSON pointer of every string (or object key) under `value` that PostgreSQL cannot store.
 * Bodies are at most 64 levels deep (json-body.ts), so the recursion is bounded.
 */
export function findUnstorableText(value: unknown, path: string, found: FieldError[]): void {
  if (typeof value === 'string') {
    const message = problemOf(value)
    if (message) found.push({ path, message })
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) findUnstorableText(value[i], `${path}/${i}`, found)
  } else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      const at = `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`
      const message = problemOf(key)
      if (message) found.push({ path: at, message })
      else findUnstorableText(child, at, found)
    }
  }
}
