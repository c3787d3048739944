import { Type, type Static } from 'typebox'
import { Id, Nullable, PageQuery, StringEnum, Timestamp } from '../../http/schemas.ts'
import { NOTIFICATION_TEMPLATES } from '../stores/index.ts'

export const NotificationTemplateName = StringEnum(NOTIFICATION_TEMPLATES, { description: 'Which email' })
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
    sent_at: Nullable(Timestamp, { description: 'When the mail server accepted it (real time); null until then' }),
    created_at: Timestamp,
  },
  { $id: 'Notification', title: 'Notification', additionalProperties: false, description: 'One subscriber email: what was sent, to whom, and how it went. Never its body (it holds sign-in links)' },
)
export type NotificationView = Static<typeof Notification>

export const NotificationListQuery = Type.Object(
  {
    ...PageQuery,
    subscription_id: Type.Optional(Id('sub')),
    template: Type.Optional(NotificationTemplateName),
    status: Type.Optional(NotificationStatusName),
  },
  { additionalProperties: false },
)
