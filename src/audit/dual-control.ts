import { randomUUID } from 'node:crypto'
import type { Kysely, Selectable } from 'kysely'
import type { Caller } from '../auth/credential-store.ts'
import type { Clock } from '../clock.ts'
import { decodeSeqCursor, invalid_cursor_message, seqPage } from '../contract/cursor.ts'
import { formatTimestamp } from '../contract/format.ts'
import type { Database } from '../schema.ts'
import { Forbidden, Invalid, InvalidState, NotFound } from '../errors.ts'
import { centsText } from '../ledger/cents.ts'
import type { LedgerService, Moved } from '../ledger/ledger-service.ts'
import type { MoneyMoved } from '../money/money-contract.ts'
import { approval_ttl_hours, type ApprovalView } from './audit-contract.ts'
import type { ApprovalsTable } from './audit-tables.ts'
import { noteCommitTargets } from '../db/commit-hooks.ts'

// Dual control (maker-checker): a deposit or reversal above the threshold is recorded as a
// request (`pending_approval`) and moves nothing until a second operator approves it; the
// money then moves in the same transaction as the approval. The requester cannot approve
// their own request; any operator may reject one. A request not decided within 24 hours
// is expired: it can be neither approved nor rejected, and nothing moves. The money is
// attributed to the requester (`added_by`); the approval names who allowed it. The release
// of a legal hold above the threshold is decided the same way; what it does on approval is
// its capability's (register), as is the filing of a suspicious-transaction report
// (monitoring/monitoring-reports.ts), which always needs a second operator.

type ApprovalRow = Selectable<ApprovalsTable>

/** The operator's reply for money the ledger moved now (ask() answers the waiting kind). */
function movedView(moved: Moved): MoneyMoved {
  return {
    status: 'Successful',
    approval_id: null,
    tx_id: moved.txId,
    account_id: moved.accountId,
    amount: centsText(moved.amount),
    balance: centsText(moved.balance),
    available_balance: centsText(moved.available),
  }
}

const cursor_tag = 'q'
const ttl_ms = approval_ttl_hours * 3600_000

/** A kind of request another capability has dual control decide (a legal hold's release). */
export interface Approvable {
  /**
   * Does what was asked, in the approval's transaction, as the operator who asked for it;
   * answers the transaction it wrote, if any.
   */
  approved(trx: Kysely<Database>, asked: Record<string, unknown>, requestedBy: string,
    approvedBy: string): Promise<string | void>
}

