// Request fuzzing driven by the served OpenAPI document (test/contract/fuzz.test.ts): every
// operation is read from the document, requests are built from its schemas (boundary-valid ones and
// malformed ones, with fast-check for the random part), each request is classified against the same
// schemas with Ajv (must it be refused, and with which codes), and every answer is checked against
// docs/contract.md, Errors and Card data.
import { Ajv, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import fc from 'fast-check'

export type Schema = Record<string, any>
export type Security = 'admin' | 'portal' | 'none'

export interface Param {
  name: string
  in: 'path' | 'query' | 'header'
  schema: Schema
  required: boolean
}

export interface Operation {
  id: string
  method: string
  /** The path template, e.g. /api/v1/admin/products/{id}. */
  path: string
  security: Security
  pathParams: Param[]
  query: Param[]
  headers: Param[]
  /** The JSON body schema, $refs resolved; undefined when the operation takes no body. */
  body: Schema | undefined
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

/** Every operation of the document, its schemas with `#/components/schemas/...` references inlined. */
export function operationsOf(doc: any): Operation[] {
  const resolve = (schema: unknown): any => {
    if (Array.isArray(schema)) return schema.map(resolve)
    if (schema === null || typeof schema !== 'object') return schema
    const ref = (schema as Schema).$ref
    if (typeof ref === 'string') {
      const name = ref.replace(/^#\/components\/schemas\//, '')
      const target = doc.components?.schemas?.[name]
      if (!target) throw new Error(`unresolved $ref ${ref}`)
      return resolve(target)
    }
    return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, resolve(value)]))
  }
  const operations: Operation[] = []
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method]
      if (!op) continue
      const params: Param[] = (op.parameters ?? []).map((p: any) => ({ name: p.name, in: p.in, schema: resolve(p.schema ?? {}), required: Boolean(p.required) }))
      const scheme = Object.keys(op.security?.[0] ?? {})[0]
      const body = op.requestBody?.content?.['application/json']?.schema
      operations.push({
        id: op.operationId,
        method: method.toUpperCase(),
        path,
        security: scheme === 'adminApiKey' ? 'admin' : scheme === 'portalSession' ? 'portal' : 'none',
        pathParams: params.filter((p) => p.in === 'path'),
        query: params.filter((p) => p.in === 'query'),
        headers: params.filter((p) => p.in === 'header'),
        body: body ? resolve(body) : undefined,
      })
    }
  }
  return operations
}

// ---------------------------------------------------------------------------------------------
// Values

/** JSON text inserted verbatim where a value goes: numbers JSON.stringify cannot write (1e309), deep nesting. */
export class RawJson {
  readonly text: string
  constructor(text: string) {
    this.text = text
  }
}

/** JSON text of a value that may hold RawJson pieces. */
export function serialize(value: unknown): string {
  if (value instanceof RawJson) return value.text
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : serialize(item))).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, child]) => child !== undefined)
    return `{${entries.map(([key, child]) => `${JSON.stringify(key)}:${serialize(child)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/**
 * encodeURIComponent that never throws: a lone surrogate (which it refuses) is written as the three
 * bytes WTF-8 would give it (%ED%A0%80 for U+D800), itself a malformed escape for the server.
 */
export function encodeLoose(text: string): string {
  let out = ''
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      out += encodeURIComponent(text.slice(i, i + 2))
      i++
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      out += `%${(0xe0 | (unit >> 12)).toString(16).toUpperCase()}%${(0x80 | ((unit >> 6) & 0x3f)).toString(16).toUpperCase()}%${(0x80 | (unit & 0x3f)).toString(16).toUpperCase()}`
    } else out += encodeURIComponent(text[i]!)
  }
  return out
}

/** Luhn-valid test numbers (none is a real card), written the ways a hostile client might. */
export const CARDS = {
  plain: '4111111111111111',
  /** The number followed by a CVV, grouped by spaces. */
  withCvv: '4111 1111 1111 1111 123',
  dashed: '5555-5555-5555-4444',
  dashedWithCvv: '4111-1111-1111-1111-123',
  spacedAmex: '3782 822463 10005',
  fullWidth: '４１１１１１１１１１１１１１１１',
} as const
/** The digit runs of CARDS, as they must never appear in a log line (after normalising). */
export const CARD_DIGITS = ['4111111111111111', '5555555555554444', '378282246310005'] as const

