const UNIQUE_VIOLATION = '23505'
// PostgreSQL 18 (PGlite) reports ON DELETE RESTRICT as restrict_violation; earlier servers say foreign_key_violation.
const STILL_REFERENCED = new Set(['23503', '23001'])

function sqlState(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined
}

export function isUniqueViolation(error: unknown): boolean {
  return sqlState(error) === UNIQUE_VIOLATION
}

/** A CHECK constraint refused the row: `constraint` names it (PostgreSQL's `constraint` field), when asked. */
export function isCheckViolation(error: unknown, constraint?: string): boolean {
  if (sqlState(error) !== '23514') return false
  return constraint === undefined || (error as { constraint?: unknown }).constraint === constraint
}

/** A row could not be deleted (or pointed at) because of a foreign key. */
export function isStillReferenced(error: unknown): boolean {
  const state = sqlState(error)
  return state !== undefined && STILL_REFERENCED.has(state)
}

// SQLSTATE classes that mean "this row's data", not "the database is unwell": data exceptions and
// integrity constraint violations. Errors raised by triggers (P0) are left out: they are as often a
// guard against everything as about one row.
const ROW_DATA_CLASSES = new Set(['22', '23'])

/**
 * Whether an error is about the rows being written (set them aside, carry on with the rest) rather
 * than about the database or the process (stop, retry everything later). A decision that refused one
 * row's state (a RangeError, a TypeError, an AppError from the pure code) counts as the row's.
 */
export function isRowDataError(error: unknown): boolean {
  const state = sqlState(error)
  if (state !== undefined && /^[0-9A-Z]{5}$/.test(state)) return ROW_DATA_CLASSES.has(state.slice(0, 2))
  return error instanceof TypeError || error instanceof RangeError || (error as { name?: unknown } | null)?.name === 'AppError'
}
