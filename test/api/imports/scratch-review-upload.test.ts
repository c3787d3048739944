import assert from 'node:assert/strict'
import net from 'node:net'
import { after, before, describe, test } from 'node:test'
import { DateTime } from 'luxon'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'

const H = ['subscription_id','email','external_product_id','recurring_price','quantity','charge_interval_frequency','charge_interval_unit_type','next_charge_date','processor_payment_method_token','shipping_address1','shipping_city','shipping_zip','shipping_country']
const next = DateTime.utc().plus({ days: 5 }).toISODate()!
const line = (id: string, price = '12.50') => [id, `${id}@example.com`, '4242', price, '1', '1', 'month', next, 'tok', '1 A St', 'London', 'N1', 'GB'].join(',')

describe('scratch review: upload broken off', () => {
  let t: TestApp
  let shop: StoreWithKey
  let port: number
  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, shop.auth, { platform_product_id: '4242', name: 'Coffee beans' })
    await createPlan(t.app, shop.auth, product.id, { amount: 1400 })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    port = (t.app.server.address() as net.AddressInfo).port
  })
  after(() => t?.close())

  async function send(head: string, body: string, wait = 300) {
    const socket = net.connect(port, '127.0.0.1')
    await new Promise((r) => socket.once('connect', r))
    let answer = ''
    socket.on('data', (d) => (answer += d))
    socket.on('error', () => {})
    socket.write(head + body)
    await new Promise((r) => setTimeout(r, wait))
    socket.destroy()
    await new Promise((r) => setTimeout(r, 500))
    return answer
  }

  test('chunked upload cut mid-row (no terminating chunk)', async () => {
    const body = [H.join(','), line('c1'), line('c2'), 'c3,c3@example.com,4242,1'].join('\n')
    const chunk = `${body.length.toString(16)}\r\n${body}\r\n`
    const answer = await send(`POST /api/v1/admin/imports?format=recharge HTTP/1.1\r\nHost: x\r\nAuthorization: ${shop.auth.authorization}\r\nContent-Type: text/csv\r\nTransfer-Encoding: chunked\r\n\r\n`, chunk)
    console.log('CHUNKED answer', JSON.stringify(answer.slice(0, 200)))
    const imports = await t.db.selectFrom('imports').selectAll().where('store_id', '=', shop.store.id).execute()
    console.log('CHUNKED imports', JSON.stringify(imports.map((i) => [i.status, i.rows, i.created, i.failed, i.errors])))
    const c3 = await t.db.selectFrom('subscriptions').select(['external_id', 'amount']).where('store_id', '=', shop.store.id).execute()
    console.log('CHUNKED subs', JSON.stringify(c3))
  })

  test('content-length upload cut mid-row', async () => {
    const body = [H.join(','), line('l1'), 'l2,l2@example.com,4242,1'].join('\n')
    const answer = await send(`POST /api/v1/admin/imports?format=recharge HTTP/1.1\r\nHost: x\r\nAuthorization: ${shop.auth.authorization}\r\nContent-Type: text/csv\r\nContent-Length: ${body.length + 500}\r\n\r\n`, body)
    console.log('CL answer', JSON.stringify(answer.slice(0, 200)))
    const imports = await t.db.selectFrom('imports').selectAll().where('store_id', '=', shop.store.id).orderBy('id').execute()
    console.log('CL imports', JSON.stringify(imports.map((i) => [i.status, i.rows, i.created, i.failed, i.errors])))
  })

  test('a huge declared Content-Length', async () => {
    for (const len of [3_000_000_000, 600 * 1024 * 1024]) {
      const body = [H.join(','), line('cl' + len)].join('\n')
      const answer = await send(`POST /api/v1/admin/imports?format=recharge HTTP/1.1\r\nHost: x\r\nAuthorization: ${shop.auth.authorization}\r\nContent-Type: text/csv\r\nContent-Length: ${len}\r\n\r\n`, body, 1500)
      console.log('HUGECL', len, JSON.stringify(answer.slice(0, 400)))
    }
  })

  test('over 512 MB actually sent', async () => {
    const { Readable } = await import('node:stream')
    const blank = Buffer.alloc(4 * 1024 * 1024, 10)
    let sent = 0
    const stream = new Readable({ read() { if (sent === 0) { this.push(H.join(',') + '\n'); sent = 1; return } if (sent > 130) return this.push(null); sent++; this.push(blank) } })
    const t0 = Date.now()
    const r = await call(t.app, { method: 'POST', url: '/api/v1/admin/imports?format=recharge', headers: { ...shop.auth, 'content-type': 'text/csv' }, payload: stream })
    console.log('OVER512', Date.now() - t0, 'ms', r.statusCode, r.json?.status, JSON.stringify(r.json?.errors)?.slice(0, 300))
  })

  test('a 10 MB single cell', async () => {
    const big = 'x'.repeat(10 * 1024 * 1024)
    const r = await call(t.app, { method: 'POST', url: '/api/v1/admin/imports?format=recharge', headers: { ...shop.auth, 'content-type': 'text/csv' }, payload: [H.join(','), line('b1'), `b2,${big}`].join('\n') })
    console.log('BIGCELL', r.statusCode, r.json?.status, JSON.stringify(r.json?.errors)?.slice(0, 300))
  })

  test('NUL byte and invalid utf-8 in a name / email', async () => {
    const hdr = H.join(',') + ',first_name'
    const buf = Buffer.concat([Buffer.from(hdr + '\n' + line('u1') + ',Bo\u0000b\n'), Buffer.from(line('u2').replace('u2@example.com', 'u2\xff@example.com'), 'latin1'), Buffer.from('\n')])
    const r = await call(t.app, { method: 'POST', url: '/api/v1/admin/imports?format=recharge', headers: { ...shop.auth, 'content-type': 'text/csv' }, payload: buf })
    const subs = await t.db.selectFrom('subscribers').select(['email', 'name']).where('store_id', '=', shop.store.id).where('email', 'like', 'u%').execute()
    console.log('UTF', r.statusCode, r.json?.created, JSON.stringify(r.json?.errors), JSON.stringify(subs))
  })

  test('content-type with charset / other types', async () => {
    for (const ct of ['text/csv; charset=utf-8', 'text/plain', 'application/json', 'application/octet-stream']) {
      const r = await call(t.app, { method: 'POST', url: '/api/v1/admin/imports?format=recharge&dry_run=true', headers: { ...shop.auth, 'content-type': ct }, payload: [H.join(','), line('ct1')].join('\n') })
      console.log('CT', ct, r.statusCode, r.json?.code ?? r.json?.status)
    }
    const noCt = await call(t.app, { method: 'POST', url: '/api/v1/admin/imports?format=recharge&dry_run=true', headers: { ...shop.auth }, payload: '' })
    console.log('CT none', noCt.statusCode, noCt.json?.code)
  })
})
