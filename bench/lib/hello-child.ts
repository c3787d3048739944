// The baseline: bare Fastify with defaults, the least work an HTTP JSON answer can cost here.
import Fastify from 'fastify'
import { announceReady, closeOnSignal } from './child-protocol.ts'

const app = Fastify()
app.get('/', async () => ({ hello: 'world' }))
await app.listen({ port: 0, host: '127.0.0.1' })
closeOnSignal(() => app.close())
announceReady(app.server, '/')
