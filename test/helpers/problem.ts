import assert from 'node:assert/strict'

/** What `call` answers, as far as an error answer is checked. */
export interface ProblemResponse {
  statusCode: number
  headers: Record<string, unknown>
  body: string
  json: any
}

export interface ProblemExpectation {
  /** An entry of `errors` must name this path (e.g. '/body/url', '/query/limit'). */
  path?: string
  /** Names the case in failure messages, for tests that try many in a loop. */
  what?: string
}

/**
 * Every error is RFC 9457 problem+json (docs/contract.md, Errors): the status, the stable code in `code` and
 * `type`, a title and a detail, and the request's id as the X-Request-Id header says it; with `path`,
 * one of its `errors` names that field.
 */
export function assertProblem(response: ProblemResponse, status: number, code: string, expect: ProblemExpectation = {}): void {
  const what = expect.what === undefined ? '' : `${expect.what}: `
  assert.equal(response.statusCode, status, `${what}expected ${status} ${code}, got ${response.statusCode}: ${response.body}`)
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/, `${what}content type is problem+json`)
  assert.equal(response.json?.code, code, `${what}problem code: ${response.body}`)
  assert.equal(response.json.type, `urn:problem-type:${code}`, `${what}problem type`)
  assert.equal(typeof response.json.title, 'string', `${what}problem title`)
  assert.equal(response.json.status, status, `${what}problem status`)
  assert.equal(typeof response.json.detail, 'string', `${what}problem detail`)
  assert.equal(response.json.request_id, response.headers['x-request-id'], `${what}request_id matches X-Request-Id`)
  if (expect.path !== undefined) {
    assert.ok(Array.isArray(response.json.errors), `${what}a problem naming a field lists its errors: ${response.body}`)
    const paths = response.json.errors.map((error: { path: string }) => error.path)
    assert.ok(paths.includes(expect.path), `${what}errors name ${expect.path}, got ${JSON.stringify(response.json.errors)}`)
  }
}

/** A 400 validation_failed whose errors include one at `path`. */
export function assertInvalidField(response: ProblemResponse, path: string, what?: string): void {
  assertProblem(response, 400, 'validation_failed', { path, what })
}
