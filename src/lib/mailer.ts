import type { FastifyBaseLogger } from 'fastify'
import nodemailer from 'nodemailer'

export interface Mail {
  to: string
  subject: string
  text: string
  html: string
}

export interface Mailer {
  send(mail: Mail): Promise<void>
  close(): void
}

/**
 * Mail over SMTP when `SMTP_URL` is set; with `requireTls` (SMTP_REQUIRE_TLS) only after STARTTLS,
 * so a server that offers none is refused rather than sent a sign-in link in plain text. Without
 * `SMTP_URL` (local runs only: configuration refuses it in production and for live stores), the
 * message goes to the log so a developer can still follow a sign-in link; that is the only place a
 * link is ever logged, and the mailer says so once, when it is made.
 */
export function createMailer({ smtpUrl, from, log, requireTls = false }: { smtpUrl: string | undefined; from: string; log: FastifyBaseLogger; requireTls?: boolean }): Mailer {
  if (!smtpUrl) {
    log.warn('SMTP_URL is not set: sign-in emails are written to the log instead of sent, so anyone who reads the log can sign in as their recipients. Fine for local development; never in production (set SMTP_URL)')
    return {
      async send(mail) {
        log.info({ mail: { from, to: mail.to, subject: mail.subject, text: mail.text } }, 'SMTP_URL is not set: this email was written to the log instead of sent')
      },
      close() {},
    }
  }
  const transport = nodemailer.createTransport({ url: smtpUrl, requireTLS: requireTls })
  return {
    async send(mail) {
      await transport.sendMail({ from, ...mail })
    },
    close: () => transport.close(),
  }
}
