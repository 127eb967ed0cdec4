import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Caller } from '../auth/credential-store.ts'
import type { Clock } from '../clock.ts'
import { isUniqueViolation } from '../db/errors.ts'
import type { Database } from '../schema.ts'
import { assert, Conflict, InvalidState, NotFound } from '../errors.ts'
import { appendEvent } from '../events/index.ts'
import type { JobRunner } from '../jobs/job-runner.ts'
import { cents } from '../ledger/cents.ts'
import { debit_limits, type MandateCreateRequest, type MandateView } from './debit-contract.ts'
import { cancelScheduledOrder } from './debit-order-events.ts'
import {
  insertMandate,
  listMandates,
  mandateByIdForUpdate,
  mandateForUpdate,
  mandateOf,
  scheduledOrdersOfMandateForUpdate,
  updateMandate,
  type MandateRow,
} from './debit-store.ts'
import type { MandateStatus } from './debit-tables.ts'
import { mandateView } from './debit-view.ts'
import type { MandateAuthenticator, MandateDecision } from './mandate-authenticator.ts'
import { mandate_authentication_attempts_max, mandate_authentication_job_limits } from './debit-limits.ts'

// Mandates (docs/guides/debit-orders.md): a partner registers a debtor's mandate for one of its
// entities; it starts `pending_authentication`, and a durable job asks the debtor's bank
// (the MandateAuthenticator) whether the debtor accepts it: `active` or `rejected`, with
// its `mandate.active` / `mandate.rejected` event in the same transaction as the change.
// A bank that has not decided yet is asked again when it says to. Cancel ends a mandate
// and cancels every scheduled debit order on it.

