import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import pg from 'pg'
import { isDatabaseUnavailable, isRowDataError } from '../../src/db/errors.ts'
import { AppError } from '../../src/lib/errors.ts'

/** A server-reported error as node-postgres makes it. */
function serverError(code: string, message: string): pg.DatabaseError {
  const error = new pg.DatabaseError(message, message.length, 'error')
  error.code = code
  return error
}

/** A socket error as Node makes it. */
function socketError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, errno: -111, syscall: 'connect' })
}

describe('which database errors mean "unavailable right now" (503, retry later)', () => {
  test('the server going away, refusing sessions, or not being there', () => {
    const unavailable: [string, unknown][] = [
      ['fast shutdown under a session (57P01 admin_shutdown)', serverError('57P01', 'terminating connection due to administrator command')],
      ['crash shutdown (57P02)', serverError('57P02', 'terminating connection because of crash of another server process')],
      ['starting up, in recovery, shutting down (57P03)', serverError('57P03', 'the database system is starting up')],
      ['a connection exception (08006)', serverError('08006', 'connection failure')],
      ['a connection that was never made (08001)', serverError('08001', 'could not connect')],
      ['nothing listening', socketError('ECONNREFUSED')],
      ['the connection reset', socketError('ECONNRESET')],
      ['the host unreachable', socketError('EHOSTUNREACH')],
      ['the socket timing out', socketError('ETIMEDOUT')],
      ['an immediate shutdown mid-statement', new Error('Connection terminated unexpectedly')],
      ['the connect timeout', new Error('Connection terminated due to connection timeout')],
      ["the pool's wait for a client", new Error('timeout exceeded when trying to connect')],
      ['a client whose connection broke', new Error('Client has encountered a connection error and is not queryable')],
    ]
    for (const [what, error] of unavailable) {
      assert.equal(isDatabaseUnavailable(error), true, what)
      // And never mistaken for one row's bad data, which a batch sets aside and goes on.
      assert.equal(isRowDataError(error), false, `${what}: not a row's data`)
    }
  })

  test('everything else is not: constraint violations, conflicts, cancellations, bugs, our own errors', () => {
    const others: [string, unknown][] = [
      ['unique violation', serverError('23505', 'duplicate key value violates unique constraint')],
      ['serialization failure', serverError('40001', 'could not serialize access')],
      ['deadlock', serverError('40P01', 'deadlock detected')],
      ['statement cancelled', serverError('57014', 'canceling statement due to statement timeout')],
      ['too many connections', serverError('53300', 'sorry, too many clients already')],
      ['syntax error', serverError('42601', 'syntax error at or near "x"')],
      ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
      ['an AppError', new AppError('not_found', 'no such subscription')],
      ['a message that only mentions a connection', new Error('the platform said: Connection terminated unexpectedly')],
      ['not an error', 'Connection terminated unexpectedly'],
      ['nothing', undefined],
      ['null', null],
    ]
    for (const [what, error] of others) assert.equal(isDatabaseUnavailable(error), false, what)
  })
})
