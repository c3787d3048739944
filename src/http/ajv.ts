import { Ajv, type Options } from 'ajv'
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
