import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { buildApp } from '../../src/app.ts'
import type { DatabaseHandle } from '../../src/db/connect.ts'
import { Ref } from '../../src/http/schemas.ts'
import type { App } from '../../src/http/types.ts'
import { Plan } from '../../src/modules/catalog/index.ts'
import { createTestDatabase } from '../helpers/database.ts'
import { call, testConfig } from '../helpers/test-app.ts'

describe('responses are checked against their route schema in tests', () => {
  let database: DatabaseHandle
  let app: App

  before(async () => {
    database = await createTestDatabase()
    app = await buildApp({ database, config: testConfig({ LOG_LEVEL: 'silent' }) })
    app.get('/api/v1/broken-plan', { schema: { operationId: 'brokenPlan', response: { 200: Ref(Plan) } } }, async () => ({ id: 'plan_x', amount: 1.5 }) as never)
    await app.ready()
  })
  after(async () => {
    await app.close()
    await database.close()
  })

  test('a handler answering the wrong shape fails loudly with 500 instead of sending it', async () => {
    const response = await call(app, { method: 'GET', url: '/api/v1/broken-plan' })
    assert.equal(response.statusCode, 500)
    assert.equal(response.json.code, 'internal_error')
    assert.ok(!response.body.includes('plan_x'), 'the invalid body was not sent')
  })
})