/** A log line as a scanner would read it: full-width digits folded, %3N decoded, separators dropped. */
export function cardDigitsIn(line: string): string | undefined {
  const normal = line.normalize('NFKC').replace(/%3([0-9])/gi, '$1').replace(/[\s\-]|\\u00a0|\\n/g, '')
  return CARD_DIGITS.find((digits) => normal.includes(digits))
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const ID_PATTERN = /^\^([a-z]+)_\[0-9A-HJKMNP-TV-Z\]\{26\}\$$/

/** The id prefix a string schema's pattern asks for ('prod' for ^prod_...$), if it is an id. */
export function idPrefixOf(schema: Schema): string | undefined {
  return typeof schema.pattern === 'string' ? ID_PATTERN.exec(schema.pattern)?.[1] : undefined
}

/** Ids known to exist, by prefix, and realistic values for free-form fields, by field name. */
export interface FuzzContext {
  ids: Record<string, string[]>
  strings: Record<string, string[]>
}

/** A well-formed id no resource has (a ULID from far in the future). */
export const UNKNOWN_ULID = '7ZZZZZZZZZZZZZZZZZZZZZZZZZ'

const DAY = 86_400_000
/** A time safely in the future of every store clock and within 10 years of now. */
export function futureTime(days = 30): string {
  return new Date(Date.now() + days * DAY).toISOString()
}

/** One deterministic valid value: real ids, realistic strings, the smallest valid numbers. */
export function exampleValue(schema: Schema, ctx: FuzzContext, field = ''): unknown {
  if (schema.enum) return schema.enum.find((value: unknown) => value !== null)
  if (schema.anyOf) return exampleValue(schema.anyOf[0], ctx, field)
  switch (schema.type) {
    case 'string': {
      const prefix = idPrefixOf(schema)
      if (prefix) return ctx.ids[prefix]?.[0] ?? `${prefix}_${UNKNOWN_ULID}`
      const known = ctx.strings[field]?.[0]
      if (known !== undefined) return known
      if (schema.format === 'email') return 'fuzz@example.com'
      if (schema.format === 'date-time') return futureTime()
      if (schema.format === 'uri') return 'http://127.0.0.1:9/hooks'
      if (typeof schema.example === 'string') return schema.example
      return 'x'.repeat(Math.max(schema.minLength ?? 1, 1))
    }
    case 'integer':
    case 'number':
      return Math.min(Math.max(1, schema.minimum ?? 1), schema.maximum ?? Number.MAX_SAFE_INTEGER)
    case 'boolean':
      return false
    case 'array':
      return Array.from({ length: Math.max(schema.minItems ?? 1, 1) }, () => exampleValue(schema.items ?? {}, ctx, field))
    case 'object': {
      const out: Record<string, unknown> = {}
      const properties: Record<string, Schema> = schema.properties ?? {}
      const required: string[] = schema.required ?? []
      for (const name of required) out[name] = exampleValue(properties[name] ?? {}, ctx, name)
      if (required.length === 0 && (schema.minProperties ?? 0) > 0) {
        const first = Object.keys(properties)[0]
        if (first) out[first] = exampleValue(properties[first]!, ctx, first)
      }
      return out
    }
    default:
      return null
  }
}

/** Every property filled, strings at their maximum length: the other end of the valid range. */
export function maximalValue(schema: Schema, ctx: FuzzContext, field = ''): unknown {
  if (schema.enum) return schema.enum.filter((value: unknown) => value !== null).at(-1)
  if (schema.anyOf) return maximalValue(schema.anyOf.at(-1), ctx, field)
  switch (schema.type) {
    case 'string': {
      if (idPrefixOf(schema) || schema.pattern || schema.format === 'date-time') return exampleValue(schema, ctx, field)
      if (schema.format === 'email') return `${'a'.repeat(64)}@${'b'.repeat(60)}.example.com`.slice(0, schema.maxLength ?? 254)
      if (schema.format === 'uri') return `http://127.0.0.1:9/${'a'.repeat(Math.max(0, (schema.maxLength ?? 100) - 19))}`
      if (ctx.strings[field]?.length) return exampleValue(schema, ctx, field)
      // The maximum counted in code points, made of a 4-byte character to stress byte-length assumptions.
      return '😀'.repeat(Math.min(schema.maxLength ?? 300, 20_000))
    }
    case 'integer':
    case 'number':
      return schema.maximum ?? Number.MAX_SAFE_INTEGER
    case 'boolean':
      return true
    case 'array': {
      const item = schema.items ?? {}
      if (schema.uniqueItems && item.enum) return item.enum.slice(0, schema.maxItems ?? item.enum.length)
      const count = Math.min(schema.maxItems ?? 3, 50)
      return Array.from({ length: count }, (_, i) => (idPrefixOf(item) ? exampleValue(item, ctx, field) : item.type === 'integer' ? Math.min((item.minimum ?? 0) + i, item.maximum ?? Infinity) : maximalValue(item, ctx, field)))
    }
    case 'object': {
      const out: Record<string, unknown> = {}
      for (const [name, child] of Object.entries<Schema>(schema.properties ?? {})) out[name] = maximalValue(child, ctx, name)
      return out
    }
    default:
      return null
  }
}

const nullableArb = (schema: Schema, arb: fc.Arbitrary<unknown>) => (schema.nullable ? fc.oneof({ weight: 5, arbitrary: arb }, { weight: 1, arbitrary: fc.constant(null) }) : arb)

/** Valid values biased to the edges of the schema (shortest, longest, smallest, largest). */
export function validArb(schema: Schema, ctx: FuzzContext, field = ''): fc.Arbitrary<unknown> {
  if (schema.enum) return fc.constantFrom(...(schema.enum as unknown[]))
  if (schema.anyOf) return fc.oneof(...(schema.anyOf as Schema[]).map((branch) => validArb(branch, ctx, field)))
  switch (schema.type) {
    case 'string':
      return nullableArb(schema, validStringArb(schema, ctx, field))
    case 'integer': {
      const min = schema.minimum ?? -(2 ** 31)
      const max = schema.maximum ?? Number.MAX_SAFE_INTEGER
      return nullableArb(schema, fc.oneof(fc.constantFrom(min, max, Math.min(min + 1, max)), fc.integer({ min: Math.max(min, Number.MIN_SAFE_INTEGER), max })))
    }
    case 'number':
      return nullableArb(schema, fc.double({ min: schema.minimum ?? -1e9, max: schema.maximum ?? 1e9, noNaN: true }))
    case 'boolean':
      return nullableArb(schema, fc.boolean())
    case 'array': {
      const item = validArb(schema.items ?? {}, ctx, field)
      const constraints = { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 4, 4) }
      return nullableArb(schema, schema.uniqueItems ? fc.uniqueArray(item, { ...constraints, selector: (value) => JSON.stringify(value) }) : fc.array(item, constraints))
    }
    case 'object': {
      const properties: Record<string, Schema> = schema.properties ?? {}
      const names = Object.keys(properties)
      if (names.length === 0) return nullableArb(schema, fc.constant({}))
      const record = fc.record(Object.fromEntries(names.map((name) => [name, validArb(properties[name]!, ctx, name)])), {
        requiredKeys: (schema.required ?? []) as never[],
      }) as fc.Arbitrary<Record<string, unknown>>
      const min = schema.minProperties ?? 0
      const filled = min > 0 ? record.map((value) => (Object.keys(value).length >= min ? value : { ...value, [names[0]!]: exampleValue(properties[names[0]!]!, ctx, names[0]) })) : record
      return nullableArb(schema, filled)
    }
    default:
      return fc.constant(null)
  }
}

