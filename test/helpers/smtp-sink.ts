import { simpleParser, type ParsedMail } from 'mailparser'
import type { AddressInfo } from 'node:net'
// wall clock: waitForMessage polls a real SMTP server (below).
import { setTimeout as sleep } from 'node:timers/promises'
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server'

export interface ReceivedMessage {
  /** Envelope sender (MAIL FROM). */
  from: string
  /** Envelope recipients (RCPT TO), lower-cased. */
  to: string[]
  /** The message exactly as received. */
  raw: string
  parsed: ParsedMail
}

export interface SmtpSink {
  /** `smtp://127.0.0.1:<port>`, for SMTP_URL. */
  url: string
  port: number
  /** Every accepted message, oldest first. */
  messages: ReceivedMessage[]
  /** How many messages were refused on purpose (see failNext). */
  rejected: number
  /** Messages accepted for one recipient. */
  messagesTo(to: string): ReceivedMessage[]
  /**
   * The next message for `to` not yet returned by an earlier call (oldest first); waits up to
   * timeoutMs for it to arrive, then throws.
   */
  waitForMessage(to: string, timeoutMs?: number): Promise<ReceivedMessage>
  /** Refuses the next `count` messages at the end of DATA with a temporary SMTP error (451). */
  failNext(count: number): void
  close(): Promise<void>
}

/**
 * A real SMTP server on 127.0.0.1 (a free port, no TLS, authentication optional) that keeps what it
 * receives: the service talks to it exactly as to a mail relay.
 */
export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: ReceivedMessage[] = []
  const taken = new Set<ReceivedMessage>()
  let failures = 0
  let rejected = 0

  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        if (failures > 0) {
          failures -= 1
          rejected += 1
          const error = Object.assign(new Error('Temporary local problem, try again later (sink told to fail)'), { responseCode: 451 })
          return callback(error)
        }
        const raw = Buffer.concat(chunks).toString('utf8')
        simpleParser(raw).then(
          (parsed) => {
            const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : ''
            messages.push({ from, to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()), raw, parsed })
            callback()
          },
          (error: Error) => callback(error),
        )
      })
      stream.on('error', (error) => callback(error))
    },
  })
  // A client that hangs up mid-session must not crash the test process.
  server.on('error', () => {})
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.server.address() as AddressInfo

  const messagesTo = (to: string) => messages.filter((message) => message.to.includes(to.toLowerCase()))

  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    get rejected() {
      return rejected
    },
    messagesTo,
    async waitForMessage(to, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const next = messagesTo(to).find((message) => !taken.has(message))
        if (next) {
          taken.add(next)
          return next
        }
        if (Date.now() > deadline) throw new Error(`no email for ${to} within ${timeoutMs} ms (${messages.length} received in all, ${rejected} refused)`)
        // wall clock: mail arrives at this real SMTP server from another task or process; polled, with a deadline.
        await sleep(25)
      }
    },
    failNext(count) {
      failures = count
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