export const mandate_authentication_job_kind = 'debit.mandate_authentication'
export class MandateService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly jobs: JobRunner,
    private readonly authenticator: MandateAuthenticator,
  ) {
    jobs.register({
      kind: mandate_authentication_job_kind,
      ...mandate_authentication_job_limits,
      run: async (job) => this.authenticate(String(job.payload.mandate_id),
        Number(job.payload.attempt)),
    })
  }

  async create(caller: Caller, entityId: string,
      request: MandateCreateRequest): Promise<MandateView> {
    const partnerId = caller.partnerId as string
    const now = this.clock.now()
    // Refused early and without locks; the unique index decides between concurrent twins.
    if (await mandateOf(this.db, entityId, request.mandate_reference)) throw duplicateMandate()
    const row: MandateRow = {
      id: randomUUID(), created_seq: '0', partner_id: partnerId, entity_id: entityId,
      mandate_reference: request.mandate_reference, status: 'pending_authentication',
      account_holder_name: request.account_holder_name, account_number: request.account_number,
      account_type: request.account_type, branch_code: request.branch_code,
        max_amount: BigInt(request.max_amount),
      frequency: request.frequency, first_collection_date: request.first_collection_date ?? null,
      debtor_email: request.debtor_email ?? null, used_by_order: null, rejection_reason: null,
      authentication_due_at: now, added_by: caller.credentialId, created_at: now,
      authenticated_at: null, decided_at: null, cancelled_at: null,
    }
    try {
      await this.db.transaction().execute(async (trx) => {
        const { created_seq: _generated, ...insertable } = row
        await insertMandate(trx, insertable)
        // The debtor's bank is asked after this commits, by a job that survives a restart.
        await this.jobs.enqueue(trx, authenticationJob(row.id, 1, now))
      })
    } catch (error) {
      if (isUniqueViolation(error)) throw duplicateMandate()
      throw error
    }
    this.jobs.kick()
    return mandateView(row)
  }

  async get(entityId: string, reference: string): Promise<MandateView> {
    const row = await mandateOf(this.db, entityId, reference)
    if (!row) throw new NotFound('mandate')
    return mandateView(row)
  }

  async list(entityId: string, request: { status?: MandateStatus | undefined; limit?: number
      | undefined; offset?: number | undefined }) {
    const limit = request.limit ?? debit_limits.list_limit_default
    const offset = request.offset ?? 0
    const { rows, total } = await listMandates(this.db, entityId, { status: request.status, limit,
      offset })
    return { mandates: rows.map(mandateView), total, limit, offset }
  }

  async cancel(entityId: string, request: { mandate_reference: string; reason?: string
      | undefined }): Promise<MandateView> {
    return this.db.transaction().execute(async (trx) => {
      const mandate = await mandateForUpdate(trx, entityId, request.mandate_reference)
      if (!mandate) throw new NotFound('mandate')
      if (mandate.status !== 'pending_authentication' && mandate.status !== 'active') {
        throw InvalidState.field('mandate_reference', `the mandate is ${mandate.status}; ` +
          `only a pending_authentication or active mandate can be cancelled`, 400)
      }
      return mandateView(await this.cancelLocked(trx, mandate, request.reason))
    })
  }

  /**
   * Cancels the entity's live mandates (its last account that takes payments closed: nothing
   * can be collected for it any more), with the orders on them; how many.
   */
  async cancelAllOf(trx: Kysely<Database>, entityId: string, reason: string): Promise<number> {
    const mandates = await trx.selectFrom('debit_mandates').selectAll()
      .where('entity_id', '=', entityId)
      .where('status', 'in', ['pending_authentication', 'active']).orderBy('id').forUpdate()
      .execute()
    for (const mandate of mandates) await this.cancelLocked(trx, mandate, reason)
    return mandates.length
  }

  private async cancelLocked(trx: Kysely<Database>, mandate: MandateRow,
      reason: string | undefined): Promise<MandateRow> {
    const now = this.clock.now()
    const cancelled: MandateRow = { ...mandate, status: 'cancelled', cancelled_at: now,
      authentication_due_at: null }
    await updateMandate(trx, mandate.id, { status: 'cancelled', cancelled_at: now,
      authentication_due_at: null })
    // The debtor's authority is gone: no order may collect on it any more, whatever its date.
    const orders = await scheduledOrdersOfMandateForUpdate(trx, mandate.id)
    const why = `cancelled: its mandate ${mandate.mandate_reference} was ` +
      `cancelled${reason ? ` (${reason})` : ''}`
    for (const order of orders) await cancelScheduledOrder(trx, order, now, why, reason
      ?? 'mandate cancelled')
    return cancelled
  }

  /** The authentication job: asks the debtor's bank once and records its answer. */
  async authenticate(mandateId: string, attempt: number): Promise<Record<string, unknown>> {
    const mandate = await this.db.selectFrom('debit_mandates').selectAll().where('id', '=',
      mandateId).executeTakeFirst()
    assert(mandate, `authentication job for missing mandate ${mandateId}`)
    if (mandate.status !== 'pending_authentication') return { skipped: mandate.status }
    const now = this.clock.now()
    let decision: MandateDecision = await this.authenticator.authenticateMandate({
      mandate_id: mandate.id, partner_id: mandate.partner_id, entity_id: mandate.entity_id,
      mandate_reference: mandate.mandate_reference,
        account_holder_name: mandate.account_holder_name,
      account_number: mandate.account_number, account_type: mandate.account_type,
        branch_code: mandate.branch_code,
      max_amount: cents(mandate.max_amount), frequency: mandate.frequency,
        first_collection_date: mandate.first_collection_date,
      debtor_email: mandate.debtor_email, created_at: mandate.created_at, attempt,
    }, now)
    if (decision.outcome === 'pending' && attempt >= mandate_authentication_attempts_max) {
      decision = { outcome: 'rejected', reason: 'the debtor did not confirm the mandate in time' }
    }
    return this.record(mandateId, attempt, decision)
  }

  private async record(mandateId: string, attempt: number,
      decision: MandateDecision): Promise<Record<string, unknown>> {
    return this.db.transaction().execute(async (trx) => {
      const mandate = await mandateByIdForUpdate(trx, mandateId)
      assert(mandate, `mandate ${mandateId} vanished`)
      // Cancelled (or decided by an earlier run) while the bank was being asked.
      if (mandate.status !== 'pending_authentication') return { skipped: mandate.status }
      const now = this.clock.now()
      if (decision.outcome === 'pending') {
        const due = new Date(Math.max(decision.ask_again_at.getTime(), now.getTime()))
        await updateMandate(trx, mandate.id, { authentication_due_at: due })
        await this.jobs.enqueue(trx, authenticationJob(mandate.id, attempt + 1, due))
        return { outcome: 'pending', ask_again_at: due.toISOString() }
      }
      const decided: MandateRow =
        decision.outcome === 'active'
          ? { ...mandate, status: 'active', authenticated_at: now, decided_at: now,
            authentication_due_at: null }
          : { ...mandate, status: 'rejected', rejection_reason: decision.reason, decided_at: now,
            authentication_due_at: null }
      await updateMandate(trx, mandate.id, {
        status: decided.status, authenticated_at: decided.authenticated_at, decided_at: now,
        rejection_reason: decided.rejection_reason, authentication_due_at: null,
      })
      await appendEvent(trx, {
        type: decision.outcome === 'active' ? 'mandate.active' : 'mandate.rejected',
        partner_id: mandate.partner_id,
        resource_id: mandate.id,
        data: mandateEventData(decided),
        occurred_at: now,
      })
      return { outcome: decided.status }
    })
  }
}

/** A mandate event's data: the mandate as get returns it, and the entity it belongs to. */
export function mandateEventData(row: MandateRow): Record<string, unknown> {
  return { ...mandateView(row), entity_id: row.entity_id }
}

function authenticationJob(mandateId: string, attempt: number, due: Date) {
  return { kind: mandate_authentication_job_kind, key: `${mandateId}:${attempt}`, due_at: due,
    payload: { mandate_id: mandateId, attempt } }
}

function duplicateMandate(): Conflict {
  return new Conflict(
      'duplicate mandate_reference: this entity has a mandate with this reference', [
    { field: 'mandate_reference', message: 'already used by a mandate of this entity' },
  ])
}