function ulidArb(): fc.Arbitrary<string> {
  return fc.array(fc.constantFrom(...CROCKFORD), { minLength: 26, maxLength: 26 }).map((chars) => chars.join(''))
}

function validStringArb(schema: Schema, ctx: FuzzContext, field: string): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0
  const max = schema.maxLength ?? 300
  const prefix = idPrefixOf(schema)
  if (prefix) {
    const real = ctx.ids[prefix] ?? []
    const fresh = ulidArb().map((ulid) => `${prefix}_${ulid}`)
    return real.length ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...real) }, { weight: 1, arbitrary: fresh }) : fresh
  }
  const known = ctx.strings[field] ?? []
  const withKnown = (arb: fc.Arbitrary<string>) => (known.length ? fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: arb }) : arb)
  if (schema.format === 'email') {
    return withKnown(fc.oneof(fc.emailAddress(), fc.constantFrom('a@b.co', `${'a'.repeat(64)}@example.com`, 'ada+tag@example.com')).filter((email) => email.length <= max))
  }
  if (schema.format === 'date-time') {
    return fc.oneof(
      fc.date({ min: new Date('1970-01-01T00:00:00.000Z'), max: new Date('2100-01-01T00:00:00.000Z'), noInvalidDate: true }).map((date) => date.toISOString()),
      fc.integer({ min: 1, max: 3650 }).map((days) => futureTime(days)),
      // Offsets, no fraction, a leap second, the far edges: valid RFC 3339 that a Date may read otherwise.
      fc.constantFrom('2026-11-22T05:00:00Z', ...DATE_TIME_EDGES.map(([, value]) => value)),
    )
  }
  if (schema.format === 'uri') {
    return fc.oneof(
      fc.constantFrom('http://127.0.0.1:9/hooks', 'https://127.0.0.1/x?y=1#z', `http://localhost:1/${'a'.repeat(Math.max(0, max - 19))}`, 'https://[::1]:8443/h', 'ftp://127.0.0.1/x', 'mailto:a@b.co'),
      fc.webUrl({ withQueryParameters: true, withFragments: true }).filter((url) => url.length >= min && url.length <= max),
    )
  }
  if (typeof schema.pattern === 'string') {
    return withKnown(fc.stringMatching(new RegExp(schema.pattern)).filter((text) => text.length >= min && text.length <= max))
  }
  const edges = fc.constantFrom('x'.repeat(Math.max(min, 1)), 'x'.repeat(Math.min(max, 20_000)), ' '.repeat(Math.max(min, 1)))
  return withKnown(fc.oneof(edges, fc.string({ minLength: min, maxLength: Math.min(max, 40), unit: 'grapheme' }), fc.string({ minLength: min, maxLength: Math.min(max, 40), unit: 'binary' })))
}

