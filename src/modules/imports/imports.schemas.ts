import { Type, type Static } from 'typebox'
import { Id, Nullable, Ref, StringEnum, Timestamp } from '../../http/schemas.ts'
import { EventActor } from '../events/index.ts'

export const IMPORT_FORMATS = ['native', 'recharge'] as const

export const ImportRowErrorSchema = Type.Object(
  {
    row: Type.Integer({ minimum: 1, description: 'The row in the file, the header being row 1 (as a spreadsheet numbers it)' }),
    column: Type.Optional(Type.String({ description: 'The column at fault, when one is' })),
    code: Type.String({ description: 'Why, as a code: `required`, `invalid_date`, `in_past`, `product_not_found`, `plan_not_found`, `variant_not_found`, `customer_not_found`, `ambiguous_customer`, `duplicate_external_id`, `customer_conflict`, `unsupported`, ... (docs/contract.md, Import)' }),
    detail: Type.String({ description: 'The problem in words; never repeats a value that looks like a card number' }),
  },
  { additionalProperties: false },
)

export const Import = Type.Object(
  {
    id: Id('imp'),
    object: Type.Literal('import'),
    format: StringEnum(IMPORT_FORMATS),
    dry_run: Type.Boolean({ description: 'A dry run checked and matched every row and wrote nothing but this report: `created` is what the real run would create' }),
    status: StringEnum(['running', 'completed', 'failed'] as const, { description: '`failed`: the file stopped being readable (bad CSV, the upload broke off, BigCommerce unavailable); the rows before it were imported, and the same file again imports the rest' }),
    rows: Type.Integer({ minimum: 0, description: 'Data rows read so far' }),
    created: Type.Integer({ minimum: 0 }),
    updated: Type.Integer({ minimum: 0, description: 'Always 0: a row whose external id the store has is skipped, never changed' }),
    skipped: Type.Integer({ minimum: 0, description: 'Rows whose external id the store already has (an earlier run)' }),
    failed: Type.Integer({ minimum: 0, description: 'Rows refused, each named in `errors` (the first 1,000 are kept)' }),
    errors: Type.Array(ImportRowErrorSchema),
    ignored_columns: Type.Array(Type.String(), { description: "The header's columns this format does not read" }),
    progress: Nullable(Type.Number({ minimum: 0, maximum: 1 }), { description: 'Bytes read of the upload, 0-1; null when the upload did not say its length' }),
    actor: Ref(EventActor),
    created_at: Timestamp,
    finished_at: Nullable(Timestamp),
  },
  { $id: 'Import', title: 'Import', additionalProperties: false },
)
export type ImportView = Static<typeof Import>
