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
 * Bodies are at most 64 levels deep (json-body.ts), so the recursion is bounded. This runs on every
 * request (query, path and headers at least), so a pointer is only written out for a value found.
 */
export function findUnstorableText(value: unknown, path: string, found: FieldError[]): void {
  walk(value, [path], found)
}

/** `segments` is the root's pointer followed by the unescaped keys and indexes leading to `value`. */
function walk(value: unknown, segments: string[], found: FieldError[]): void {
  if (typeof value === 'string') {
    const message = problemOf(value)
    if (message) found.push({ path: pointerOf(segments), message })
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      segments.push(String(i))
      walk(value[i], segments, found)
      segments.pop()
    }
  } else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      segments.push(key)
      const message = problemOf(key)
      if (message) found.push({ path: pointerOf(segments), message })
      else walk((value as Record<string, unknown>)[key], segments, found)
      segments.pop()
    }
  }
}

function pointerOf(segments: string[]): string {
  let pointer = segments[0]!
  for (let i = 1; i < segments.length; i++) pointer += `/${segments[i]!.replace(/~/g, '~0').replace(/\//g, '~1')}`
  return pointer
}
