import { encodeAccount, encodeActivation, encodeOperator, encodeUser, fmtCreds, type Account, type Export, type Import, type User } from '@nats-io/jwt'
import { createAccount, createUser, type KeyPair } from '@nats-io/nkeys'

// What the bank signs as the NATS authority of its partners (decentralised JWT auth:
// operator → accounts → users). Pure: keys in, JWTs and credentials files out.
//
// Accounts, and why (NATS isolates accounts from one another completely; nothing crosses
// between two accounts unless one exports it and the other imports it):
//   - SYS: the servers' system account. The bank pushes account JWTs to the servers'
//     resolver through it ($SYS.REQ.CLAIMS.UPDATE); no one else has a user in it.
//   - BANK: the bank's instances. It serves `svc.>`, `ops.>`, `net.card.>` and `$SRV.>` and
//     exports them as services that need an activation token, so that no account can import
//     them unless the bank signed that import.
//   - OPERATORS: the bank's operators. Imports `ops.>` and `$SRV.>` (for `bank status`);
//     reaches nothing of a partner's.
//   - CARD_NETWORK: the card network connected for real. Imports `net.card.>` only (its
//     authorizations, increments, reversals, clearings and refunds); reaches no `svc.`,
//     `ops.` or `$SRV` subject, and no partner's account imports `net.card.>`.
//   - one account per partner: imports `svc.*.<partner_id>.>` and the entity-scoped
//     operations' subjects (its own subjects only, each with an activation token naming it)
//     and has JetStream of its own, in which the partner's KYC/KYB dropboxes live. Its
//     streams can capture only its own account's messages, which are its own requests and
//     the bank's replies to it.
// Every import shares the requester's identity (`share`), so the server adds a
// `Nats-Request-Info` header naming the calling account to each request (replacing any a
// client sent): the bank knows which partner a request came through.

/** Limits of an account where the bank sets none: unlimited (-1), wildcards allowed. */
const unlimited = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true,
  conn: -1, leaf: -1 } as const
/** No JetStream in an account. */
const no_jetstream = { mem_storage: 0, disk_storage: 0, streams: 0, consumer: 0 } as const

/**
 * What a partner's account may use of the NATS servers (docs/operations.md, "NATS limits per
 * partner", says why each number): the bank's defaults, which an operator may change per
 * partner (`bank partner limits`, nats_limits). Every one is enforced by nats-server itself.
 */
export interface PartnerNatsLimits {
  /** Connections open at once in the account (its users' and the bank's readers' into it). */
  connections: number
  /** Subscriptions of each connection (nats-server applies an account's `subs` per connection). */
  subscriptions: number
  /** The largest message a connection of the account may publish, headers included (bytes). */
  payload: number
  /** JetStream file storage of the account (bytes): its KYC/KYB dropboxes. */
  jetstream_disk: number
  /** JetStream memory storage of the account (bytes). */
  jetstream_memory: number
  /** JetStream streams of the account (each dropbox bucket is one). */
  jetstream_streams: number
  /** Consumers of each of its streams (nats-server counts an account's limit per stream). */
  jetstream_consumers: number
}

/**
 * The largest request a partner sends: a bulk payment of 1,000 payments (786,432 bytes,
 * bulk-contract.ts), with room for its headers (token, idempotency key, trace context).
 */
export const partner_payload_default = 786_432 + 16 * 1024

export const partner_nats_limits_default: Readonly<PartnerNatsLimits> = {
  connections: 64,
  subscriptions: 1_000,
  payload: partner_payload_default,
  jetstream_disk: 1024 ** 3,
  jetstream_memory: 64 * 1024 ** 2,
  jetstream_streams: 10_000,
  jetstream_consumers: 100,
}

/** The account claims' limits for a partner's limits (`imports`: how many it has). */
export function partnerAccountLimits(limits: PartnerNatsLimits, imports: number) {
  return {
    conn: limits.connections,
    subs: limits.subscriptions,
    payload: limits.payload,
    // nats-server does not enforce an account's `data` (bytes per second): a partner's rate
    // is bounded by its request budget (429) and its payload, connections and subscriptions.
    data: -1,
    // No server of the bank's listens for leaf nodes; none of a partner's may connect.
    leaf: 0,
    // The partner's account exports nothing; its imports are the bank's to sign.
    exports: 0,
    imports,
    wildcards: true,
    disk_storage: limits.jetstream_disk,
    mem_storage: limits.jetstream_memory,
    streams: limits.jetstream_streams,
    consumer: limits.jetstream_consumers,
  }
}

