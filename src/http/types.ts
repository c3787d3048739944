import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify'
import type { Db } from '../db/database.ts'
import type { Engine } from '../db/connect.ts'
import type { Clock } from '../lib/clock.ts'

/** The Fastify instance every module registers its routes on: schemas type the handlers. */
export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>

/** What modules receive from buildApp: the outside world, passed in rather than imported. */
export interface AppDeps {
  db: Db
  engine: Engine
  clock: Clock
}
