// The webhooks bench's receivers: N plain node:http servers on 127.0.0.1 in a process of their own
// (forked with an IPC channel), so receiving never shares an event loop with the dispatcher. Each
// records every arrival's webhook-id and the time its body was complete; signed arrivals are
// verified with `standardwebhooks` (a sample, so the receivers cost the same with or without
// signatures). The parent drives it by messages; see webhook-receivers.ts.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import type { ChildMessage, ParentMessage, ReceiverLog } from './webhook-receivers.ts'

const COUNT = Number(process.env.BENCH_RECEIVERS ?? 2)
const VERIFY_EVERY = Number(process.env.BENCH_VERIFY_EVERY ?? 10)

interface State {
  ids: string[]
  at: number[]
  seen: Set<string>
  verifier?: Webhook
  signed: number
  verified: number
  failed: number
}

const now = () => performance.timeOrigin + performance.now()
const states: State[] = Array.from({ length: COUNT }, () => fresh())
let awaiting: { unique: number } | undefined

function fresh(verifier?: Webhook): State {
  return { ids: [], at: [], seen: new Set(), ...(verifier ? { verifier } : {}), signed: 0, verified: 0, failed: 0 }
}

function send(message: ChildMessage): void {
  process.send!(message)
}

function uniqueTotal(): number {
  return states.reduce((sum, state) => sum + state.seen.size, 0)
}

function serve(state: () => State): Server {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const at = now()
      const s = state()
      const id = String(req.headers['webhook-id'] ?? '')
      s.ids.push(id)
      s.at.push(at)
      s.seen.add(id)
      const signature = req.headers['webhook-signature']
      if (signature !== undefined) {
        s.signed++
        if (s.verifier && s.signed % VERIFY_EVERY === 1) {
          try {
            s.verifier.verify(Buffer.concat(chunks).toString('utf8'), {
              'webhook-id': id,
              'webhook-timestamp': String(req.headers['webhook-timestamp']),
              'webhook-signature': String(signature),
            })
            s.verified++
          } catch {
            s.failed++
          }
        }
      }
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok')
      if (awaiting && uniqueTotal() >= awaiting.unique) {
        awaiting = undefined
        send({ type: 'reached', at })
      }
    })
  })
  server.keepAliveTimeout = 60_000
  return server
}

const servers = states.map((_, index) => serve(() => states[index]!))
await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))))

process.on('message', (message: ParentMessage) => {
  switch (message.type) {
    case 'secrets':
      message.secrets.forEach((secret, index) => (states[index]!.verifier = new Webhook(secret)))
      return send({ type: 'ok' })
    case 'reset':
      states.forEach((state, index) => (states[index] = fresh(state.verifier)))
      awaiting = undefined
      return send({ type: 'ok' })
    case 'now':
      return send({ type: 'now', at: now() })
    case 'await':
      if (uniqueTotal() >= message.unique) return send({ type: 'reached', at: now() })
      awaiting = { unique: message.unique }
      return
    case 'count':
      return send({ type: 'count', unique: uniqueTotal(), total: states.reduce((sum, state) => sum + state.ids.length, 0) })
    case 'collect': {
      const logs: ReceiverLog[] = states.map((state) => ({ ids: state.ids, at: state.at, signed: state.signed, verified: state.verified, failed: state.failed }))
      return send({ type: 'collected', logs })
    }
    case 'close':
      for (const server of servers) server.closeAllConnections()
      Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve)))).then(() => process.exit(0))
      return
  }
})
process.on('disconnect', () => process.exit(0))
send({ type: 'ready', ports: servers.map((server) => (server.address() as AddressInfo).port) })