/**
 * The subjects a partner's account imports from the bank: every operation naming that
 * partner (`svc.*.<partner_id>.>`), and the few that name one of its entities instead
 * (`entitySubjects`, e.g. `svc.account.*.bulk_payment.initiate`: fixed patterns from the
 * contract, not one per entity), whose entity the bank checks is the caller's.
 */
export const partnerServiceSubjects = (partnerId: string,
  entitySubjects: readonly string[]): string[] => [`svc.*.${partnerId}.>`, ...entitySubjects]

/** The header the server adds to a request that crossed an import with `share`. */
export const request_info_header = 'Nats-Request-Info'

/** The subjects of the card network's own operations (src/cards/card-contract.ts). */
export const card_network_subjects = 'net.card.>'

export interface AuthorityKeys {
  operator: KeyPair
  /** The operator's signing key: signs every account JWT, so the identity key can stay unused. */
  signing: KeyPair
  system: KeyPair
  bank: KeyPair
  operators: KeyPair
  /** The card network's account: undefined for an authority set up before it had one. */
  cardNetwork: KeyPair | undefined
}

export async function operatorJwt(keys: Pick<AuthorityKeys, 'operator' | 'signing' | 'system'>,
    name: string): Promise<string> {
  return encodeOperator(name, keys.operator, {
    signing_keys: [keys.signing.getPublicKey()],
    system_account: keys.system.getPublicKey(),
  })
}

export async function systemAccountJwt(keys: Pick<AuthorityKeys,
    'signing' | 'system'>): Promise<string> {
  return encodeAccount('SYS', keys.system, { limits: { ...unlimited, ...no_jetstream } },
    { signer: keys.signing })
}

/** The bank's account: it serves every subject and exports each only against a token it signed. */
export async function bankAccountJwt(keys: Pick<AuthorityKeys,
    'signing' | 'bank'>): Promise<string> {
  const exports: Export[] = [
    { name: 'partner operations', subject: 'svc.>', type: 'service', token_req: true,
      response_type: 'Singleton' },
    { name: 'operator operations', subject: 'ops.>', type: 'service', token_req: true,
      response_type: 'Singleton' },
    { name: 'card network operations', subject: card_network_subjects, type: 'service',
      token_req: true, response_type: 'Singleton' },
    // $SRV.PING/INFO/STATS are answered by every instance: many replies to one request.
    { name: 'service discovery', subject: '$SRV.>', type: 'service', token_req: true,
      response_type: 'Stream' },
  ]
  return encodeAccount('BANK', keys.bank, { exports, limits: { ...unlimited, ...no_jetstream } },
    { signer: keys.signing })
}

/** The operators' account: `ops.>` and `$SRV.>` from the bank, nothing else. */
export async function operatorsAccountJwt(keys: Pick<AuthorityKeys,
    'signing' | 'bank' | 'operators'>): Promise<string> {
  const imports: Import[] = []
  for (const [name, subject] of [['operator operations', 'ops.>'],
      ['service discovery', '$SRV.>']] as const) {
    const token = await encodeActivation(name, keys.operators, keys.bank, 'service', { subject })
    imports.push({ name, subject, account: keys.bank.getPublicKey(), type: 'service', token,
      share: true })
  }
  return encodeAccount('OPERATORS', keys.operators,
    { imports, limits: { ...unlimited, ...no_jetstream } }, { signer: keys.signing })
}

/** The card network's account: `net.card.>` from the bank, nothing else. */
export async function cardNetworkAccountJwt(keys: Pick<AuthorityKeys, 'signing' | 'bank'>,
    account: KeyPair): Promise<string> {
  const name = 'card network operations'
  const token = await encodeActivation(name, account, keys.bank, 'service',
    { subject: card_network_subjects })
  const imports: Import[] = [{ name, subject: card_network_subjects,
    account: keys.bank.getPublicKey(), type: 'service', token, share: true }]
  return encodeAccount('CARD_NETWORK', account,
    { imports, limits: { ...unlimited, ...no_jetstream, exports: 0 } }, { signer: keys.signing })
}