/** Strings every free-text field should survive (refused or stored, never a 5xx). */
export const HOSTILE_STRINGS: ReadonlyArray<readonly [string, string]> = [
  ['nul', 'a\u0000b'],
  ['only-nul', '\u0000'],
  ['controls', 'a\u0001\u0007\u001b[31m\u007f\u0085\u2028b'],
  ['crlf', 'line\r\nX-Injected: yes'],
  ['lone-surrogate', 'x\ud800y\udfffz'],
  ['bidi-zero-width', '\u202eevil\u200b\ufeff\u2066'],
  ['emoji-zwj', '👩‍👩‍👧‍👦🏳️‍🌈'],
  ['combining', `e${'\u0301'.repeat(200)}`],
  ['astral', '𝕏𝔸𝕄𝕃'],
  ['sql', "'; drop table stores; --"],
  ['html', '<script>alert(1)</script>'],
  ['template', '${7*7}{{7*7}}%s%n'],
  ['path', '../../etc/passwd'],
  ['whitespace', ' \t '],
  ['proto', '__proto__'],
]

/** RFC 3339 times that date-time validation accepts but a Date may not read as meant. */
export const DATE_TIME_EDGES: ReadonlyArray<readonly [string, string]> = [
  ['leap-second', '2026-06-30T23:59:60Z'],
  ['year-9999', '9999-12-31T23:59:59.999Z'],
  ['year-0001', '0001-01-01T00:00:00.000Z'],
  ['offset-plus-14', '2026-11-22T05:00:00+14:00'],
  ['lower-case-t-z', '2026-11-22t05:00:00z'],
]

const HOSTILE_NUMBERS: ReadonlyArray<readonly [string, unknown]> = [
  ['1e309', new RawJson('1e309')],
  ['-1e309', new RawJson('-1e309')],
  ['1e20', new RawJson('1e20')],
  ['2^53+1', new RawJson('9007199254740993')],
  ['30-digits', new RawJson('123456789012345678901234567890')],
  ['-1', -1],
  ['-0', new RawJson('-0')],
  ['1.5', 1.5],
  ['1e-400', new RawJson('1e-400')],
  ['string', '100'],
  ['true', true],
]

