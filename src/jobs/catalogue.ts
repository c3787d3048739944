// Moved to src/worker.ts; kept only until the tests that import it move over.
export { jobHandlers, startWorker, type WorkerDeps } from '../worker.ts'