export interface PartnerAccountState {
  partnerId: string
  /** The entity-scoped operations' subjects, the entity token a `*`. */
  entitySubjects: readonly string[]
  /**
   * Users revoked: public key → epoch second (the server refuses user JWTs issued at or before it).
   */
  revoked: Record<string, number>
  /** Suspended since this epoch second: every user of the account is refused and disconnected. */
  suspendedAt: number | null
  /** What the account may use of the servers. */
  limits: PartnerNatsLimits
}

export async function partnerAccountJwt(keys: Pick<AuthorityKeys, 'signing' | 'bank'>,
    account: KeyPair, state: PartnerAccountState): Promise<string> {
  const imports: Import[] = []
  for (const subject of partnerServiceSubjects(state.partnerId, state.entitySubjects)) {
    // Each import carries the bank's activation for exactly that subject.
    const token = await encodeActivation('partner operations', account, keys.bank, 'service',
      { subject })
    imports.push({ name: subject, subject, account: keys.bank.getPublicKey(), type: 'service',
      token, share: true })
  }
  const revocations: Record<string, number> = { ...state.revoked }
  if (state.suspendedAt !== null) revocations['*'] = state.suspendedAt
  const claims: Partial<Account> = {
    imports,
    limits: partnerAccountLimits(state.limits, imports.length),
    revocations,
  }
  return encodeAccount(`partner ${state.partnerId}`, account, claims, { signer: keys.signing })
}

/**
 * What a partner's user may do inside its own account: publish (its requests, its dropbox
 * uploads and JetStream calls) and receive on `_INBOX.>`, which is where the reference SDK
 * and ours take replies, and on `decisions.>`, where it serves the bank's real-time card
 * authorization requests (src/cards/card-decisions.ts). It can subscribe to nothing else,
 * so even inside its own account it sees none of its own requests.
 */
export const partner_user_permissions: Partial<User> = {
  sub: { allow: ['_INBOX.>', 'decisions.>'] },
}

/** An operator's user: `ops.` operations and `$SRV` discovery out, replies in. */
export const operator_user_permissions: Partial<User> = { pub: { allow: ['ops.>', '$SRV.>'] },
  sub: { allow: ['_INBOX.>'] } }

/**
 * The card network's user: its requests on `net.card.` out, replies in on its inbox. It
 * cannot subscribe to `net.card.>` itself, so it never sees a request, its own included.
 */
export const card_network_user_permissions: Partial<User> = {
  pub: { allow: [card_network_subjects] },
  sub: { allow: ['_INBOX.>'] },
}

/**
 * The bank's reader of a partner's dropboxes, inside that partner's account: JetStream's API only.
 */
export const dropbox_reader_inbox = '_INBOX_bank_reader'
export const dropbox_reader_permissions: Partial<User> = { pub: { allow: ['$JS.API.>'] },
  sub: { allow: [`${dropbox_reader_inbox}.>`] } }

/** The bank's asker of a partner's card decisions, inside that partner's account. */
export const card_decider_inbox = '_INBOX_bank_decider'
export const card_decider_permissions: Partial<User> = {
  pub: { allow: ['decisions.>'] },
  sub: { allow: [`${card_decider_inbox}.>`] },
}

export interface IssuedUser {
  publicKey: string
  /** The credentials file (user JWT and nkey seed), as `nsc` writes it and NATS_CREDS takes it. */
  creds: string
}

/**
 * A new user of `account`, signed by it; `expiresAt` (epoch second) makes the server refuse it
 * after.
 */
export async function issueUser(account: KeyPair, name: string, permissions: Partial<User>,
    expiresAt?: number): Promise<IssuedUser> {
  const user = createUser()
  const jwt = await encodeUser(name, user, account, permissions, expiresAt === undefined ? {}
    : { exp: expiresAt })
  return { publicKey: user.getPublicKey(), creds: new TextDecoder().decode(fmtCreds(jwt, user)) }
}

export const newAccountKey = (): KeyPair => createAccount()

/** The epoch second of a date. */
export const epochSecond = (at: Date): number => Math.floor(at.getTime() / 1000)