/** Values that break `schema` (or stress it): wrong types, one past each bound, hostile strings, card numbers. */
export function invalidValues(schema: Schema, ctx: FuzzContext, field = ''): Array<readonly [string, unknown]> {
  const out: Array<readonly [string, unknown]> = []
  const typeOf = schema.anyOf ? 'anyOf' : schema.type
  if (typeOf !== 'object') out.push(['object-for-value', { a: 1 }])
  if (typeOf !== 'array') out.push(['array-for-value', [exampleValue(schema, ctx, field)]])
  if (!schema.nullable) out.push(['null', null])
  if (schema.enum) out.push(['not-in-enum', 'nope'], ['enum-upper', String(schema.enum[0]).toUpperCase()])
  if (typeOf === 'string' || typeOf === 'anyOf') {
    out.push(['number-for-string', 12345], ['bool-for-string', false])
    if (schema.maxLength !== undefined) out.push(['one-too-long', 'y'.repeat(schema.maxLength + 1)])
    out.push(['100k-chars', 'z'.repeat(100_000)])
    if ((schema.minLength ?? 0) > 0) out.push(['empty', ''])
    const prefix = idPrefixOf(schema)
    if (prefix) out.push(['other-prefix', `${prefix === 'plan' ? 'prod' : 'plan'}_${(ctx.ids[prefix]?.[0] ?? `x_${UNKNOWN_ULID}`).split('_')[1]}`], ['lowercase-id', (ctx.ids[prefix]?.[0] ?? `${prefix}_${UNKNOWN_ULID}`).toLowerCase()])
    else if (schema.pattern) out.push(['pattern-miss', 'not a match ü'])
    if (schema.format) out.push([`not-${schema.format}`, schema.format === 'date-time' ? '2026-02-30T25:61:00Z' : 'not a valid value'])
    if (schema.format === 'date-time') out.push(...DATE_TIME_EDGES)
    for (const [label, value] of HOSTILE_STRINGS) out.push([label, value])
  }
  if (typeOf === 'integer' || typeOf === 'number') {
    if (schema.minimum !== undefined) out.push(['below-minimum', schema.minimum - 1])
    if (schema.maximum !== undefined) out.push(['above-maximum', schema.maximum + 1])
    for (const [label, value] of HOSTILE_NUMBERS) out.push([label, value])
  }
  if (typeOf === 'boolean') out.push(['string-for-bool', 'true'], ['number-for-bool', 1])
  if (typeOf === 'array') {
    out.push(['string-for-array', 'a,b'])
    if (schema.maxItems !== undefined) out.push(['too-many-items', Array.from({ length: schema.maxItems + 1 }, () => exampleValue(schema.items ?? {}, ctx, field))])
    if ((schema.minItems ?? 0) > 0) out.push(['no-items', []])
    if (schema.uniqueItems) out.push(['repeated-items', [exampleValue(schema.items ?? {}, ctx, field), exampleValue(schema.items ?? {}, ctx, field)]])
    out.push(['bad-item', [{ nested: true }]])
  }
  if (typeOf === 'object') {
    out.push(['array-for-object', []], ['string-for-object', 'x'])
    for (const name of (schema.required ?? []) as string[]) {
      const value = { ...(exampleValue(schema, ctx, field) as Record<string, unknown>) }
      delete value[name]
      out.push([`missing-${name}`, value])
    }
    out.push(['extra-field', { ...(exampleValue(schema, ctx, field) as Record<string, unknown>), colour: 'red' }])
  }
  return out
}

/** Random mutations of a valid object body: one field replaced by something that breaks or stresses it. */
export function mutatedBodyArb(schema: Schema, ctx: FuzzContext): fc.Arbitrary<{ label: string; value: unknown }> {
  const leaves = leafPaths(schema)
  const base = validArb(schema, ctx)
  if (leaves.length === 0) return base.map((value) => ({ label: 'random-valid', value }))
  const hostile = fc.oneof(
    fc.constantFrom(...HOSTILE_STRINGS).map(([label, value]) => [label, value] as const),
    fc.constantFrom(...HOSTILE_NUMBERS),
    fc.string({ unit: 'binary', maxLength: 60 }).map((value) => ['random-binary', value] as const),
    fc.jsonValue({ maxDepth: 3 }).map((value) => ['random-json', value] as const),
    fc.constantFrom(...Object.entries(CARDS)).map(([label, value]) => [`card-${label}`, value] as const),
  )
  return fc.tuple(base, fc.constantFrom(...leaves), fc.oneof({ weight: 2, arbitrary: hostile }, { weight: 1, arbitrary: fc.constant(['removed', undefined] as const) })).map(([value, path, [label, replacement]]) => ({
    label: `/${path.join('/')}=${label}`,
    value: setAt(value, path, replacement),
  }))
}

function leafPaths(schema: Schema, prefix: string[] = [], depth = 0): string[][] {
  if (schema.type !== 'object' || depth > 2) return prefix.length ? [prefix] : []
  const out: string[][] = prefix.length ? [prefix] : []
  for (const [name, child] of Object.entries<Schema>(schema.properties ?? {})) out.push(...leafPaths(child, [...prefix, name], depth + 1))
  return out
}

function setAt(value: unknown, path: string[], replacement: unknown): unknown {
  if (path.length === 0) return replacement
  const [head, ...rest] = path
  const object = value !== null && typeof value === 'object' && !Array.isArray(value) ? { ...(value as Record<string, unknown>) } : {}
  const next = setAt(object[head!], rest, replacement)
  if (next === undefined) delete object[head!]
  else object[head!] = next
  return object
}

// ---------------------------------------------------------------------------------------------
// Classifying a request: must it be refused, and with which codes?

