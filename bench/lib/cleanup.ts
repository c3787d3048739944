const tasks: Array<() => Promise<void>> = []
let interruptible = false

/**
 * Registers work that must happen however the bench ends (stop children, drop scratch databases),
 * last in first out. Returns a function that does it now and forgets it.
 */
export function deferCleanup(task: () => Promise<void>): () => Promise<void> {
  tasks.unshift(task)
  listenForInterrupt()
  return async () => {
    const index = tasks.indexOf(task)
    if (index === -1) return
    tasks.splice(index, 1)
    await task()
  }
}

export async function runCleanup(): Promise<void> {
  while (tasks.length > 0) {
    const task = tasks.shift()!
    try {
      await task()
    } catch (error) {
      process.stderr.write(`cleanup failed: ${String(error)}\n`)
    }
  }
}

function listenForInterrupt(): void {
  if (interruptible) return
  interruptible = true
  process.once('SIGINT', () => {
    process.stderr.write('\ninterrupted: cleaning up\n')
    void runCleanup().finally(() => process.exit(130))
  })
}
