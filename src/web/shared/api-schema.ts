/**
 * Names for the API's types as the apps use them. Everything comes from `api-types.ts`, which
 * `npm run openapi` generates from openapi.json (the document the routes' own schemas produce), so a
 * field the server renames or drops breaks the type check here instead of a page at run time.
 */
import type { components, operations } from './api-types.ts'

/** A named schema of the document (`components.schemas`): Subscription, Charge, UpcomingRenewal... */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name]

type JsonOf<Response> = Response extends { content: { 'application/json': infer Body } } ? Body : never
type Responses<Op extends keyof operations> = operations[Op]['responses']

/** What an operation answers on success (its 200, else its 201), by operationId. */
export type Answer<Op extends keyof operations> = Responses<Op> extends { 200: infer Ok } ? JsonOf<Ok> : Responses<Op> extends { 201: infer Created } ? JsonOf<Created> : never

/** The JSON body an operation takes, by operationId. */
export type Body<Op extends keyof operations> = operations[Op] extends { requestBody?: { content: { 'application/json': infer Sent } } } ? Sent : never

/** One page of a list: every list of the API has this shape (docs/contract.md, Lists and paging). */
export interface Page<T> {
  data: T[]
  next_cursor: string | null
}
