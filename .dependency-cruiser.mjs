/**
 * The layering rules of docs/architecture.md, checked by test/unit/module-boundaries.test.ts (and by
 * `npx depcruise src` for a full report). Module-level cycles (a cycle between folders of src/modules,
 * which file-level checks cannot see) are checked by the same test.
 */
export default {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No file reaches itself through its imports.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'module-internals',
      comment: "A module uses another only through that module's index.ts.",
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/', pathNot: '\\.tables\\.ts$' },
      to: { path: '^src/modules/[^/]+/', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'] },
    },
    {
      name: 'module-internals-of-tables',
      comment: "Table types compose the database type, so one module's table file may name another's columns (types only); nothing else may.",
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/[^/]+\\.tables\\.ts$' },
      to: { path: '^src/modules/[^/]+/', pathNot: ['^src/modules/$1/', '\\.tables\\.ts$'] },
    },
    {
      name: 'routes-without-database',
      comment: "Routes receive their module's service, never the database: no route file imports src/db or kysely.",
      severity: 'error',
      from: { path: '\\.routes\\.ts$' },
      to: { path: ['^src/db/', '(^|/)node_modules/kysely/'] },
    },
    {
      name: 'no-sql-in-services-or-routes',
      comment: "Statements live in repositories (and in the engines' step files, docs/architecture.md): a module's index, services, routes, presenters, schemas and jobs import nothing of kysely but types.",
      severity: 'error',
      from: { path: ['^src/modules/[^/]+/index\\.ts$', '\\.(service|routes|presenter|presenters|schemas|jobs)\\.ts$'] },
      to: { path: '(^|/)node_modules/kysely/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'root-stays-on-top',
      comment: 'Nothing below the composition root imports it, the app, the worker, the server or the configuration.',
      severity: 'error',
      from: { path: '^src/(modules|lib|http|db|jobs)/' },
      to: { path: '^src/(app|services|worker|server|config|cli)\\.ts$' },
    },
    {
      name: 'lib-knows-no-domain',
      comment: 'src/lib holds no domain knowledge and imports nothing else of the service.',
      severity: 'error',
      from: { path: '^src/lib/' },
      to: { path: '^src/', pathNot: '^src/lib/' },
    },
    {
      name: 'infrastructure-below-modules',
      comment: 'The HTTP plumbing, the job runner and the database layer serve modules and never import them (table types excepted).',
      severity: 'error',
      from: { path: '^src/(http|jobs|db)/' },
      to: { path: '^src/modules/', pathNot: '\\.tables\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    exclude: { path: '^src/web/' },
  },
}
