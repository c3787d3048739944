import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'

export type AjvPurpose = 'body' | 'parameters' | 'response'

/**
 * Ajv configured for one part of the contract. Bodies are never coerced ("100" is not an amount) and
 * unknown fields are reported, never silently dropped; query strings, paths and headers arrive as
 * text, so they are coerced to the schema's types.
 */
export function createAjv(purpose: AjvPurpose, sharedSchemas: object[]): Ajv {
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
  const ajv = new Ajv(options)
  addFormats.default(ajv)
  for (const schema of sharedSchemas) ajv.addSchema(schema)
  return ajv
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
    const errors: ErrorObject[] = valid ? [] : [...(validate.errors ?? [])]
    collectNonFinite(data, '', errors)
    checked.errors = errors.length ? errors : null
    return errors.length === 0
  }) as ValidateFunction
  return Object.assign(checked, { schema: validate.schema, schemaEnv: validate.schemaEnv })
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
