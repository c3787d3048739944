import { Ajv, type AnySchema, type ErrorObject, type Options, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'

export type AjvPurpose = 'body' | 'parameters' | 'response'

/**
 * A validator compiled when it is first called. Why: compiling every route's schemas when the app
 * is assembled took ~1.6 s of CPU per app (and as much again with response validation), paid at
 * every start of the server, the worker and the CLI, and by every test file, while most processes
 * use a handful of routes. A schema that cannot compile is still found by the test suite, which
 * calls every operation (test/contract/fuzz.test.ts). `errors` is the compiled one's, after each call.
 */
export function compileOnFirstUse(compile: () => ValidateFunction): ValidateFunction {
  let compiled: ValidateFunction | undefined
  const validate = ((data: unknown, context?: Parameters<ValidateFunction>[1]) => {
    compiled ??= compile()
    const valid = compiled(data, context)
    validate.errors = compiled.errors
    return valid
  }) as ValidateFunction
  return validate
}

/**
 * Ajv whose `compile` defers to the first call (see compileOnFirstUse): for plugins that take an
 * Ajv instance and compile every route's schemas up front (@fastify/response-validation).
 */
class CompileOnFirstUseAjv extends Ajv {
  override compile = ((schema: AnySchema, meta?: boolean) => compileOnFirstUse(() => super.compile(schema, meta))) as Ajv['compile']
}

/**
 * Ajv configured for one part of the contract. Bodies are never coerced ("100" is not an amount) and
 * unknown fields are reported, never silently dropped; query strings, paths and headers arrive as
 * text, so they are coerced to the schema's types.
 */
export function createAjv(purpose: AjvPurpose, sharedSchemas: object[]): Ajv {
  // One per purpose and set of shared schemas in a process. Why: a new Ajv compiles the meta-schema and
  // checks every shared schema against it (~0.15 s of CPU each, three per app); a process that builds
  // several apps (the shared test lanes build one per test file) pays that once, and its apps share
  // the validators compiled from the same schema objects. Fastify pools its own compilers the same way.
  const key = `${purpose}\u0000${JSON.stringify(sharedSchemas)}`
  let ajv = ajvPool.get(key)
  if (!ajv) {
    ajv = newAjv(purpose, sharedSchemas)
    ajvPool.set(key, ajv)
  }
  return ajv
}
const ajvPool = new Map<string, Ajv>()

function newAjv(purpose: AjvPurpose, sharedSchemas: object[]): Ajv {
  const options: Options = {
    allErrors: true,
    coerceTypes: purpose === 'parameters' ? 'array' : false,
    useDefaults: purpose !== 'response',
    removeAdditional: false,
    strict: true,
    strictRequired: false,
    keywords: ['example', 'x-deprecated'],
    // OpenAPI 3.0 writes "may be null" as nullable: true
    allowUnionTypes: false,
  }
  const ajv = purpose === 'response' ? new CompileOnFirstUseAjv(options) : new Ajv(options)
  addFormats.default(ajv)
  if (purpose !== 'response') ajv.addFormat('date-time', { type: 'string', validate: isAcceptedTimestamp })
  for (const schema of sharedSchemas) ajv.addSchema(schema)
  return ajv
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/
const EARLIEST_ACCEPTED = Date.UTC(1900, 0, 1)
const LATEST_ACCEPTED = Date.UTC(3000, 0, 1)

/**
 * A time a client sends: RFC 3339 that names a real instant (no leap second `:60`, which the
 * standard format allows but neither JavaScript nor the database can hold) between the years 1900
 * and 2999, so that any period computed from it (a renewal years ahead, in any time zone) still fits
 * the database's and the API's time types.
 */
export function isAcceptedTimestamp(text: string): boolean {
  const match = RFC3339.exec(text)
  if (!match) return false
  const [month, day, hour, minute, second] = [match[2], match[3], match[4], match[5], match[6]].map(Number) as [number, number, number, number, number]
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return false
  const offset = match[8]!
  if (offset.length === 6 && (Number(offset.slice(1, 3)) > 23 || Number(offset.slice(4)) > 59)) return false
  const at = Date.parse(text)
  // Date.parse rolls 2026-02-30 over into March: the day must survive the round trip in its own zone.
  if (!Number.isFinite(at) || at < EARLIEST_ACCEPTED || at >= LATEST_ACCEPTED) return false
  return day <= daysInMonth(Number(match[1]), month)
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate()
}

/**
 * Ajv turns text such as `1e309` into Infinity when it coerces a query, path or header value to a
 * number, and then checks neither its type nor its range (only finite numbers are compared). This
 * wraps a parameters validator so that a value which became a number but not a finite one fails
 * like any other value out of range, instead of reaching the database.
 */
export function refuseNonFiniteNumbers(validate: ValidateFunction): ValidateFunction {
  const checked = ((data: unknown, context?: Parameters<ValidateFunction>[1]) => {
    const valid = validate(data, context)
    // The common case, on every request: valid, and nothing coerced to a non-finite number.
    if (valid && !holdsNonFinite(data)) {
      checked.errors = null
      return true
    }
    const errors: ErrorObject[] = valid ? [] : [...(validate.errors ?? [])]
    collectNonFinite(data, '', errors)
    checked.errors = errors.length ? errors : null
    return errors.length === 0
  }) as ValidateFunction
  return Object.assign(checked, { schema: validate.schema, schemaEnv: validate.schemaEnv })
}

/** Whether `collectNonFinite` would find anything; allocates nothing, for the common case. */
function holdsNonFinite(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value)
  if (value === null || typeof value !== 'object') return false
  if (Array.isArray(value)) return value.some(holdsNonFinite)
  for (const key of Object.keys(value)) if (holdsNonFinite((value as Record<string, unknown>)[key])) return true
  return false
}

function collectNonFinite(value: unknown, instancePath: string, errors: ErrorObject[]): void {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) && !errors.some((error) => error.instancePath === instancePath)) {
      errors.push({ instancePath, schemaPath: '#', keyword: 'type', params: { type: 'number' }, message: 'must be a finite number' })
    }
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => collectNonFinite(item, `${instancePath}/${i}`, errors))
  } else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) collectNonFinite(child, `${instancePath}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, errors)
  }
}
