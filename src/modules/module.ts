import type { TSchema } from 'typebox'
import type { App } from '../http/types.ts'
import type { JobHandler } from '../jobs/job-kinds.ts'

/**
 * The one shape of every module (docs/architecture.md): `createXModule(deps)` in the module's
 * `index.ts` returns this. The composition root (src/services.ts) builds each module once; the HTTP
 * app (src/app.ts) registers every module's routes in their scope, and the worker (src/worker.ts)
 * runs every module's jobs. A module's routes get its service, never the database.
 */
export interface Module<Service = unknown> {
  /** The module's folder name, for logs and errors. */
  readonly name: string
  /** What the module does, for its routes, its jobs and the modules built after it. */
  readonly service: Service
  /** Its routes, by where they are mounted (see RouteScope). */
  readonly routes?: Partial<Record<RouteScope, Routes>>
  /** What the worker does for it: typed job handlers (src/jobs/job-kinds.ts). */
  readonly jobs?: readonly JobHandler[]
  /** Work the worker runs beside the job runner, outside the jobs table (the webhook dispatch loop). */
  readonly loops?: readonly BackgroundLoop[]
  /** Schemas other schemas refer to by `$id`: each becomes a named OpenAPI component. */
  readonly schemas?: readonly TSchema[]
  /** Releases what it holds outside the database (connection pools, timers). */
  close?(): Promise<void>
}

/**
 * Where routes are mounted, and what guards them:
 * - `admin`: `/api/v1/admin`, an admin API key or console session required;
 * - `portal`: `/api/v1/portal`, a subscriber's portal session required;
 * - `portalSignIn`: `/api/v1/portal`, sign-in itself (each route says what it needs);
 * - `storefront`: `/api/v1`, no credential, any origin (CORS);
 * - `platform`: outside the versioned API, called by BigCommerce (app callbacks, order webhooks).
 */
export type RouteScope = 'admin' | 'portal' | 'portalSignIn' | 'storefront' | 'platform'

/** A module's routes for one scope: registered as a Fastify plugin, so hooks stay in their scope. */
export type Routes = (app: App) => Promise<void>

/** A loop the worker starts, and stops (waiting for the work in hand) when it stops. */
export interface BackgroundLoop {
  readonly name: string
  start(): { stop(): Promise<void> }
}
