import type { Kysely } from 'kysely'
import type { Caller } from '../auth/credential-store.ts'
import type { DualControl } from '../audit/dual-control.ts'
import type { Clock } from '../clock.ts'
import { formatTimestamp } from '../contract/format.ts'
import { noteCommitTargets } from '../db/commit-hooks.ts'
import { Invalid, InvalidState, NotFound } from '../errors.ts'
import { appendEvents } from '../events/event-outbox.ts'
import type { JobRunner } from '../jobs/job-runner.ts'
import {
  legalHoldPlace, legalHoldPlaceAvailable, legalHoldRelease, legalHoldRows, type LegalHoldRow,
} from '../ledger/legal-holds.ts'
import type { ComposedWriter } from '../ledger/ledger-writer.ts'
import type { Database } from '../schema.ts'
import type { HoldView } from './account-status-contract.ts'

// Legal holds as operators place and release them (RULINGS "Account lifecycle";
// docs/guides/payments.md "Legal holds"). The money side is the ledger's
// (ledger/legal-holds.ts: the hold is part of the account's `held`, so its available balance
// drops by it); this is who may, when, and what is announced. Placing is an operator's; the
// release of a hold above the dual-control threshold waits for a second operator
// (`ops.approvals.approve`), like a deposit. A hold past its `expires_at` is released by the
// bank itself within the hour (the `accounts.hold_expiry` job). Partners see the account's
// holds in its status, and hear of each (`account.hold_placed`, `account.hold_released`).

export const hold_expiry_job_kind = 'accounts.hold_expiry'

/** Expired holds released per pass of the job. */
const expiry_page = 200

export interface HoldRelease {
  status: 'released' | 'pending_approval'
  approval_id: string | null
  hold: HoldView
}

