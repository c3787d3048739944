// CPU accounting the benches share: the whole machine's, and one process's by pid.
import { cpus } from 'node:os'
import { readFileSync } from 'node:fs'

/** The machine's CPU time so far, summed over its CPUs (ms): busy, and busy + idle. */
export function cpuTimes(): { busy: number; total: number } {
  let busy = 0
  let total = 0
  for (const { times } of cpus()) {
    const sum = times.user + times.nice + times.sys + times.irq + times.idle
    busy += sum - times.idle
    total += sum
  }
  return { busy, total }
}

/** CPU seconds (user + system) a process on this machine has used, from /proc; undefined where that cannot be read. */
export function cpuSecondsOf(pid: number | undefined): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return undefined
  }
}
