import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { AppError } from '../../src/lib/errors.ts'
import { decodeCursor, encodeCursor, toPage } from '../../src/lib/pagination.ts'

describe('cursor pagination', () => {
  test('a cursor round-trips the id it was made from and is opaque', () => {
    const cursor = encodeCursor('plan_01JD2Y5T1P8Q0W9KZ3M6N4R7BC')
    assert.ok(!cursor.includes('plan_'))
    assert.equal(decodeCursor(cursor), 'plan_01JD2Y5T1P8Q0W9KZ3M6N4R7BC')
  })

  test('a cursor the API did not issue is a validation error on /query/cursor', () => {
    for (const bad of ['garbage', Buffer.from('v1:').toString('base64url'), Buffer.from("v1:x'; drop").toString('base64url')]) {
      assert.throws(() => decodeCursor(bad), (error: unknown) => error instanceof AppError && error.code === 'validation_failed' && error.errors?.[0]?.path === '/query/cursor')
    }
  })

  test('the extra fetched row signals a next page and is not returned', () => {
    const rows = [{ id: 'a_3' }, { id: 'a_2' }, { id: 'a_1' }]
    const page = toPage(rows, 2, (row) => row.id)
    assert.deepEqual(page.data, ['a_3', 'a_2'])
    assert.equal(decodeCursor(page.next_cursor!), 'a_2')
    assert.equal(toPage(rows.slice(0, 2), 2, (row) => row.id).next_cursor, null)
  })
})
