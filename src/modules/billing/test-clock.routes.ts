import { Type } from 'typebox'
import { adminStore } from '../../http/admin-auth.ts'
import { problemResponses, Ref, Timestamp } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import type { TestClock } from './test-clock.ts'

const Counts = Type.Integer({ minimum: 0 })

export const TestClockState = Type.Object(
  {
    object: Type.Literal('test_clock'),
    now: Timestamp,
    follows_real_time: Type.Boolean({ description: 'true until the clock is first advanced' }),
  },
  { $id: 'TestClock', title: 'TestClock', additionalProperties: false },
)

export const TestClockAdvance = Type.Object(
  {
    now: Timestamp,
    processed: Type.Object(
      {
        activations: Counts,
        renewals: Counts,
        retries: Counts,
        reminders: Counts,
        resumptions: Counts,
        cancellations: Counts,
        expirations: Counts,
      },
      { additionalProperties: false, description: 'How many pieces of due work of each kind ran' },
    ),
  },
  { $id: 'TestClockAdvance', title: 'TestClockAdvance', additionalProperties: false },
)

const AdvanceBody = Type.Object(
  { to: { ...Timestamp, description: "The store's new time: not before its current time, at most 10 years ahead" } },
  { additionalProperties: false },
)

export const testClockSchemas = [TestClockState, TestClockAdvance]

/** A test-mode store's own clock (docs/contract.md, Billing); live stores answer 404. */
export async function testClockRoutes(app: App, { testClock }: { testClock: TestClock }): Promise<void> {
  app.get('/test-clock', {
    schema: {
      operationId: 'getTestClock',
      summary: "Read a test-mode store's clock",
      tags: ['Test clock'],
      response: { 200: Ref(TestClockState), ...problemResponses(404) },
    },
  }, async (request) => testClock.read(adminStore(request)))

  app.post('/test-clock/advance', {
    schema: {
      operationId: 'advanceTestClock',
      summary: "Move a test-mode store's clock forward and run the work due meanwhile",
      description:
        'Runs every piece of work due up to `to`, each at its own due time and in order, before answering, and answers the counts: ' +
        'activations (trials and future starts), renewals (first charge attempts and skipped renewals), dunning retries, renewal reminders, ' +
        'resumptions, cancellations (at period end, and after too long in past_due) and expirations (gifted prepaid blocks that ran out). ' +
        'Charges go through the test gateway, whose outcome follows the end of the payment instrument id: `_declined` and `_insufficient_funds` fail, ' +
        '`_timeout` charges but loses the first answer (reconciled, never charged twice), `_unknown` never answers (the charge ends in review), anything else succeeds.',
      tags: ['Test clock'],
      body: AdvanceBody,
      response: { 200: Ref(TestClockAdvance), ...problemResponses(404) },
    },
  }, async (request) => testClock.advance(adminStore(request), request.body.to))
}
