import { randomUUID } from 'node:crypto'
import { decode } from '@nats-io/jwt'
import { fromSeed, type KeyPair } from '@nats-io/nkeys'
import { sql, type Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import { formatTimestamp } from '../contract/format.ts'
import { allOperations, scopeOf } from '../contract/index.ts'
import type { Database } from '../schema.ts'
import { Conflict, NotFound } from '../errors.ts'
import type { SecretBox } from '../secrets/secret-box.ts'
import {
  dropbox_reader_permissions,
  card_decider_permissions,
  card_network_user_permissions,
  epochSecond,
  issueUser,
  newAccountKey,
  operator_user_permissions,
  partner_user_permissions,
  partnerAccountJwt,
  partnerAccountLimits,
  type AuthorityKeys,
  type PartnerNatsLimits,
} from './nats-claims.ts'
import * as store from './nats-identity-store.ts'
import { assertQuotaFits, type JetStreamStorage } from './jetstream-quota.ts'

// The bank as the NATS authority of its partners, once `bank nats init` has set it up: it
// makes each partner's account when the partner is onboarded, issues and revokes the
// partner's NATS users (credentials files), suspends a partner, and pushes every change of
// an account to the servers' resolver (`$SYS.REQ.CLAIMS.UPDATE`), so that no server
// configuration is edited after the first set-up. Seeds are kept sealed under the bank's
// secrets key; JWT times are the real clock's (the servers check them), not the sandbox's.

/** Sends an account JWT to the servers; resolves once one of them took it. */
export type PushAccount = (jwt: string) => Promise<void>

export interface NatsUserView {
  id: string
  public_key: string
  label: string
  created_at: string
  expires_at: string | null
  revoked_at: string | null
}

export interface IssuedNatsUser extends NatsUserView {
  /** The credentials file, shown once. */
  creds: string
}

/**
 * The bank's own reader of a partner's dropboxes lives this long; a new one is made per connection.
 */
const reader_ttl_seconds = 3600

export class NatsIdentity {
  private readonly partnerOfKey = new Map<string, string>()
  /** Set once the bank has a connection to the system account. */
  push: PushAccount | undefined
  /** The servers' JetStream storage, asked through the system account once the bank has it. */
  storage: (() => Promise<JetStreamStorage | undefined>) | undefined

  private constructor(
    private readonly db: Kysely<Database>,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    readonly keys: AuthorityKeys,
    readonly row: store.NatsAuthorityRow,
  ) {}

  /** The authority `bank nats init` stored, or undefined when this bank has none (an open NATS). */
  static async load(db: Kysely<Database>, box: SecretBox,
      clock: Clock): Promise<NatsIdentity | undefined> {
    const row = await store.authorityRow(db)
    if (!row) return undefined
    const open = (sealed: string, publicKey: string) => fromSeed(
      new TextEncoder().encode(box.open(sealed, sealContext(publicKey))))
    const keys: AuthorityKeys = {
      operator: open(row.operator_seed_sealed, row.operator_public_key),
      signing: open(row.signing_seed_sealed, signingPublicKey(row.operator_jwt)),
      system: open(row.system_seed_sealed, row.system_account),
      bank: open(row.bank_seed_sealed, row.bank_account),
      operators: open(row.operators_seed_sealed, row.operators_account),
      cardNetwork: row.card_network_account && row.card_network_seed_sealed
        ? open(row.card_network_seed_sealed, row.card_network_account) : undefined,
    }
    return new NatsIdentity(db, box, clock, keys, row)
  }

  get bankAccount(): string {
    return this.row.bank_account
  }

  get operatorsAccount(): string {
    return this.row.operators_account
  }

  /** The card network's account, once `bank nats init` has made it. */
  get cardNetworkAccount(): string | undefined {
    return this.row.card_network_account ?? undefined
  }

  /**
   * A new partner's account, in the onboarding transaction; pushed by `publishAccount` after
   * commit.
   */
  async createPartnerAccount(trx: Kysely<Database>, partnerId: string): Promise<void> {
    const account = newAccountKey()
    const issuedAt = epochSecond(new Date())
    const { limits } = await store.natsLimitsOf(trx, partnerId)
    await this.assertQuotaFits(trx, partnerId, limits)
    const jwt = await partnerAccountJwt(this.keys, account,
      { partnerId, entitySubjects: entitySubjects(), revoked: {}, suspendedAt: null, limits })
    await store.insertAccount(trx, {
      partner_id: partnerId,
      public_key: account.getPublicKey(),
      seed_sealed: this.box.seal(seedOf(account), sealContext(account.getPublicKey())),
      jwt,
      jwt_issued_at: issuedAt,
      created_at: this.clock.now(),
    })
  }

  /** A new NATS user of the partner's account: its credentials file is in this reply only. */
  async issuePartnerUser(executor: Kysely<Database>, partnerId: string,
      options: { label: string; expiresInSeconds?: number | undefined }): Promise<IssuedNatsUser> {
    const row = await store.accountOf(executor, partnerId)
    if (!row) throw new NotFound('partner')
    const partner = await executor.selectFrom('partners').select('suspended_at').where('id', '=',
      partnerId).executeTakeFirst()
    if (partner?.suspended_at) throw new Conflict(
      'the partner is suspended: unsuspend it before issuing NATS credentials')
    const expiresAt = options.expiresInSeconds === undefined ? undefined
      : epochSecond(new Date()) + options.expiresInSeconds
    // The JWT's name is ASCII of our own making: the label (any text) stays in the database.
    const issued = await issueUser(this.accountKey(row), `partner ${partnerId}`,
      partner_user_permissions, expiresAt)
    return this.record(executor, { role: 'partner', partnerId, account: row.public_key,
      label: options.label, expiresAt, issued })
  }

  /** A new NATS user of the operators' account (reaches `ops.` and `$SRV` only). */
  async issueOperatorUser(executor: Kysely<Database>, label: string): Promise<IssuedNatsUser> {
    const issued = await issueUser(this.keys.operators, 'operator', operator_user_permissions)
    return this.record(executor, { role: 'operator', partnerId: null,
      account: this.operatorsAccount, label, expiresAt: undefined, issued })
  }

  /**
   * A new NATS user of the card network's account: it publishes on `net.card.>` only and takes
   * its replies on its inbox (nats-claims.ts).
   */
  async issueCardNetworkUser(executor: Kysely<Database>, label: string): Promise<IssuedNatsUser> {
    const account = this.keys.cardNetwork
    if (!account) throw new Conflict(
      'this NATS authority has no card network account yet: run `bank nats init` again')
    const issued = await issueUser(account, 'card network', card_network_user_permissions)
    return this.record(executor, { role: 'card_network', partnerId: null,
      account: account.getPublicKey(), label, expiresAt: undefined, issued })
  }

  /** A NATS user of the bank's own account, for an instance of the bank. */
  async issueBankUser(executor: Kysely<Database>, label: string): Promise<IssuedNatsUser> {
    const issued = await issueUser(this.keys.bank, 'bank', {})
    return this.record(executor, { role: 'bank', partnerId: null, account: this.bankAccount, label,
      expiresAt: undefined, issued })
  }

  /**
   * A user of the system account for this process (pushing account JWTs); not recorded, never
   * shown.
   */
  async systemCreds(): Promise<string> {
    return (await issueUser(this.keys.system, `bank ${process.pid}`, {})).creds
  }

  /** A short-lived user inside the partner's account through which the bank reads its dropboxes. */
  async dropboxReaderCreds(partnerId: string): Promise<string | undefined> {
    const row = await store.accountOf(this.db, partnerId)
    if (!row) return undefined
    const expiresAt = epochSecond(new Date()) + reader_ttl_seconds
    return (await issueUser(this.accountKey(row), 'bank dropbox reader', dropbox_reader_permissions,
      expiresAt)).creds
  }

  /** A short-lived user in the partner's account through which the bank asks its card decisions. */
  async cardDeciderCreds(partnerId: string): Promise<string | undefined> {
    const row = await store.accountOf(this.db, partnerId)
    if (!row) return undefined
    const expiresAt = epochSecond(new Date()) + reader_ttl_seconds
    const name = 'bank card decider'
    return (await issueUser(this.accountKey(row), name, card_decider_permissions, expiresAt)).creds
  }

  async listUsers(partnerId: string): Promise<NatsUserView[]> {
    if (!(await store.accountOf(this.db, partnerId))) throw new NotFound('partner')
    return (await store.usersOf(this.db, partnerId)).map(userView)
  }

  /** Revokes one of the partner's users: the servers refuse and disconnect it once pushed. */
  async revokePartnerUser(partnerId: string, userId: string): Promise<NatsUserView> {
    const user = await this.db.transaction().execute(async (trx) => {
      const account = await store.accountOf(trx, partnerId, true)
      if (!account) throw new NotFound('partner')
      // Another partner's user is answered as a missing one.
      const row = await store.userOf(trx, partnerId, userId)
      if (!row) throw new NotFound('NATS user')
      // Revoked before: its account already says so (and was pushed then, or is at the next start).
      if (row.revoked_at) return { row, changed: false }
      const revoked = { ...row, revoked_at: this.clock.now() }
      await store.markUserRevoked(trx, userId, revoked.revoked_at)
      await this.resign(trx, partnerId, account)
      return { row: revoked, changed: true }
    })
    if (user.changed) await this.publishAccount(partnerId)
    return userView(user.row)
  }

  /**
   * Suspends (or lets back) a partner's whole account: suspended, every user issued until
   * now is refused and disconnected; let back, those not revoked one by one work again.
   * Runs in the caller's transaction, which also marks the partner; publish after commit.
   */
  async resignPartner(trx: Kysely<Database>, partnerId: string): Promise<void> {
    const account = await store.accountOf(trx, partnerId, true)
    if (account) await this.resign(trx, partnerId, account)
  }

  /**
   * Refuses (409) JetStream quotas for the partner that the servers' storage cannot hold beside
   * the other partners' (jetstream-quota.ts); in the transaction that gives them.
   */
  async assertQuotaFits(trx: Kysely<Database>, partnerId: string,
      limits: PartnerNatsLimits): Promise<void> {
    await assertQuotaFits(trx, await this.storage?.(), partnerId, limits)
  }

  /** Sends the partner's current account JWT to the servers. */
  async publishAccount(partnerId: string): Promise<void> {
    const row = await store.accountOf(this.db, partnerId)
    if (row) await this.send(row.jwt)
  }

  /**
   * Makes the accounts of partners onboarded before the bank became the NATS authority (a
   * deployment that ran `bank nats init` later); they get credentials from an operator.
   */
  async ensurePartnerAccounts(): Promise<number> {
    const missing = await this.db
      .selectFrom('partners')
      .leftJoin('nats_accounts', 'nats_accounts.partner_id', 'partners.id')
      .select('partners.id')
      .where('nats_accounts.partner_id', 'is', null)
      .execute()
    for (const { id } of missing) {
      await this.db.transaction().execute(async (trx) => {
        // Two instances starting at once: the second finds the account made and leaves it.
        await sql`select pg_advisory_xact_lock(727002)`.execute(trx)
        if (!(await store.accountOf(trx, id))) await this.createPartnerAccount(trx, id)
      })
    }
    // Accounts signed before the contract gained an entity-scoped operation import too little;
    // those signed before the bank set limits (or under other ones) are unlimited.
    for (const row of await store.allAccounts(this.db)) {
      if (await this.signedAsStored(row)) continue
      await this.db.transaction().execute(async (trx) => {
        const account = await store.accountOf(trx, row.partner_id, true)
        if (account) await this.resign(trx, row.partner_id, account)
      })
    }
    return missing.length
  }

  /**
   * Sends every partner's account JWT (a server that lost its resolver store gets them all back).
   */
  async publishAll(): Promise<number> {
    const rows = await store.allAccounts(this.db)
    for (const row of rows) await this.send(row.jwt)
    return rows.length
  }

  /** Whether an account's JWT has the imports of the contract and the partner's limits. */
  private async signedAsStored(row: { partner_id: string; jwt: string }): Promise<boolean> {
    const claims = decode<{ imports?: Array<{ subject: string }>; limits?: object }>(row.jwt).nats
    const imports = claims.imports?.map((i) => i.subject).slice(1) ?? []
    if (JSON.stringify(imports) !== JSON.stringify(entitySubjects())) return false
    const { limits } = await store.natsLimitsOf(this.db, row.partner_id)
    const expected = partnerAccountLimits(limits, (claims.imports ?? []).length)
    const signed = (claims.limits ?? {}) as Record<string, unknown>
    return Object.entries(expected).every(([key, value]) => signed[key] === value)
  }

  /** The partner of an account this instance has already looked up. */
  knownPartnerOfAccount(publicKey: string): string | undefined {
    return this.partnerOfKey.get(publicKey)
  }

  /**
   * The partner a NATS account belongs to (undefined for the bank's own accounts and strangers).
   */
  async partnerOfAccount(publicKey: string): Promise<string | undefined> {
    const known = this.partnerOfKey.get(publicKey)
    if (known) return known
    const partnerId = await store.partnerOfAccountKey(this.db, publicKey)
    // An account belongs to its partner for good: remembered without expiry.
    if (partnerId) this.partnerOfKey.set(publicKey, partnerId)
    return partnerId
  }

  private async send(jwt: string): Promise<void> {
    if (!this.push) throw new Error('the bank has no connection to the NATS system account')
    await this.push(jwt)
  }

  /**
   * A new JWT of the account from the rows, issued strictly after the last (the servers keep the
   * newest).
   */
  private async resign(trx: Kysely<Database>, partnerId: string,
      account: store.NatsAccountRow): Promise<void> {
    const last = Number(account.jwt_issued_at)
    const wait = (last + 1) * 1000 - Date.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    const partner = await store.partnerForUpdate(trx, partnerId)
    const revoked: Record<string, number> = {}
    for (const user of await store.revokedUsersOf(trx, partnerId)) revoked[user.public_key] =
      Math.max(epochSecond(user.revoked_at), epochSecond(new Date()))
    const issuedAt = epochSecond(new Date())
    const suspendedAt = partner?.suspended_at ? issuedAt : null
    const { limits } = await store.natsLimitsOf(trx, partnerId)
    const jwt = await partnerAccountJwt(this.keys, this.accountKey(account),
      { partnerId, entitySubjects: entitySubjects(), revoked, suspendedAt, limits })
    await store.updateAccountJwt(trx, partnerId, jwt, issuedAt)
  }

  private accountKey(row: store.NatsAccountRow): KeyPair {
    return fromSeed(
      new TextEncoder().encode(this.box.open(row.seed_sealed, sealContext(row.public_key))))
  }

  private async record(
    executor: Kysely<Database>,
    input: { role: store.NatsUserRow['role']; partnerId: string | null; account: string;
      label: string; expiresAt: number | undefined; issued: { publicKey: string; creds: string } },
  ): Promise<IssuedNatsUser> {
    const row = {
      id: randomUUID(),
      role: input.role,
      partner_id: input.partnerId,
      account: input.account,
      public_key: input.issued.publicKey,
      label: input.label,
      created_at: this.clock.now(),
      expires_at: input.expiresAt === undefined ? null : new Date(input.expiresAt * 1000),
      revoked_at: null,
    }
    await store.insertUser(executor, row)
    return { ...userView(row), creds: input.issued.creds }
  }
}

/**
 * The subjects of the operations that name an entity rather than the partner, the entity a `*`
 * (from the contract).
 */
function entitySubjects(): string[] {
  entitySubjectsOnce ??= [...new Set(allOperations().filter((op) => scopeOf(op) === 'entity').map((op) => op.subject.replace(/<[a-z_]+>/, '*')))]
  return entitySubjectsOnce
}
let entitySubjectsOnce: string[] | undefined

/**
 * The authenticated context a seed is sealed with: its public key, so a sealed seed opens nowhere
 * else.
 */
export const sealContext = (publicKey: string) => `nats-seed:${publicKey}`

export const seedOf = (key: KeyPair): string => new TextDecoder().decode(key.getSeed())

/** The operator's signing key, as its JWT lists it. */
function signingPublicKey(operatorJwt: string): string {
  const claims = decode<{ signing_keys?: Array<string | { key: string }> }>(operatorJwt)
  const first = claims.nats.signing_keys?.[0]
  if (!first) throw new Error('the operator JWT names no signing key')
  return typeof first === 'string' ? first : first.key
}

function userView(row: { id: string; public_key: string; label: string; created_at: Date;
    expires_at: Date | null; revoked_at: Date | null }): NatsUserView {
  return {
    id: row.id,
    public_key: row.public_key,
    label: row.label,
    created_at: formatTimestamp(row.created_at),
    expires_at: row.expires_at ? formatTimestamp(row.expires_at) : null,
    revoked_at: row.revoked_at ? formatTimestamp(row.revoked_at) : null,
  }
}
