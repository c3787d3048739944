/**
 * Review of issue 17 (src/db/change-feed.ts): the LISTEN connection only ever reads, with no heartbeat
 * and no TCP keepalive, so a connection that stops carrying data without being closed (a network
 * partition, a NAT or load balancer dropping idle flows, a failover that leaves the old socket
 * half-open) is never noticed: `live` stays true and every process keeps answering from memory.
 * Here the listener runs through a TCP relay that stops forwarding (sockets kept open); a sign-out
 * committed by another process is then still accepted well past the contract's 1 second
 * (docs/contract.md section 10, "Sign-out and caches").
 */
import assert from 'node:assert/strict'
import { createServer, connect, type Socket, type AddressInfo } from 'node:net'
import { randomUUID } from 'node:crypto'
import { after, before, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import type { DatabaseHandle } from '../../src/db/connect.ts'
import { postgresChangeFeed } from '../../src/db/change-feed.ts'
import { createAuthCache } from '../../src/modules/stores/auth-cache.ts'
import { createStore } from '../../src/modules/stores/index.ts'
import { createTestDatabase, onPostgres, scratchUrl } from '../helpers/database.ts'

let database: DatabaseHandle
before(async () => {
  if (onPostgres) database = await createTestDatabase()
})
after(() => database?.close())

test('a listener that silently stops hearing is not trusted past the contract bound', { skip: !onPostgres && 'PostgreSQL only' }, async () => {
  const target = new URL(scratchUrl(database)!)
  let frozen = false
  const sockets: Socket[] = []
  const relay = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname)
    sockets.push(client, upstream)
    client.on('data', (chunk) => void (frozen || upstream.write(chunk)))
    upstream.on('data', (chunk) => void (frozen || client.write(chunk)))
    client.on('error', () => {})
    upstream.on('error', () => {})
  })
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve))
  const relayed = new URL(target)
  relayed.host = `127.0.0.1:${(relay.address() as AddressInfo).port}`

  const { feed } = postgresChangeFeed(relayed.toString())
  const cache = createAuthCache({ db: database.db, changes: feed })
  const other = new pg.Client({ connectionString: target.toString() }) // "another process"
  await other.connect()
  try {
    for (let i = 0; i < 100 && !feed.live; i++) await sleep(20)
    assert.ok(feed.live, 'listening')
    const store = await createStore(database.db, { storeHash: `review17-ho-${process.pid}` })
    const jti = randomUUID()
    const exp = Math.floor(Date.now() / 1000) + 900
    assert.ok(await cache.portalStore(store.id, jti, exp), 'session live')

    frozen = true // the listening connection stops carrying data; nothing is closed
    await other.query('INSERT INTO revoked_sessions (jti, expires_at) VALUES ($1, $2)', [jti, new Date(exp * 1000)])
    await sleep(1_500)
    assert.equal(await cache.portalStore(store.id, jti, exp), undefined, 'signed out 1.5 s ago by another process, still accepted')
    assert.equal(feed.live, false, 'the feed should notice it has not heard anything')
  } finally {
    cache.close()
    await other.end()
    for (const socket of sockets) socket.destroy()
    await feed.close().catch(() => {})
    relay.close()
  }
})
