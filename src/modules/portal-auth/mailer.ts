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
 * Mail over SMTP when `SMTP_URL` is set. Without it (local runs), the message goes to the log so a
 * developer can still follow a sign-in link; that is the only place a link is ever logged.
 */
export function createMailer({ smtpUrl, from, log }: { smtpUrl: string | undefined; from: string; log: FastifyBaseLogger }): Mailer {
  if (!smtpUrl) {
    return {
      async send(mail) {
        log.info({ mail: { from, to: mail.to, subject: mail.subject, text: mail.text } }, 'SMTP_URL is not set: this email was written to the log instead of sent')
      },
      close() {},
    }
  }
  const transport = nodemailer.createTransport(smtpUrl)
  return {
    async send(mail) {
      await transport.sendMail({ from, ...mail })
    },
    close: () => transport.close(),
  }
}