const bodyAjv = new Ajv({ strict: false, allErrors: false, coerceTypes: false, useDefaults: false })
const paramAjv = new Ajv({ strict: false, allErrors: false, coerceTypes: 'array', useDefaults: true })
addFormats.default(bodyAjv)
addFormats.default(paramAjv)
const compiled = new Map<unknown, ValidateFunction>()
function validator(ajv: Ajv, schema: Schema): ValidateFunction {
  let validate = compiled.get(schema)
  if (!validate) {
    validate = ajv.compile(schema)
    compiled.set(schema, validate)
  }
  return validate
}
const paramSchemas = new Map<Param[], Schema>()
function objectSchemaOf(params: Param[]): Schema {
  let schema = paramSchemas.get(params)
  if (!schema) {
    schema = {
      type: 'object',
      properties: Object.fromEntries(params.map((p) => [p.name, p.schema])),
      required: params.filter((p) => p.required && p.schema.default === undefined).map((p) => p.name),
      additionalProperties: false,
    }
    paramSchemas.set(params, schema)
  }
  return schema
}

/** How Fastify's router reads a query string (fast-querystring): undecodable escapes stay as they are. */
export function parseQuery(query: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null)
  const decode = (text: string) => {
    try {
      return decodeURIComponent(text.replace(/\+/g, ' '))
    } catch {
      return text.replace(/\+/g, ' ')
    }
  }
  for (const pair of query.split('&')) {
    if (pair === '') continue
    const at = pair.indexOf('=')
    const key = decode(at < 0 ? pair : pair.slice(0, at))
    const value = at < 0 ? '' : decode(pair.slice(at + 1))
    const existing = out[key]
    out[key] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value]
  }
  return out
}

/** Deepest bracket nesting of a JSON text, strings skipped. */
export function jsonDepth(text: string): number {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === '[' || c === '{') deepest = Math.max(deepest, ++depth)
    else if (c === ']' || c === '}') depth--
  }
  return deepest
}

const holdsNul = (value: unknown): boolean => {
  if (typeof value === 'string') return value.includes('\u0000')
  if (Array.isArray(value)) return value.some(holdsNul)
  if (value !== null && typeof value === 'object') return Object.entries(value).some(([key, child]) => key.includes('\u0000') || holdsNul(child))
  return false
}
/**
 * Might the service's card guard see a card number here? It looks for Luhn-valid 13-19 digit windows
 * across separators in NFKC-normalised text (and in numbers as written), so any 13 digits may be one:
 * card_data_rejected is then an acceptable refusal, though only the fuzzer's own card numbers require it.
 */
export function mayLookLikeCard(text: string): boolean {
  let digits = 0
  for (const char of text.normalize('NFKC')) if (char >= '0' && char <= '9' && ++digits >= 13) return true
  return false
}
const holdsCard = (value: unknown): boolean => {
  if (typeof value === 'string') return mayLookLikeCard(value)
  if (typeof value === 'number') return mayLookLikeCard(String(value)) || mayLookLikeCard(value.toFixed(0))
  if (Array.isArray(value)) return value.some(holdsCard)
  if (value !== null && typeof value === 'object') return Object.entries(value).some(([key, child]) => mayLookLikeCard(key) || holdsCard(child))
  return false
}

/** The deepest nesting a body may have (the fix for 10,000-deep arrays refuses more as invalid_json). */
export const MAX_JSON_DEPTH = 64
export const BODY_LIMIT_BYTES = 1024 * 1024

export interface RequestParts {
  op: Operation
  /** 'own' is the operation's own credential; the others are none, a made-up one, or the other kind. */
  auth: 'own' | 'none' | 'bogus' | 'other-kind' | { authorization: string }
  /** Path parameter values as they go into the URL (already escaped, or deliberately not). */
  path: Record<string, string>
  /** The query string without '?', as it goes into the URL. */
  query: string
  headers: Record<string, string>
  /** The body text and its content type (undefined: no content-type header). */
  body?: { text: string; contentType: string | undefined }
  /** Set by whoever put a card number in a place the contract guards (body, query, path, X-Request-Id, Idempotency-Key). */
  card?: boolean
}

