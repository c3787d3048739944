import { Type, type Static, type TSchema } from 'typebox'
import { ERROR_STATUS, ERROR_TITLES, type ErrorCode } from '../lib/errors.ts'
import { idPattern, type IdPrefix } from '../lib/ids.ts'
import { MAX_AMOUNT, MAX_RENEWAL_AMOUNT } from '../lib/money.ts'

/**
 * OpenAPI 3.0 has no `null` type; it marks optional nulls with `nullable: true`, which Ajv and
 * fast-json-stringify both understand. The static type still says `T | null`.
 */
export function Nullable<T extends TSchema>(schema: T, options: Record<string, unknown> = {}) {
  const copy: Record<string, unknown> = { ...(schema as Record<string, unknown>), ...options, nullable: true }
  if (Array.isArray(copy.enum)) copy.enum = [...(copy.enum as unknown[]), null]
  return Type.Unsafe<Static<T> | null>(copy)
}

/** A reference to a named shared schema, typed as that schema. */
export function Ref<T extends TSchema>(schema: T) {
  const id = (schema as { $id?: unknown }).$id
  if (typeof id !== 'string') throw new Error('Ref() needs a schema with an $id')
  return Type.Unsafe<Static<T>>({ $ref: `${id}#` })
}

export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339 UTC time', example: '2026-11-22T05:00:00.000Z' })

export const StringEnum = <const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })

export const Id = (prefix: IdPrefix, description?: string) =>
  Type.String({ pattern: idPattern(prefix), ...(description ? { description } : {}), example: `${prefix}_01JD2Y5T1P8Q0W9KZ3M6N4R7BC` })

export const IdParams = (prefix: IdPrefix) => Type.Object({ id: Id(prefix) }, { additionalProperties: false })

export const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, upper case', example: 'USD' })

export const Amount = Type.Integer({ minimum: 0, maximum: MAX_AMOUNT, description: 'Integer minor units (cents for USD)' })

/** What one renewal charges: a price times a quantity, so it may be larger than any one `Amount`. */
export const ChargeAmount = Type.Integer({
  minimum: 0,
  maximum: MAX_RENEWAL_AMOUNT,
  description: 'Integer minor units (cents for USD) of one renewal: the price times the quantity',
})

export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[]

export const Problem = Type.Object(
  {
    type: Type.String({ description: 'URI reference naming the problem type' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: StringEnum(ERROR_CODES, { description: 'Stable machine-readable error code' }),
    request_id: Type.String(),
    errors: Type.Optional(
      Type.Array(
        Type.Object({ path: Type.String({ description: 'JSON pointer into the request, e.g. /body/email' }), message: Type.String() }, { additionalProperties: false }),
      ),
    ),
  },
  { $id: 'Problem', title: 'Problem', description: 'RFC 9457 problem details', additionalProperties: false },
)
export type ProblemBody = Static<typeof Problem>

/** The response entry for an error status: problem+json, described by the codes it can carry. */
export function problemResponse(status: number) {
  const codes = ERROR_CODES.filter((code) => ERROR_STATUS[code] === status)
  return {
    description: codes.map((code) => `\`${code}\`: ${ERROR_TITLES[code]}`).join('; ') || 'Error',
    content: { 'application/problem+json': { schema: Ref(Problem) } },
  }
}

export function problemResponses(...statuses: number[]) {
  return Object.fromEntries(statuses.map((status) => [status, problemResponse(status)]))
}

export const PageQuery = {
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size' }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'next_cursor from the previous page' })),
}

export function PageOf<T extends TSchema>(item: T, description: string) {
  return Type.Object(
    {
      data: Type.Array(item),
      next_cursor: Nullable(Type.String(), { description: 'Pass as `cursor` for the next page; null on the last page' }),
    },
    { additionalProperties: false, description },
  )
}

export const NoContent = Type.Null({ description: 'No content' })
