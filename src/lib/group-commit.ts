/**
 * Writes items as they come, together: the first item is written at once, and items arriving while
 * a write runs wait and go in the next write, all of them in one. Under load each write carries
 * many items; when idle, none waits for company. Each `push` resolves (or rejects) with its write.
 */
export function groupCommit<T>(write: (items: T[]) => Promise<void>): { push(item: T): Promise<void> } {
  let queue: { item: T; done: (error?: unknown) => void }[] = []
  let writing = false

  async function drain(): Promise<void> {
    writing = true
    while (queue.length > 0) {
      const group = queue
      queue = []
      try {
        await write(group.map(({ item }) => item))
        for (const { done } of group) done()
      } catch (error) {
        for (const { done } of group) done(error ?? new Error('write failed'))
      }
    }
    writing = false
  }

  return {
    push(item) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ item, done: (error) => (error === undefined ? resolve() : reject(error)) })
        if (!writing) void drain()
      })
    },
  }
}