export interface Expectation {
  /** Why the request must be refused (empty: it may succeed). */
  reasons: string[]
  /** The codes a refusal may carry: any stage of the pipeline that could refuse it first. */
  codes: Set<string>
  /** A card number went where the contract guards: never 2xx, and card_data_rejected unless refused earlier. */
  card: boolean
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

/** Classifies a request against the document's schemas and docs/contract.md. */
export function expectationOf(parts: RequestParts): Expectation {
  const { op } = parts
  const reasons: string[] = []
  const codes = new Set<string>(['rate_limited'])
  const must = (reason: string, ...reasonCodes: string[]) => {
    reasons.push(reason)
    for (const code of reasonCodes) codes.add(code)
  }
  const card = Boolean(parts.card)
  if (card) must('card number', 'card_data_rejected')

  const authorization = typeof parts.auth === 'object' ? parts.auth.authorization : undefined
  if (op.security !== 'none' && parts.auth !== 'own') must('no valid credential', 'unauthenticated', 'invalid_token')
  if (authorization !== undefined && mayLookLikeCard(authorization)) codes.add('card_data_rejected')
  for (const value of Object.values(parts.headers)) if (mayLookLikeCard(value)) codes.add('card_data_rejected')

  const version = parts.headers['accept-version']
  if (version !== undefined && !['1', 'v1'].includes(version.trim())) must('Accept-Version', 'unsupported_version')

  // Path: undecodable escapes are a bad URL; decoded values are checked against their schemas.
  const pathValues: Record<string, string> = {}
  let resolvedAway = false
  for (const param of op.pathParams) {
    const raw = parts.path[param.name] ?? ''
    const decoded = safeDecode(raw)
    if (decoded === undefined) {
      must('undecodable path', 'validation_failed', 'not_found')
      continue
    }
    // `..` (or `%2e%2e`) as a whole segment is resolved by the URL before it is sent (WHATWG, and the
    // inject helper alike): the request is for the parent path, which may be a resource of its own.
    if ((decoded === '..' || decoded === '.') && op.path.endsWith(`{${param.name}}`)) {
      resolvedAway = true
      continue
    }
    pathValues[param.name] = decoded
    if (decoded.includes('\u0000')) must('NUL in path', 'validation_failed', 'not_found')
    if (mayLookLikeCard(decoded)) codes.add('card_data_rejected')
    const prefix = idPrefixOf(param.schema)
    if (prefix && decoded.includes(UNKNOWN_ULID)) must('unknown id', 'not_found')
    if (decoded.length > 100) codes.add('not_found') // over-long segments may be refused by the router
  }
  if (op.pathParams.length && !resolvedAway && !validator(paramAjv, objectSchemaOf(op.pathParams))(pathValues)) must('path schema', 'validation_failed', 'not_found')

  // Query: parsed as the router does, then checked with coercion as Fastify does.
  const query = parseQuery(parts.query)
  const queryValues = Object.entries(query).flatMap(([key, value]) => [key, ...(Array.isArray(value) ? value : [value])])
  if (queryValues.some((value) => value.includes('\u0000'))) must('NUL in query', 'validation_failed')
  if (queryValues.some(mayLookLikeCard) || mayLookLikeCard(parts.query)) codes.add('card_data_rejected')
  if (!validator(paramAjv, objectSchemaOf(op.query))(structuredClone({ ...query }))) must('query schema', 'validation_failed')
  if (typeof query.cursor === 'string' && !isIssuedLikeCursor(query.cursor)) must('cursor not issued', 'validation_failed')

  // X-Request-Id is echoed and logged: a NUL in it is refused before anything else (src/http/text-guard.ts).
  if (parts.headers['x-request-id']?.includes('\u0000')) codes.add('validation_failed')

  // Headers the operation declares (Idempotency-Key on POST).
  const key = parts.headers['idempotency-key']
  if (key !== undefined && op.method === 'POST') {
    if (key.length === 0 || key.length > 255) must('Idempotency-Key length', 'validation_failed')
    if (key.includes('\u0000')) must('NUL in Idempotency-Key', 'validation_failed')
  }

  // Body.
  const takesBody = op.method === 'POST' || op.method === 'PATCH'
  const body = parts.body
  if (body && takesBody) {
    const type = body.contentType
    const json = type !== undefined && /^application\/json\s*(;|$)/i.test(type.trim())
    const bytes = Buffer.byteLength(body.text)
    if (bytes > BODY_LIMIT_BYTES) must('body over 1 MiB', 'payload_too_large')
    if (type !== undefined && !json && !/^application\/json/i.test(type.trim())) must('not JSON', 'unsupported_media_type')
    if (type === undefined) codes.add('unsupported_media_type').add('invalid_json').add('validation_failed')
    if (json || type === undefined) {
      let parsed: unknown
      let parses = true
      // A leading byte order mark may be ignored (RFC 8259, 8.1) or refused as invalid_json.
      const bom = body.text.startsWith('\ufeff')
      if (bom) codes.add('invalid_json')
      try {
        parsed = JSON.parse(bom ? body.text.slice(1) : body.text)
      } catch {
        parses = false
      }
      if (!parses && json) must('invalid JSON', 'invalid_json')
      if (parses && json) {
        const tooDeep = jsonDepth(body.text) > MAX_JSON_DEPTH
        if (tooDeep) must(`deeper than ${MAX_JSON_DEPTH}`, 'invalid_json')
        if (/"(__proto__|constructor)"\s*:/.test(body.text)) codes.add('invalid_json')
        if (mayLookLikeCard(body.text) || (!tooDeep && holdsCard(parsed))) codes.add('card_data_rejected')
        if (op.body && !tooDeep) {
          if (holdsNul(parsed)) must('NUL in body', 'validation_failed')
          if (!validator(bodyAjv, op.body)(structuredClone(parsed))) must('body schema', 'validation_failed')
        }
      }
    }
  } else if (!body && takesBody && op.body && !op.body.nullable && (op.body.required?.length ?? 0) > 0) {
    must('missing body', 'validation_failed')
  }
  return { reasons, codes, card }
}

/** Cursors are base64url('v1:<id>') (src/lib/pagination.ts); the fuzzer sends a few crafted ones of that form. */
function isIssuedLikeCursor(cursor: string): boolean {
  const text = Buffer.from(cursor, 'base64url').toString('utf8')
  return text.startsWith('v1:') && text.length >= 5 && /^[a-z]+_[0-9A-Z]+$/.test(text.slice(3))
}

// ---------------------------------------------------------------------------------------------
// Checking answers

export interface Violation {
  operation: string
  kind: string
  /** The kind of request, e.g. 'path:bad-escape'. */
  category: string
  /** What exactly was sent where, e.g. 'path:bad-escape %E0%A4%A'. */
  label: string
  request: string
  status: number
  body: string
  detail?: string
}

const clip = (text: string, length: number) => (text.length > length ? `${text.slice(0, length)}…(${text.length} chars)` : text)

/** A request in one line, long values clipped, control characters escaped. */
export function describeRequest(method: string, url: string, headers: Record<string, string>, body: string | undefined): string {
  const shown = (text: string, length: number) => JSON.stringify(clip(text, length)).slice(1, -1)
  const interesting = Object.entries(headers)
    .filter(([name]) => name !== 'content-length')
    .map(([name, value]) => `${name}: ${shown(name === 'authorization' ? value.replace(/^(Bearer \S{0,12})\S*/, '$1…') : value, 60)}`)
  return `${method} ${shown(url, 140)}${interesting.length ? ` [${interesting.join('; ')}]` : ''}${body !== undefined ? ` body=${shown(body, 140)}` : ''}`
}

/** Groups violations by operation, then kind, and writes the first few of each. */
export function summarize(violations: Violation[], options: { examples?: number; seed: number; requests: number }): string {
  const examples = options.examples ?? 3
  const lines: string[] = []
  lines.push(`${violations.length} violations in ${options.requests} requests (seed ${options.seed}; rerun with FUZZ_SEED=${options.seed})`)
  const byKind = new Map<string, Violation[]>()
  for (const v of violations) byKind.set(v.kind, [...(byKind.get(v.kind) ?? []), v])
  lines.push('by kind:')
  for (const [kind, list] of [...byKind].sort((a, b) => b[1].length - a[1].length)) {
    const labels = new Map<string, number>()
    for (const v of list) labels.set(v.category, (labels.get(v.category) ?? 0) + 1)
    const top = [...labels].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([label, n]) => `${label} ×${n}`).join(', ')
    lines.push(`  ${kind}: ${list.length} in ${new Set(list.map((v) => v.operation)).size} operations (${top})`)
  }
  const byOperation = new Map<string, Map<string, Violation[]>>()
  for (const v of violations) {
    const kinds = byOperation.get(v.operation) ?? new Map<string, Violation[]>()
    kinds.set(v.kind, [...(kinds.get(v.kind) ?? []), v])
    byOperation.set(v.operation, kinds)
  }
  for (const [operation, kinds] of byOperation) {
    lines.push(`── ${operation}`)
    for (const [kind, list] of kinds) {
      lines.push(`   ${kind} ×${list.length}`)
      for (const v of list.slice(0, examples)) {
        lines.push(`     [${v.label}] ${v.request}`)
        lines.push(`       → ${v.status} ${clip(v.body.replace(/\s+/g, ' '), 220)}${v.detail ? ` (${v.detail})` : ''}`)
      }
    }
  }
  return lines.join('\n')
}

