// The mailer that sends sign-in links (docs/contract.md, Magic-link sign-in and Running it): over a
// real SMTP server, refusing plain text when SMTP_REQUIRE_TLS says so, and loud when it has no server.
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { after, before, describe, test } from 'node:test'
import { pino } from 'pino'
import type { FastifyBaseLogger } from 'fastify'
import { createMailer } from '../../../src/lib/mailer.ts'
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink.ts'

const FROM = 'Bean & Leaf <no-reply@bean.test>'
const mail = (to: string) => ({ to, subject: 'Your sign-in link', text: 'https://portal.test/sign-in#token=abc', html: '<p>link</p>' })

function capturingLog(): { log: FastifyBaseLogger; lines: () => Array<{ level: number; msg: string }> } {
  const chunks: string[] = []
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      chunks.push(String(chunk))
      callback()
    },
  })
  const log = pino({ level: 'info' }, stream) as unknown as FastifyBaseLogger
  return { log, lines: () => chunks.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line)) }
}

describe('the sign-in mailer', () => {
  let sink: SmtpSink

  before(async () => {
    sink = await startSmtpSink()
  })
  after(() => sink.close())

  test('sends over plain SMTP by default', async () => {
    const { log } = capturingLog()
    const mailer = createMailer({ smtpUrl: sink.url, from: FROM, log, requireTls: false })
    try {
      await mailer.send(mail('plain@example.test'))
      assert.equal((await sink.waitForMessage('plain@example.test')).parsed.subject, 'Your sign-in link')
    } finally {
      mailer.close()
    }
  })

  test('with SMTP_REQUIRE_TLS it refuses a server that offers no STARTTLS, and nothing is delivered', async () => {
    const { log } = capturingLog()
    const mailer = createMailer({ smtpUrl: sink.url, from: FROM, log, requireTls: true })
    try {
      await assert.rejects(mailer.send(mail('tls-only@example.test')), (error: Error & { code?: string }) => error.code === 'ETLS' || /STARTTLS/.test(error.message))
      assert.equal(sink.messagesTo('tls-only@example.test').length, 0)
    } finally {
      mailer.close()
    }
  })

  test('without SMTP_URL it warns once, when made, that links go to the log', async () => {
    const { log, lines } = capturingLog()
    const mailer = createMailer({ smtpUrl: undefined, from: FROM, log, requireTls: false })
    await mailer.send(mail('a@example.test'))
    await mailer.send(mail('b@example.test'))
    const warnings = lines().filter((line) => line.level === 40)
    assert.equal(warnings.length, 1, JSON.stringify(lines()))
    assert.match(warnings[0]!.msg, /SMTP_URL is not set/)
    assert.match(warnings[0]!.msg, /production/)
  })
})
