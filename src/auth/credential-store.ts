import { hash, randomBytes, randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import { noteCommitTargets } from '../db/commit-hooks.ts'
import { Conflict, Invalid, NotFound, Unauthorized } from '../errors.ts'
import type { Database } from '../schema.ts'
import { permissions as allPermissions, type Permission } from '../contract/operation.ts'
import { formatTimestamp } from '../contract/format.ts'

// Credentials: a random bearer token shown once at creation. Only its SHA-256 is stored;
// the token carries 256 random bits, so a fast unsalted hash is enough to make the stored
// value useless to a thief, and it lets us find the row by hash in one indexed lookup.
//
// Three kinds of credential, each with a token prefix of its own: a partner's (`pbk_`, with
// permissions, on `svc.` subjects), an operator's (`opk_`, a person of the bank's, on `ops.`
// subjects, every action audited) and a card network's (`cnk_`, on `net.card.` subjects
// only; the network is a system, not a person, so its calls are not operator actions).

/** Who a credential stands for. */
export type CredentialRole = 'partner' | 'operator' | 'card_network'

const token_prefixes: Readonly<Record<CredentialRole, string>> =
  { partner: 'pbk', operator: 'opk', card_network: 'cnk' }

export interface Caller {
  role: CredentialRole
  credentialId: string
  /** The credential's label (an operator's or a card network's name), as the trail records it. */
  label: string
  partnerId: string | null
  permissions: ReadonlySet<Permission>
}

// The shapes the operator replies carry, from the contract's schemas.
import type { CredentialView, IssuedCredential } from './credential-contract.ts'
export type { CredentialView, IssuedCredential }

const tokenPattern = /^(pbk|opk|cnk)_[A-Za-z0-9_-]{43}$/

export function hashToken(token: string): string {
  return hash('sha256', token, 'hex')
}

interface CachedCaller {
  caller: Caller
  expiresAt: number | null
  /** Process time (ms) until which the entry may be used without asking the database. */
  freshUntil: number
}

const cache_entries_max = 10_000

export class CredentialStore {
  // Verified credentials are remembered for a few seconds so that a busy partner does not
  // cost a database read per request. A revocation clears the entry at once on this
  // instance and, through `onRevoked` (a NATS broadcast), on every other; the TTL bounds
  // how long a lost broadcast could let a revoked credential in. Expiry is checked on
  // every use against the service clock.
  private readonly cache = new Map<string, CachedCaller>()
  onRevoked: (credentialId: string) => void = () => {}

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly cacheTtlMs = 0,
  ) {}

  /**
   * Drops every credential of a partner from the cache here and on every instance (a suspension).
   */
  async forgetPartner(partnerId: string): Promise<void> {
    const rows = await this.db.selectFrom('credentials').select('id').where('partner_id', '=',
      partnerId).execute()
    for (const row of rows) {
      this.forget(row.id)
      this.onRevoked(row.id)
    }
  }

  /** Drops a credential from this instance's cache (after a revocation anywhere). */
  forget(credentialId: string): void {
    for (const [hash, entry] of this.cache) if (
      entry.caller.credentialId === credentialId) this.cache.delete(hash)
  }

  /**
   * A new credential: a partner's when `partnerId` is given, else an operator's, or a card
   * network's when `role` says so (it belongs to no partner and has no permissions).
   */
  async issue(
    executor: Kysely<Database>,
    input: { partnerId: string | null; permissions: readonly Permission[]; expiresAt?: Date | null;
      label?: string; role?: 'card_network' },
  ): Promise<IssuedCredential> {
    const role: CredentialRole = input.role ?? (input.partnerId === null ? 'operator' : 'partner')
    if (role === 'card_network' && input.partnerId !== null) throw new Error(
      'a card network credential belongs to no partner')
    const token = `${token_prefixes[role]}_${randomBytes(32).toString('base64url')}`
    const id = randomUUID()
    noteCommitTargets(id)
    await executor
      .insertInto('credentials')
      .values({
        id,
        partner_id: input.partnerId,
        role,
        permissions: role === 'partner' ? normalisePermissions(input.permissions).join(',') : '',
        token_hash: hashToken(token),
        label: input.label ?? '',
        created_at: this.clock.now(),
        expires_at: input.expiresAt ?? null,
      })
      .execute()
    return { id, token }
  }

  /**
   * A card network's credential (`ops.credential.create_card_network`), in a transaction of
   * its own so that the operator's audit row commits with it (audit/operator-audit.ts).
   */
  async issueCardNetwork(input: { label: string;
      expires_in_seconds?: number | undefined }): Promise<IssuedCredential> {
    const seconds = input.expires_in_seconds
    const expiresAt = seconds ? new Date(this.clock.now().getTime() + seconds * 1000) : null
    return this.db.transaction().execute((trx) => this.issue(trx,
      { partnerId: null, permissions: [], expiresAt, label: input.label, role: 'card_network' }))
  }

  /**
   * Whether an operator credential was ever issued, revoked or not: the bank's first start
   * issues one. Takes the executor so the caller can ask under its own lock.
   */
  async hasOperator(executor: Kysely<Database> = this.db): Promise<boolean> {
    const row = await executor.selectFrom('credentials').select('id').where('role', '=', 'operator')
      .limit(1).executeTakeFirst()
    return row !== undefined
  }

  /** The caller a token stands for; any fault in the token is the same 401. */
  async verify(token: string | undefined): Promise<Caller> {
    if (!token || !tokenPattern.test(token)) throw new Unauthorized()
    const hash = hashToken(token)
    const cached = this.cache.get(hash)
    if (cached && cached.freshUntil > performance.now()) {
      if (cached.expiresAt !== null && cached.expiresAt <= this.clock.now()
        .getTime()) throw new Unauthorized()
      return cached.caller
    }
    const caller = await this.lookUp(hash)
    if (this.cacheTtlMs > 0) {
      if (this.cache.size >= cache_entries_max) this.cache.delete(
        this.cache.keys().next().value as string)
      this.cache.set(hash, { ...caller, freshUntil: performance.now() + this.cacheTtlMs })
    }
    if (caller.expiresAt !== null && caller.expiresAt <= this.clock.now()
      .getTime()) throw new Unauthorized()
    return caller.caller
  }

  private async lookUp(hash: string): Promise<{ caller: Caller; expiresAt: number | null }> {
    const row = await this.db
      .selectFrom('credentials')
      .leftJoin('partners', 'partners.id', 'credentials.partner_id')
      .select(['credentials.id', 'role', 'label', 'partner_id', 'permissions', 'expires_at',
        'revoked_at', 'partners.suspended_at'])
      .where('token_hash', '=', hash)
      .executeTakeFirst()
    if (!row || row.revoked_at) throw new Unauthorized()
    // A suspended partner's tokens are refused like revoked ones, until it is let back.
    if (row.suspended_at) throw new Unauthorized('the partner is suspended')
    return {
      caller: {
        role: row.role,
        credentialId: row.id,
        label: row.label,
        partnerId: row.partner_id,
        permissions: new Set(row.permissions.split(',').filter(Boolean) as Permission[]),
      },
      expiresAt: row.expires_at ? row.expires_at.getTime() : null,
    }
  }

  async revoke(id: string): Promise<CredentialView> {
    await this.refuseLastOperator(id)
    // In a transaction, so that an operator's audit row commits with the revocation.
    const row = await this.db.transaction().execute(async (trx) => {
      const revoked = await trx
        .updateTable('credentials')
        .set({ revoked_at: this.clock.now() })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .returningAll()
        .executeTakeFirst()
      noteCommitTargets(revoked?.partner_id)
      return revoked
    })
    this.forget(id)
    this.onRevoked(id)
    if (row) return view(row)
    const existing = await this.db.selectFrom('credentials').selectAll().where('id', '=', id)
      .executeTakeFirst()
    if (!existing) throw new NotFound('credential')
    return view(existing)
  }

  /** A partner's credentials, or the operators' when `partnerId` is null; oldest first. */
  async list(partnerId: string | null): Promise<CredentialView[]> {
    let query = this.db.selectFrom('credentials').selectAll().orderBy('created_seq')
    query = partnerId === null ? query.where('role', '=', 'operator')
      : query.where('partner_id', '=', partnerId)
    return (await query.execute()).map(view)
  }

  /** Every card network's credentials (`ops.credential.list_card_networks`), oldest first. */
  async listCardNetworks(): Promise<CredentialView[]> {
    const rows = await this.db.selectFrom('credentials').selectAll().where('role', '=',
      'card_network').orderBy('created_seq').execute()
    return rows.map(view)
  }

  /** Revoking the last live operator credential would lock the bank's operators out. */
  private async refuseLastOperator(id: string): Promise<void> {
    const live = await this.db
      .selectFrom('credentials')
      .select('id')
      .where('role', '=', 'operator')
      .where('revoked_at', 'is', null)
      .limit(2)
      .execute()
    if (live.length === 1 && live[0]!.id === id) {
      throw new Conflict(
        'this is the last live operator credential; revoking it would lock every operator out')
    }
  }
}

function normalisePermissions(input: readonly Permission[]): Permission[] {
  if (input.length === 0) throw Invalid.field('permissions',
    'name at least one of read, write, payments, card_details')
  return allPermissions.filter((p) => input.includes(p))
}

function view(row: {
  id: string
  partner_id: string | null
  permissions: string
  label: string
  created_at: Date
  expires_at: Date | null
  revoked_at: Date | null
}): CredentialView {
  return {
    id: row.id,
    partner_id: row.partner_id,
    permissions: row.permissions.split(',').filter(Boolean) as Permission[],
    label: row.label,
    created_at: formatTimestamp(row.created_at),
    expires_at: row.expires_at ? formatTimestamp(row.expires_at) : null,
    revoked_at: row.revoked_at ? formatTimestamp(row.revoked_at) : null,
  }
}
