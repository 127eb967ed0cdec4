import { z } from 'zod'
import { text, timestamp, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'

// The operators' side of partners' NATS identities (see nats-claims.ts): credentials files
// issued and revoked, and a partner suspended or let back. Answered only when the bank is
// the NATS authority (`bank nats init`); on an open NATS server each is a 409 saying so.

/** The longest a NATS credentials file may be issued for: ten years. */
export const nats_creds_ttl_seconds_max = 10 * 365 * 24 * 3600

export const natsUserView = z.object({
  id: z.string(),
  public_key: z.string(),
  label: z.string(),
  created_at: timestamp,
  expires_at: timestamp.nullable(),
  revoked_at: timestamp.nullable(),
})

export const issuedNatsUser = natsUserView.extend({
  /** The credentials file (user JWT and nkey seed): shown in this reply only. */
  creds: z.string(),
})

const suspension =
  z.object({ partner_id: z.string(), suspended: z.boolean(), suspended_at: timestamp.nullable() })

export const natsIdentityOperations = {
  credsCreate: operation({
    name: 'ops_partner_nats_creds',
    sdk: 'partners.natsCreds',
    cli: { durations: ['expires_in_seconds'] },
    subject: 'ops.partner.nats_creds',
    permission: 'operator',
    summary:
      "Issue another NATS credentials file for a partner (a user of the partner's own NATS " +
        "account); shown once. " +
      'The partner connects with it (NATS_CREDS) and the CA certificate, and calls with its ' +
        'token as before.',
    request: z.strictObject({
      partner_id: uuid(),
      expires_in_seconds: z.int({ error: 'must be a whole number of seconds' }).min(60).max(
        nats_creds_ttl_seconds_max).optional(),
      label: text(1, 100).optional(),
    }),
    response: issuedNatsUser,
  }),
  users: operation({
    name: 'ops_partner_nats_users',
    sdk: 'partners.natsUsers',
    subject: 'ops.partner.nats_users',
    permission: 'operator',
    summary: "A partner's NATS users (never their credentials), oldest first.",
    request: z.strictObject({ partner_id: uuid() }),
    response: z.object({ partner_id: z.string(), suspended: z.boolean(),
      users: z.array(natsUserView) }),
  }),
  revoke: operation({
    name: 'ops_partner_nats_revoke',
    sdk: 'partners.natsRevoke',
    cli: { positionals: ['partner_id', 'user_id'] },
    subject: 'ops.partner.nats_revoke',
    permission: 'operator',
    summary: "Revoke one of a partner's NATS users: every server refuses it and disconnects it within seconds.",
    request: z.strictObject({ partner_id: uuid(), user_id: uuid() }),
    response: natsUserView,
  }),
  suspend: operation({
    name: 'ops_partner_suspend',
    sdk: 'partners.suspend',
    subject: 'ops.partner.suspend',
    permission: 'operator',
    summary:
      "Suspend a partner: its tokens are refused and every NATS user of its account is " +
        "disconnected on every server within " +
      'seconds, until it is let back (`partner unsuspend`). Suspending a suspended partner ' +
        'changes nothing.',
    request: z.strictObject({ partner_id: uuid() }),
    response: suspension,
  }),
  unsuspend: operation({
    name: 'ops_partner_unsuspend',
    sdk: 'partners.unsuspend',
    subject: 'ops.partner.unsuspend',
    permission: 'operator',
    summary: "Let a suspended partner back: its tokens and its NATS users not revoked one by one work again.",
    request: z.strictObject({ partner_id: uuid() }),
    response: suspension,
  }),
} as const
