/** The widget's plan formatting lives in src/web/shared/plan-format.ts: the portal labels plans with the same words. */
export * from '../shared/plan-format.ts'