export class DualControl {
  private readonly approvables = new Map<ApprovalRow['kind'], Approvable>()

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly ledger: LedgerService,
    /** Amounts above this many cents need a second operator; undefined: none do. */
    private readonly thresholdCents: bigint | undefined,
  ) {}

  /** Whether an amount needs a second operator (above BANK_DUAL_CONTROL_CENTS). */
  needsApproval(amount: bigint): boolean {
    return this.thresholdCents !== undefined && amount > this.thresholdCents
  }

  async deposit(caller: Caller,
      request: { account_id: string; amount: bigint; ref: string }): Promise<MoneyMoved> {
    if (this.needsApproval(request.amount)) {
      return this.ask(caller, 'deposit', request.account_id, request.amount, { ref: request.ref })
    }
    return movedView(await this.ledger.deposit(request.account_id, request.amount, request.ref,
      caller.credentialId))
  }

  async reverse(caller: Caller, request: { tx_id: string; reason: string }): Promise<MoneyMoved> {
    if (this.thresholdCents !== undefined) {
      const deposit = await this.ledger.reversible(this.db, request.tx_id, false)
      if (this.needsApproval(deposit.amount)) {
        return this.ask(caller, 'reversal', deposit.account_id, deposit.amount,
          { tx_id: request.tx_id, reason: request.reason })
      }
    }
    return movedView(await this.ledger.reverse(request.tx_id, request.reason, caller.credentialId))
  }

  private async ask(caller: Caller, kind: ApprovalRow['kind'], accountId: string, amount: bigint,
      asked: Record<string, unknown>): Promise<MoneyMoved> {
    return this.db.transaction().execute(async (trx) => {
      const { balance, available } = await this.ledger.balances(trx, accountId)
      const id = await this.request(trx, caller, kind, accountId, amount, asked)
      return {
        status: 'pending_approval' as const,
        approval_id: id,
        tx_id: null,
        account_id: accountId,
        amount: centsText(amount),
        balance: centsText(balance),
        available_balance: centsText(available),
      }
    })
  }

  /**
   * Records a request for a second operator (in the caller's transaction); its id. A kind
   * other than a deposit or reversal is done on approval by what registered it.
   */
  async request(trx: Kysely<Database>, caller: Caller, kind: ApprovalRow['kind'],
      accountId: string, amount: bigint, asked: Record<string, unknown>): Promise<string> {
    const id = randomUUID()
    noteCommitTargets(id, accountId)
    const now = this.clock.now()
    await trx
      .insertInto('approvals')
      .values({
        id,
        kind,
        account_id: accountId,
        amount,
        request: JSON.stringify(asked),
        state: 'pending_approval',
        requested_by: caller.credentialId,
        requested_by_name: caller.label,
        requested_at: now,
        expires_at: new Date(now.getTime() + ttl_ms),
        decided_by: null,
        decided_by_name: null,
        decided_at: null,
        reason: null,
        tx_id: null,
      })
      .execute()
    return id
  }

  /** What is done on approval of a kind another capability asks for (a legal hold's release). */
  register(kind: Exclude<ApprovalRow['kind'], 'deposit' | 'reversal'>, approvable: Approvable):
      void {
    this.approvables.set(kind, approvable)
  }

  async list(
      request: {
      state: ApprovalRow['state']; limit: number; cursor?: string | undefined }): Promise<{
      approvals: ApprovalView[]; next_cursor?: string }> {
    const now = this.clock.now()
    let query = this.db.selectFrom('approvals').selectAll().orderBy('created_seq', 'desc').limit(
      request.limit + 1)
    // A waiting request past its 24 hours is expired, whether or not anyone has touched it since.
    if (request.state === 'pending_approval') query = query.where('state', '=', 'pending_approval')
      .where('expires_at', '>', now)
    else if (request.state === 'expired') query =
      query.where((w) => w.or([w('state', '=', 'expired'),
      w.and([w('state', '=', 'pending_approval'), w('expires_at', '<=', now)])]))
    else query = query.where('state', '=', request.state)
    if (request.cursor) {
      const seq = decodeSeqCursor(cursor_tag, request.cursor)
      if (seq === undefined) throw Invalid.field('cursor', invalid_cursor_message)
      query = query.where('created_seq', '<', String(seq))
    }
    const { page, next_cursor } = seqPage(await query.execute(), request.limit, cursor_tag,
      (row) => row.created_seq)
    return { approvals: page.map((row) => this.view(row)), ...(next_cursor ? { next_cursor } : {}) }
  }

  /** Approves and moves the money, in one transaction; never the requester's own request. */
  async approve(caller: Caller, approvalId: string): Promise<ApprovalView> {
    return this.db.transaction().execute(async (trx) => {
      const row = await this.waiting(trx, approvalId, 'approved')
      if (row.requested_by === caller.credentialId) {
        throw new Forbidden(
          'the operator who asked for this cannot approve it; another operator must')
      }
      const asked = row.request as { ref?: string; tx_id?: string; reason?: string }
      const other = this.approvables.get(row.kind)
      if (other) {
        noteCommitTargets(row.account_id)
        const txId = await other.approved(trx, row.request, row.requested_by,
          caller.credentialId)
        return this.decide(trx, row, caller, 'approved', null, txId ?? null)
      }
      const moved =
        row.kind === 'deposit'
          ? await this.ledger.depositIn(trx, row.account_id, BigInt(row.amount), asked.ref
            ?? 'deposit', row.requested_by)
          : await this.ledger.reverseIn(trx, asked.tx_id!, asked.reason ?? 'reversal',
            row.requested_by)
      noteCommitTargets(moved.txId, row.account_id)
      return this.decide(trx, row, caller, 'approved', null, moved.txId)
    })
  }

  async reject(caller: Caller, approvalId: string, reason: string): Promise<ApprovalView> {
    return this.db.transaction().execute(async (trx) => {
      const row = await this.waiting(trx, approvalId, 'rejected')
      noteCommitTargets(row.account_id)
      return this.decide(trx, row, caller, 'rejected', reason, null)
    })
  }

  /** The request, locked, still waiting and not expired; else 404 or 409 saying why. */
  private async waiting(trx: Kysely<Database>, approvalId: string,
      decision: string): Promise<ApprovalRow> {
    const row = await trx.selectFrom('approvals').selectAll().where('id', '=', approvalId)
      .forUpdate().executeTakeFirst()
    if (!row) throw new NotFound('approval')
    const state = this.stateOf(row)
    if (state !== 'pending_approval') throw new InvalidState(
      `the request is ${state}; it cannot be ${decision}`, [], 409)
    return row
  }

  private async decide(
    trx: Kysely<Database>,
    row: ApprovalRow,
    caller: Caller,
    state: 'approved' | 'rejected',
    reason: string | null,
    txId: string | null,
  ): Promise<ApprovalView> {
    const decided = await trx
      .updateTable('approvals')
      .set({ state, decided_by: caller.credentialId, decided_by_name: caller.label,
        decided_at: this.clock.now(), reason, tx_id: txId })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow()
    return this.view(decided)
  }

  private stateOf(row: ApprovalRow): ApprovalRow['state'] {
    return row.state === 'pending_approval' && row.expires_at.getTime() <= this.clock.now()
      .getTime() ? 'expired' : row.state
  }

  private view(row: ApprovalRow): ApprovalView {
    return {
      approval_id: row.id,
      kind: row.kind,
      state: this.stateOf(row),
      account_id: row.account_id,
      amount: centsText(BigInt(row.amount)),
      request: row.request,
      requested_by: row.requested_by,
      requested_by_name: row.requested_by_name,
      requested_at: formatTimestamp(row.requested_at),
      expires_at: formatTimestamp(row.expires_at),
      decided_by: row.decided_by,
      decided_by_name: row.decided_by_name,
      decided_at: row.decided_at ? formatTimestamp(row.decided_at) : null,
      reason: row.reason,
      tx_id: row.tx_id,
    }
  }
}