export class LegalHolds {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly ledger: ComposedWriter,
    private readonly dualControl: DualControl,
    private readonly clock: Clock,
    jobs: JobRunner,
  ) {
    dualControl.register('hold_release', {
      approved: async (trx, asked, requestedBy) => {
        await this.releaseIn(trx, String(asked.hold_id), requestedBy, String(asked.reason))
      },
    })
    jobs.register({
      kind: hold_expiry_job_kind,
      attempts_max: 5,
      lease_ms: 120_000,
      backoff_base_ms: 60_000,
      backoff_max_ms: 30 * 60_000,
      plan: (now) => {
        const hour = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000)
        return [{ key: hour.toISOString().slice(0, 13), due_at: hour }]
      },
      run: async () => ({ released: await this.expire(this.clock.now()) }),
    })
  }

  async place(caller: Caller, request: { account_id: string; amount: number;
      reference: string; expires_at?: string | undefined }): Promise<HoldView> {
    const now = this.clock.now()
    const expiresAt = request.expires_at === undefined ? null : new Date(request.expires_at)
    if (expiresAt && expiresAt.getTime() <= now.getTime()) {
      throw Invalid.field('expires_at', 'must be in the future')
    }
    const amount = BigInt(request.amount)
    return this.db.transaction().execute(async (trx) => {
      await this.ledger.write(trx, legalHoldPlace, { accountId: request.account_id, amount })
      const account = await trx.selectFrom('accounts').select('partner_id')
        .where('id', '=', request.account_id).executeTakeFirstOrThrow()
      const row = await legalHoldRows.insert(trx, { account_id: request.account_id,
        partner_id: account.partner_id, amount, reference: request.reference,
        expires_at: expiresAt, placed_by: caller.credentialId, now })
      noteCommitTargets(row.id, row.account_id)
      await announce(trx, 'account.hold_placed', row, now)
      return holdViewOf(row)
    })
  }

  /**
   * The bank's own hold (`placed_by: system`) of up to `amount`, as much as the account has
   * available, in the caller's transaction: a credit held for a sanctions screening review.
   * Undefined when nothing was available to hold.
   */
  async placeBySystem(trx: Kysely<Database>, hold: { account_id: string; partner_id: string;
      amount: bigint; reference: string }): Promise<HoldView | undefined> {
    const amount = await this.ledger.write(trx, legalHoldPlaceAvailable,
      { accountId: hold.account_id, amount: hold.amount })
    if (amount === 0n) return undefined
    const now = this.clock.now()
    const row = await legalHoldRows.insert(trx, { ...hold, amount, expires_at: null,
      placed_by: 'system', now })
    noteCommitTargets(row.id, row.account_id)
    await announce(trx, 'account.hold_placed', row, now)
    return holdViewOf(row)
  }

  /** Releases the account's holds with this reference by the bank, in the caller's transaction. */
  async releaseBySystem(trx: Kysely<Database>, accountId: string, reference: string,
      reason: string): Promise<number> {
    const holds = await legalHoldRows.lockReferenced(trx, accountId, reference)
    for (const hold of holds) await this.releaseIn(trx, hold.id, 'system', reason)
    return holds.length
  }

  /**
   * Releases the hold now, or asks a second operator to when it is above the threshold. A hold
   * released already is answered as it is (a retry is safe).
   */
  async release(caller: Caller, request: { hold_id: string; reason: string }):
      Promise<HoldRelease> {
    return this.db.transaction().execute(async (trx) => {
      const hold = await legalHoldRows.lock(trx, request.hold_id)
      if (!hold) throw new NotFound('hold')
      if (hold.released_at !== null) {
        return { status: 'released', approval_id: null, hold: holdViewOf(hold) }
      }
      if (this.dualControl.needsApproval(hold.amount)) {
        const approvalId = await this.dualControl.request(trx, caller, 'hold_release',
          hold.account_id, hold.amount, { hold_id: hold.id, reason: request.reason })
        return { status: 'pending_approval', approval_id: approvalId, hold: holdViewOf(hold) }
      }
      const released = await this.releaseIn(trx, hold.id, caller.credentialId, request.reason)
      return { status: 'released', approval_id: null, hold: released }
    })
  }

  async list(accountId: string, all: boolean): Promise<{ holds: HoldView[] }> {
    const account = await this.db.selectFrom('accounts').select('id')
      .where('id', '=', accountId).executeTakeFirst()
    if (!account) throw new NotFound('account')
    const rows = await legalHoldRows.ofAccount(this.db, accountId, all)
    return { holds: rows.map(holdViewOf) }
  }

  /** Releases the holds past their expiry; how many. */
  async expire(now: Date): Promise<number> {
    let released = 0
    for (;;) {
      const due = await legalHoldRows.expired(this.db, now, expiry_page)
      for (const hold of due) {
        await this.db.transaction().execute(async (trx) => {
          const locked = await legalHoldRows.lock(trx, hold.id)
          if (!locked || locked.released_at !== null) return
          await this.releaseIn(trx, hold.id, 'system', 'expired')
          released++
        })
      }
      if (due.length < expiry_page) return released
    }
  }

  /** The hold, locked and still holding; else 404 or 422. */
  private async holding(trx: Kysely<Database>, holdId: string): Promise<LegalHoldRow> {
    const hold = await legalHoldRows.lock(trx, holdId)
    if (!hold) throw new NotFound('hold')
    if (hold.released_at !== null) {
      throw new InvalidState(`the hold was released already (${formatTimestamp(
        new Date(hold.released_at))})`)
    }
    return hold
  }

  /** Releases a hold still holding, in the caller's transaction; its view. */
  private async releaseIn(trx: Kysely<Database>, holdId: string, by: string,
      reason: string): Promise<HoldView> {
    const hold = await this.holding(trx, holdId)
    await this.ledger.write(trx, legalHoldRelease, { accountId: hold.account_id,
      amount: hold.amount })
    const now = this.clock.now()
    const released = await legalHoldRows.release(trx, hold.id, by, reason, now)
    noteCommitTargets(hold.id, hold.account_id)
    await announce(trx, 'account.hold_released', released, now)
    return holdViewOf(released)
  }
}

async function announce(trx: Kysely<Database>,
    type: 'account.hold_placed' | 'account.hold_released', hold: LegalHoldRow,
    now: Date): Promise<void> {
  const view = holdViewOf(hold)
  await appendEvents(trx, [{
    type, partner_id: hold.partner_id, resource_id: hold.account_id, occurred_at: now,
    data: { account_id: view.account_id, hold_id: view.hold_id, amount: view.amount,
      reference: view.reference, expires_at: view.expires_at,
      ...(type === 'account.hold_released' ? { released_at: view.released_at,
        reason: view.release_reason } : {}) },
  }])
}

export function holdViewOf(row: LegalHoldRow): HoldView {
  const at = (value: Date | string | null) => value === null ? null
    : formatTimestamp(new Date(value))
  return {
    hold_id: row.id, account_id: row.account_id, amount: row.amount.toString(),
    reference: row.reference, expires_at: at(row.expires_at),
    placed_at: formatTimestamp(new Date(row.placed_at)), placed_by: row.placed_by,
    released_at: at(row.released_at), released_by: row.released_by,
    release_reason: row.release_reason,
  }
}
