import type { ColumnType } from 'kysely'

/** Column types shared by every table definition. */
export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>
export type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>
/** A jsonb column: read as the value, written as the value or its JSON text. */
export type Json<T> = ColumnType<T, T | string, T | string>
