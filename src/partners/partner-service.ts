import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { accountItem, type AccountService } from '../accounts/account-service.ts'
import type { CredentialStore, IssuedCredential } from '../auth/credential-store.ts'
import type { Clock } from '../clock.ts'
import { formatTimestamp } from '../contract/format.ts'
import type { Permission } from '../contract/operation.ts'
import type { Database } from '../schema.ts'
import { isUniqueViolation } from '../db/errors.ts'
import type { EntityService } from '../entities/entity-service.ts'
import { Conflict, NotFound } from '../errors.ts'
import type { WebhookSecrets } from '../webhooks/webhook-secrets.ts'
import { allPartners, insertPartner, partnerExists } from './partner-store.ts'
import type { IssuedNatsUser, NatsIdentity } from '../nats-identity/nats-identity.ts'
import type { Logger } from '../logger.ts'
import { noteCommitTargets } from '../db/commit-hooks.ts'

// The bank's own use cases: onboarding partners, credentials, KYB/KYC decisions.
export class PartnerService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly credentials: CredentialStore,
    private readonly entities: EntityService,
    private readonly accounts: AccountService,
    private readonly webhookSecrets: WebhookSecrets,
    /** The bank as the NATS authority of its partners; undefined on an open NATS server. */
    private readonly nats: NatsIdentity | undefined = undefined,
    private readonly log?: Logger,
  ) {}

  async createPartner(input: {
    name: string
    email: string
    registration_number: string
    trading_name: string
    country: string
  }): Promise<{ partner_id: string; root_entity_id: string; credential: IssuedCredential;
      webhook_secret: string; nats_creds: string | null }> {
    const partnerId = randomUUID()
    const rootEntityId = randomUUID()
    noteCommitTargets(partnerId, rootEntityId)
    const now = this.clock.now()
    try {
      const created = await this.db.transaction().execute(async (trx) => {
        await insertPartner(trx, { id: partnerId, name: input.name, email: input.email,
          root_entity_id: rootEntityId, created_at: now })
        await this.entities.insert(trx, partnerId, rootEntityId,
          { entity_type: 'business', ...input }, now, true)
        const credential = await this.credentials.issue(trx, {
          partnerId,
          permissions: ['read', 'write', 'payments'],
          label: 'onboarding',
        })
        // The webhook signing secret is made with the partner and shown in this reply only.
        const webhookSecret = await this.webhookSecrets.create(trx, partnerId)
        // Its own NATS account and a first user of it, in the same transaction (nats-identity).
        let natsCreds: string | null = null
        if (this.nats) {
          await this.nats.createPartnerAccount(trx, partnerId)
          natsCreds =
            (await this.nats.issuePartnerUser(trx, partnerId, { label: 'onboarding' })).creds
        }
        return { partner_id: partnerId, root_entity_id: rootEntityId, credential,
          webhook_secret: webhookSecret, nats_creds: natsCreds }
      })
      await this.publishAccount(created.partner_id)
      return created
    } catch (error) {
      if (isUniqueViolation(error)) throw new Conflict(
        'a partner with this registration number already exists')
      throw error
    }
  }

  /** Another NATS credentials file for the partner (shown once). */
  async issueNatsCreds(input: { partner_id: string; expires_in_seconds?: number | undefined;
      label?: string | undefined }): Promise<IssuedNatsUser> {
    // A partner that does not exist has no account: issuePartnerUser answers 404.
    // In a transaction of its own, so that its audit row commits with it (audit/operator-audit.ts).
    const nats = this.requireNats()
    return this.db.transaction().execute((trx) =>
      nats.issuePartnerUser(trx, input.partner_id,
        { label: input.label ?? '', expiresInSeconds: input.expires_in_seconds }),
    )
  }

  async listNatsUsers(partnerId: string) {
    const nats = this.requireNats()
    const partner = await this.db.selectFrom('partners').select('suspended_at').where('id', '=',
      partnerId).executeTakeFirst()
    if (!partner) throw new NotFound('partner')
    return { partner_id: partnerId, suspended: partner.suspended_at !== null,
      users: await nats.listUsers(partnerId) }
  }

  async revokeNatsUser(partnerId: string, userId: string) {
    return this.requireNats().revokePartnerUser(partnerId, userId)
  }

  /**
   * Suspends a partner or lets it back: its tokens are refused (on every instance at once,
   * through the credential broadcast) and, when the bank is the NATS authority, its account
   * cut off on every server. Suspending twice keeps the first time.
   */
  async setSuspended(partnerId: string, suspended: boolean) {
    const outcome = await this.db.transaction().execute(async (trx) => {
      const partner = await trx.selectFrom('partners').select(['id', 'suspended_at']).where('id',
        '=', partnerId).forUpdate().executeTakeFirst()
      if (!partner) throw new NotFound('partner')
      // Asked for what already holds: nothing changes, nothing is re-signed or pushed.
      if ((partner.suspended_at !== null) === suspended) return { at: partner.suspended_at,
        changed: false }
      const next = suspended ? this.clock.now() : null
      await trx.updateTable('partners').set({ suspended_at: next }).where('id', '=', partnerId)
        .execute()
      await this.nats?.resignPartner(trx, partnerId)
      return { at: next, changed: true }
    })
    const at = outcome.at
    if (outcome.changed) {
      await this.credentials.forgetPartner(partnerId)
      if (this.nats) await this.nats.publishAccount(partnerId)
    }
    return { partner_id: partnerId, suspended: at !== null, suspended_at: at ? formatTimestamp(at)
      : null }
  }

  /**
   * Tells the NATS servers of the partner's account. A server that cannot be told now gets
   * it when the bank reconnects or restarts (every account is pushed then): the onboarding
   * is not undone for it, and its reply still carries the credentials file.
   */
  private async publishAccount(partnerId: string): Promise<void> {
    if (!this.nats) return
    try {
      await this.nats.publishAccount(partnerId)
    } catch (error) {
      this.log?.warn({ err: error, partner_id: partnerId },
        'the new partner\'s NATS account could not be pushed to the servers yet')
    }
  }

  private requireNats(): NatsIdentity {
    if (!this.nats) throw new Conflict(
      'this bank runs on an open NATS server (no `bank nats init`): it issues no NATS credentials')
    return this.nats
  }

  /** Whether a partner of that id exists. */
  exists(partnerId: string): Promise<boolean> {
    return partnerExists(this.db, partnerId)
  }

  async listPartners() {
    const rows = await allPartners(this.db)
    return rows.map((row) => ({
      partner_id: row.id,
      name: row.name,
      email: row.email,
      root_entity_id: row.root_entity_id,
      created_at: formatTimestamp(row.created_at),
    }))
  }

  async issueCredential(input: { partner_id: string; permissions: Permission[];
      expires_in_seconds?: number | undefined; label?: string | undefined }) {
    await this.requirePartner(input.partner_id)
    const expiresAt = input.expires_in_seconds
      ? new Date(this.clock.now().getTime() + input.expires_in_seconds * 1000) : null
    // In a transaction of its own, so that its audit row commits with it (audit/operator-audit.ts).
    return this.db.transaction().execute((trx) =>
      this.credentials.issue(trx, {
        partnerId: input.partner_id,
        permissions: input.permissions,
        expiresAt,
        label: input.label ?? '',
      }),
    )
  }

  async listCredentials(partnerId: string) {
    await this.requirePartner(partnerId)
    return this.credentials.list(partnerId)
  }

  async review(entityId: string, decision: 'approve' | 'reject', reason: string | undefined) {
    return this.db.transaction().execute((trx) => this.reviewIn(trx, entityId, decision, reason))
  }

  /** An entity's KYB/KYC decision in the caller's transaction (see review). */
  async reviewIn(trx: Kysely<Database>, entityId: string, decision: 'approve' | 'reject',
      reason: string | undefined) {
    const { before, after } = await this.entities.review(
      trx,
      entityId,
      decision === 'approve' ? { approve: true } : { approve: false, reason: reason ?? '' },
    )
    // The first approval opens the entity's first account; approving
    // again, after a later rejection was refused, opens nothing more.
    const existing = await this.accounts.list(entityId, trx)
    const opened =
      decision === 'approve' && before.review_status !== 'approved' && existing.length === 0
        ? await this.accounts.open(trx, after, after.is_root ? 'pool' : 'standard')
        : null
    return {
      entity_id: entityId,
      review_status: after.review_status,
      approved: after.review_status === 'approved',
      account: opened
        ? { ...accountItem(opened), kind: opened.kind }
        : null,
    }
  }

  private async requirePartner(partnerId: string): Promise<void> {
    if (!(await partnerExists(this.db, partnerId))) throw new NotFound('partner')
  }
}
