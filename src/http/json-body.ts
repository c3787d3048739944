import type { FastifyInstance } from 'fastify'
import { AppError } from '../lib/errors.ts'

/** The deepest nesting of arrays and objects a JSON body may have. */
export const MAX_JSON_DEPTH = 64

/**
 * The one JSON body parser: Fastify's own (secure-json-parse, refusing `__proto__` and
 * `constructor.prototype` keys), behind a depth check. Deeper bodies are 400 invalid_json before
 * they are parsed, so nothing after it (validation, the card-data and text guards) walks a
 * structure deep enough to overflow the stack.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, raw, done) => {
    const body = typeof raw === 'string' ? raw : raw.toString('utf8')
    if (jsonNestingExceeds(body, MAX_JSON_DEPTH)) {
      done(new AppError('invalid_json', `the body is nested deeper than ${MAX_JSON_DEPTH} levels`), undefined)
      return
    }
    parse(request, body, done)
  })
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_ARRAY = 0x5b
const OPEN_OBJECT = 0x7b
const CLOSE_ARRAY = 0x5d
const CLOSE_OBJECT = 0x7d

/**
 * True when the text opens more than `limit` arrays or objects inside one another. One pass, no
 * recursion, no parsing: brackets inside strings (escaped quotes included) do not count. Text that
 * is not JSON is left for the parser to refuse.
 */
export function jsonNestingExceeds(text: string, limit: number): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (inString) {
      if (code === BACKSLASH) i++
      else if (code === QUOTE) inString = false
    } else if (code === QUOTE) {
      inString = true
    } else if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
      if (++depth > limit) return true
    } else if (code === CLOSE_ARRAY || code === CLOSE_OBJECT) {
      depth--
    }
  }
  return false
}
