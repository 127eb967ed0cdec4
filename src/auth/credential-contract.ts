import { z } from 'zod'
import { text, timestamp, uuid } from '../contract/fields.ts'
import { operation, permissions } from '../contract/operation.ts'

// Credentials as operators manage them on `ops.credential.*`: issue (the token shown once),
// revoke, list; a partner's, or a card network's (its own kind, for `net.card.` subjects
// only). Beside the credential store (credential-store.ts) that keeps their hashes; the
// partner service checks the partner, and the endpoint wrapper writes the audit row.

/**
 * A credential as listed: a card network's has no partner (`partner_id` null), no
 * permissions, and the network's name as its label.
 */
const credentialView = z.object({
  id: z.string(),
  partner_id: z.string().nullable(),
  permissions: z.array(z.enum(['read', 'write', 'payments', 'card_details'])),
  label: z.string(),
  created_at: timestamp,
  expires_at: timestamp.nullable(),
  revoked_at: timestamp.nullable(),
})

/** A credential as issued: its id and its token, which only this reply shows. */
export const issuedCredential = z.object({ id: z.string(), token: z.string() })

/** The longest a credential may be issued for: ten years. */
export const credential_ttl_seconds_max = 10 * 365 * 24 * 3600

export const credentialOperations = {
  credentialCreate: operation({
    name: 'ops_credential_create',
    sdk: 'credentials.create',
    cli: { durations: ['expires_in_seconds'] },
    subject: 'ops.credential.create',
    permission: 'operator',
    summary: 'Issue a partner credential; the token is shown once and only its hash is kept.',
    request: z.strictObject({
      partner_id: uuid(),
      permissions: z.array(z.enum(permissions as ['read', 'write', 'payments', 'card_details'],
        { error: 'must be read, write, payments or card_details' })).min(1,
        { error: 'name at least one permission' }),
      expires_in_seconds: z.int({ error: 'must be a whole number of seconds' }).min(60).max(
        credential_ttl_seconds_max).optional(),
      label: z.string().max(100).optional(),
    }),
    response: issuedCredential,
  }),
  credentialRevoke: operation({
    name: 'ops_credential_revoke',
    sdk: 'credentials.revoke',
    subject: 'ops.credential.revoke',
    permission: 'operator',
    summary: 'Revoke a credential at once.',
    request: z.strictObject({ credential_id: uuid() }),
    response: credentialView,
  }),
  credentialList: operation({
    name: 'ops_credential_list',
    sdk: 'credentials.list',
    subject: 'ops.credential.list',
    permission: 'operator',
    summary: "A partner's credentials (never their tokens).",
    request: z.strictObject({ partner_id: uuid() }),
    response: z.object({ credentials: z.array(credentialView) }),
  }),
  credentialCreateCardNetwork: operation({
    name: 'ops_credential_create_card_network',
    sdk: 'credentials.createCardNetwork',
    cli: { durations: ['expires_in_seconds'] },
    subject: 'ops.credential.create_card_network',
    permission: 'operator',
    summary: "Issue a card network's credential (`cnk_…`), for its calls on the net.card. subjects only (no svc. or ops. subject); the token is shown once and only its hash is kept. The network's calls are not operator actions: they write no operator audit row.",
    request: z.strictObject({
      label: text(1, 100),
      expires_in_seconds: z.int({ error: 'must be a whole number of seconds' }).min(60).max(
        credential_ttl_seconds_max).optional(),
    }),
    response: issuedCredential,
  }),
  credentialListCardNetworks: operation({
    name: 'ops_credential_list_card_networks',
    sdk: 'credentials.listCardNetworks',
    subject: 'ops.credential.list_card_networks',
    permission: 'operator',
    summary: "The card networks' credentials (never their tokens), oldest first; revoke one with ops.credential.revoke.",
    request: z.strictObject({}),
    response: z.object({ credentials: z.array(credentialView) }),
  }),
}

// The replies' types, for the store and the service that build them.
export type IssuedCredential = z.output<typeof issuedCredential>
export type CredentialView = z.output<typeof credentialView>
