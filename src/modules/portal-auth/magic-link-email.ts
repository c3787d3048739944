import type { Mail } from '../../lib/mailer.ts'

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => ESCAPES[char]!)

/** The sign-in message: plain text for every client, HTML for those that show it. */
export function magicLinkEmail({ to, storeName, link, validMinutes }: { to: string; storeName: string; link: string; validMinutes: number }): Mail {
  const subject = `Your sign-in link for ${storeName}`
  const text = [
    `Hello,`,
    ``,
    `Use this link to manage your ${storeName} subscriptions:`,
    ``,
    link,
    ``,
    `The link works once and expires in ${validMinutes} minutes.`,
    `If you did not ask to sign in, you can ignore this email.`,
  ].join('\n')
  const html = `<!doctype html>
<html><body style="font-family: system-ui, sans-serif; line-height: 1.5">
<p>Hello,</p>
<p>Use this link to manage your <strong>${escapeHtml(storeName)}</strong> subscriptions:</p>
<p><a href="${escapeHtml(link)}">Sign in to ${escapeHtml(storeName)}</a></p>
<p>The link works once and expires in ${validMinutes} minutes. If you did not ask to sign in, you can ignore this email.</p>
</body></html>`
  return { to, subject, text, html }
}
