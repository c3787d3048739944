import { Type, type Static } from 'typebox'
import { Id, Nullable, PageQuery, StringEnum, Timestamp } from '../../http/schemas.ts'
import { EMAIL_TEMPLATES } from './email-templates.ts'

export const NotificationTemplateName = StringEnum(EMAIL_TEMPLATES, {
  description: "Which email: one of the store's switchable templates (store setting `notifications`), or `payment_update_link`, sent when an admin asks for it (`POST /api/v1/admin/subscriptions/{id}/payment-update-link`)",
})
export const NOTIFICATION_STATUSES = ['pending', 'sent', 'failed'] as const
export const NotificationStatusName = StringEnum(NOTIFICATION_STATUSES, {
  description: '`pending` while being sent; `sent` once the mail server accepted it; `failed` after a failed attempt (retried with back-off until it is sent or its attempts run out)',
})

export const Notification = Type.Object(
  {
    id: Id('ntf'),
    object: Type.Literal('notification'),
    template: NotificationTemplateName,
    recipient: Type.String({ description: "The subscriber's email address" }),
    subscription_id: Nullable(Id('sub')),
    status: NotificationStatusName,
    attempts: Type.Integer({ minimum: 0, description: 'Sending attempts so far' }),
    error: Nullable(Type.String({ description: "The mail server's answer to the last failed attempt" })),
    sent_at: Nullable(Timestamp, { description: "When the mail server accepted it, on the store's clock (a test store's test clock); null until then" }),
    created_at: { ...Timestamp, description: "When it was first tried, on the store's clock" },
  },
  { $id: 'Notification', title: 'Notification', additionalProperties: false, description: 'One subscriber email: what was sent, to whom, and how it went. Never its body (it holds sign-in links)' },
)
export type NotificationView = Static<typeof Notification>

export const NotificationListQuery = Type.Object(
  {
    ...PageQuery,
    subscription_id: Type.Optional(Id('sub')),
    subscriber_id: Type.Optional(Id('cus', "The emails sent to this subscriber's address")),
    template: Type.Optional(NotificationTemplateName),
    status: Type.Optional(NotificationStatusName),
  },
  { additionalProperties: false },
)
