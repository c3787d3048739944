import type { Db } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import type { EventLog } from '../events/index.ts'
import type { Module } from '../module.ts'
import type { PlatformCustomers, ProductVariants, StoredInstruments } from '../platform/index.ts'
import { NATIVE_COLUMNS } from '../subscriptions/index.ts'
import { importAdminRoutes } from './imports.routes.ts'
import { Import } from './imports.schemas.ts'
import { createImportsService, type ImportsService } from './imports.service.ts'

export interface ImportsModuleDeps {
  db: Db
  clock: Clock
  events: EventLog
  /** The platform's customers, stored cards and variants (module platform): a platform store's rows are matched to them. */
  customers?: PlatformCustomers | undefined
  instruments?: StoredInstruments | undefined
  variants?: ProductVariants | undefined
}

/** Subscriptions brought in from CSV files: Recharge's columns, or this service's own export (docs/contract.md, Import). */
export function createImportsModule({ db, clock, events, customers, instruments, variants }: ImportsModuleDeps): Module<ImportsService> {
  const service = createImportsService({ db, clock, events, matching: { customers, instruments, variants }, nativeColumns: NATIVE_COLUMNS })
  return {
    name: 'imports',
    service,
    routes: { admin: (app) => importAdminRoutes(app, service) },
    schemas: [Import],
  }
}

export type { ImportsService, ImportRequest } from './imports.service.ts'
export type { ImportView } from './imports.schemas.ts'
