import { Type } from 'typebox'
import { jobKind, NoPayload } from '../../jobs/job-kinds.ts'

/** Looks the email up in the background and sends a sign-in link when it is a subscriber's. */
export const SendMagicLink = jobKind('portal.send_magic_link', Type.Object({ store_hash: Type.String(), email: Type.String() }, { additionalProperties: false }), { maxAttempts: 6 })

/** Hourly: sign-in tokens and revocations that can no longer matter are removed. */
export const PurgePortalAuth = jobKind('portal.purge_expired', NoPayload, { maxAttempts: 1_000_000 })
