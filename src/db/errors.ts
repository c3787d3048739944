const UNIQUE_VIOLATION = '23505'
// PostgreSQL 18 (PGlite) reports ON DELETE RESTRICT as restrict_violation; earlier servers say foreign_key_violation.
const STILL_REFERENCED = new Set(['23503', '23001'])

function sqlState(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined
}

export function isUniqueViolation(error: unknown): boolean {
  return sqlState(error) === UNIQUE_VIOLATION
}

/** A row could not be deleted (or pointed at) because of a foreign key. */
export function isStillReferenced(error: unknown): boolean {
  const state = sqlState(error)
  return state !== undefined && STILL_REFERENCED.has(state)
}
