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

// The server cannot serve any statement now: it is shutting down or was stopped under the session
// (57P01 admin_shutdown, 57P02 crash_shutdown) or does not take connections yet (57P03 cannot_connect_now:
// starting up, in recovery, shutting down); class 08 is the protocol's own connection exceptions.
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03'])
// What the socket says when there is no server to talk to (refused, reset, unreachable, timed out).
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])
// node-postgres's own words for a connection lost or never made (they carry no code): the server went
// away mid-statement (an immediate shutdown, a crash), the connect timeout, the pool's wait for a client.
const LOST_CONNECTION = /^(?:Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable)/

/**
 * Whether an error says the database cannot be reached right now (down, restarting, unreachable), not
 * that the statement or its rows were wrong: a request failing on it is 503, and retrying later helps.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const state = sqlState(error)
  if (state !== undefined && (UNAVAILABLE_STATES.has(state) || /^08[0-9A-Z]{3}$/.test(state) || UNREACHABLE_CODES.has(state))) return true
  const message = (error as { message?: unknown } | null)?.message
  return error instanceof Error && typeof message === 'string' && LOST_CONNECTION.test(message)
}
