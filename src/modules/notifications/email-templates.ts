import { NOTIFICATION_TEMPLATES, type NotificationTemplate } from '../stores/index.ts'

/**
 * Every subscriber email: those the service sends with an event, each switched on or off by the
 * store (`NOTIFICATION_TEMPLATES`, the store setting `notifications`), and those an admin asks for
 * (`payment_update_link`), which are always sent: the merchant asked for that one email.
 */
export const REQUESTED_TEMPLATES = ['payment_update_link'] as const
export const EMAIL_TEMPLATES = [...NOTIFICATION_TEMPLATES, ...REQUESTED_TEMPLATES] as const
export type EmailTemplate = NotificationTemplate | (typeof REQUESTED_TEMPLATES)[number]

export function isRequestedTemplate(template: EmailTemplate): template is (typeof REQUESTED_TEMPLATES)[number] {
  return (REQUESTED_TEMPLATES as readonly string[]).includes(template)
}
