import { sql, type Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import { BankError, Forbidden, NotFound } from '../errors.ts'
import { accountClosure } from '../ledger/account-status.ts'
import { cents } from '../ledger/cents.ts'
import type { ComposedWriter } from '../ledger/ledger-writer.ts'
import type { InternalJob, PayoutJob } from '../ledger/payment-journals.ts'
import { newRowId } from '../ledger/row-id.ts'
import type { Database } from '../schema.ts'
import type { CloseResult } from './account-status-contract.ts'
import {
  lastChange, lockAccount, recordChange, visibleTo, type AccountStatusService, type LockedAccount,
  type StatusActor,
} from './account-status-service.ts'

// Closing an account (RULINGS "Account lifecycle"; docs/guides/payments.md "Closing an
// account"). In one transaction, under the account's lock: what stands in the way is named
// (pending transactions, legal holds, a balance with nowhere to go), the balance leaves by
// the payout the request names (to another account of the same customer at once, or by an
// EFT that clears with the next cycle; no fee: the bank does not charge a customer to leave),
// the status becomes `closed` through the ledger's door, the account's live cards and the
// debit orders that collect into it are cancelled, and, when the customer has no other
// account that takes payments, its debit mandates too. A card authorization still open is a
// pending transaction: it must clear or lapse first.

/** What closing an account cancels beside it: the capabilities' own records. */
export interface ClosureCancels {
  /** Cancels the account's live cards; how many. */
  cards(trx: Kysely<Database>, accountId: string): Promise<number>
  /** Cancels the scheduled debit orders that collect into the account; how many. */
  debitOrders(trx: Kysely<Database>, accountId: string, reason: string): Promise<number>
  /**
   * Locks the live debit orders that collect into the account; how many of them are under
   * way with the debtor's bank (their money may still come in: a pending transaction).
   */
  collectionsUnderWay(trx: Kysely<Database>, accountId: string): Promise<number>
  /** Cancels the customer's live debit mandates; how many. */
  mandates(trx: Kysely<Database>, entityId: string, reason: string): Promise<number>
}

export interface CloseRequest {
  account_id: string
  reason: string
  pay_to_account_id?: string | undefined
  pay_by_eft?: { account_number: string; branch_code: string; name: string; ref: string }
    | undefined
}

interface Obstacle {
  obstacle: 'pending_transactions' | 'legal_holds' | 'payout_missing' | 'payout_refused'
  field: string
  message: string
}

export class AccountClosure {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly ledger: ComposedWriter,
    private readonly statuses: AccountStatusService,
    private readonly cancels: ClosureCancels,
    private readonly clock: Clock,
  ) {}

  async close(actor: StatusActor & { credentialId: string },
      request: CloseRequest): Promise<CloseResult> {
    const accountId = request.account_id
    return this.db.transaction().execute(async (trx) => {
      const account = await lockAccount(trx, accountId)
      if (!account || !visibleTo(actor, account.partner_id)) throw new NotFound('account')
      if (account.status === 'closed') {
        return { ...(await this.statuses.viewIn(trx, accountId, 'closed')), payout: null }
      }
      await this.checkActor(trx, actor, accountId, account)
      const payout = await this.payoutOf(trx, actor, request, account)
      const { lastSeq } = await this.ledger.write(trx, accountClosure,
        { accountId, from: account.status, to: 'closed', payout })
      const view = await recordChange(trx, { accountId, partnerId: account.partner_id,
        from: account.status, to: 'closed', reason: request.reason, by: actor.kind,
        at: this.clock.now(), accountSeq: lastSeq })
      await this.cancelAround(trx, accountId, account.entity_id, request.reason)
      return { ...view, holds: [], payout: payout ? {
        tx_id: payout.txId, amount: payout.amount.toString(),
        payment_type: payout.kind === 'internal' ? 'INTERNAL' : 'EFT',
        status: payout.kind === 'internal' ? 'Successful' : 'Pending',
      } : null }
    })
  }

  /** A partner closes neither an account the bank blocked nor one the bank froze. */
  private async checkActor(trx: Kysely<Database>, actor: StatusActor, accountId: string,
      account: LockedAccount): Promise<void> {
    if (actor.kind !== 'partner') return
    if (account.status === 'blocked') {
      throw new Forbidden('the bank blocked this account: only the bank can close it')
    }
    if (account.status === 'frozen' && (await lastChange(trx, accountId))?.changed_by
      === 'operator') {
      throw new Forbidden('the bank froze this account: only the bank can close it')
    }
  }

  /**
   * The payout of the balance, the obstacles checked first: all of them named in one
   * refusal (422 `account_not_closable`).
   */
  private async payoutOf(trx: Kysely<Database>, actor: StatusActor & { credentialId: string },
      request: CloseRequest, account: LockedAccount): Promise<InternalJob | PayoutJob | undefined> {
    const collecting = await this.cancels.collectionsUnderWay(trx, request.account_id)
    const obstacles = await obstaclesOf(trx, request.account_id, collecting)
    const balance = cents(account.balance)
    let payout: InternalJob | PayoutJob | undefined
    if (balance > 0n) {
      const to = request.pay_to_account_id
      if (to !== undefined) {
        const payee = await payeeOf(trx, to, request.account_id, account)
        if ('obstacle' in payee) obstacles.push(payee)
        else payout = internalPayout(actor, request, account, balance, to, payee.account_number)
      } else if (request.pay_by_eft) {
        payout = eftPayout(actor, request, account, balance, request.pay_by_eft)
      } else {
        obstacles.push({ obstacle: 'payout_missing', field: 'pay_to_account_id',
          message: `the account has a balance of ${balance} cents: name pay_to_account_id ` +
            '(another account of the customer) or pay_by_eft to pay it out' })
      }
    }
    if (obstacles.length > 0) {
      throw new BankError('account_not_closable', 'the account cannot be closed: ' +
        obstacles.map((o) => o.message).join('; '), obstacles)
    }
    return payout
  }

  private async cancelAround(trx: Kysely<Database>, accountId: string, entityId: string,
      reason: string): Promise<void> {
    await this.cancels.cards(trx, accountId)
    await this.cancels.debitOrders(trx, accountId, reason)
    const { rows } = await sql<{ open: string }>`
      select count(*)::text as open from accounts
      where entity_id = ${entityId} and id <> ${accountId}
        and status not in ('blocked', 'closed')`.execute(trx)
    if (Number(rows[0]?.open ?? 0) === 0) {
      await this.cancels.mandates(trx, entityId,
        `the customer's last account that takes payments was closed (${reason})`)
    }
  }
}

/**
 * Pending transactions and legal holds on the account, read under its lock. Pending is
 * whatever may still take money from the account or bring some back to it: a row still
 * `Pending` (a payout held, a card authorization open, a bulk batch waiting for its PIN, a
 * bulk payment waiting for its rail), and a verified bulk batch not yet completed (`processing`:
 * its payments may not have their rows yet, and each one its rail refuses is refunded), and
 * `collecting` debit order collections under way with the debtor's bank (locked by the caller).
 */
async function obstaclesOf(trx: Kysely<Database>, accountId: string,
    collecting: number): Promise<Obstacle[]> {
  const { rows } = await sql<{ pending: string; batches: string; holds: string }>`
    select
      (select count(*) from transactions
        where account_id = ${accountId} and status = 'Pending')::text as pending,
      (select count(*) from bulk_payments
        where account_id = ${accountId} and status = 'processing')::text as batches,
      (select count(*) from legal_holds
        where account_id = ${accountId} and released_at is null)::text as holds
  `.execute(trx)
  const pending = Number(rows[0]?.pending ?? 0)
  const batches = Number(rows[0]?.batches ?? 0)
  const holds = Number(rows[0]?.holds ?? 0)
  const obstacles: Obstacle[] = []
  if (pending > 0 || batches > 0 || collecting > 0) {
    obstacles.push({ obstacle: 'pending_transactions', field: 'account_id',
      message: pendingMessage(pending, batches, collecting) })
  }
  if (holds > 0) {
    obstacles.push({ obstacle: 'legal_holds', field: 'account_id',
      message: `${holds} legal hold${holds === 1 ? '' : 's'} (only the bank can release them)` })
  }
  return obstacles
}

function pendingMessage(pending: number, batches: number, collecting: number): string {
  const parts: string[] = []
  if (pending > 0) {
    parts.push(`${pending} pending transaction${pending === 1 ? '' : 's'} (payouts, card ` +
      'authorizations or bulk payments not yet settled)')
  }
  if (batches > 0) {
    parts.push(`${batches} verified bulk batch${batches === 1 ? '' : 'es'} not yet paid ` +
      '(its payments may still be refunded)')
  }
  if (collecting > 0) {
    parts.push(`${collecting} debit order collection${collecting === 1 ? '' : 's'} under way ` +
      'with the debtor\'s bank (the money may still come in)')
  }
  return parts.join('; ')
}

/**
 * The account the balance goes to, or why it cannot: not the customer's, itself, or one that
 * takes no payments.
 */
async function payeeOf(trx: Kysely<Database>, payeeId: string, accountId: string,
    account: LockedAccount): Promise<Obstacle | { account_number: string }> {
  const payee = await trx.selectFrom('accounts')
    .select(['entity_id', 'partner_id', 'status', 'account_number'])
    .where('id', '=', payeeId).executeTakeFirst()
  const field = 'pay_to_account_id'
  if (!payee || payee.partner_id !== account.partner_id || payee.entity_id !== account.entity_id
    || payeeId === accountId) {
    return { obstacle: 'payout_refused', field,
      message: 'pay_to_account_id must be another account of the same customer' }
  }
  if (payee.status === 'blocked' || payee.status === 'closed') {
    return { obstacle: 'payout_refused', field,
      message: `pay_to_account_id: the account is ${payee.status} and cannot receive payments` }
  }
  return { account_number: payee.account_number }
}

function paymentBase(actor: { credentialId: string }, request: CloseRequest,
    account: LockedAccount, amount: bigint) {
  const txId = newRowId()
  return {
    partnerId: account.partner_id, addedBy: actor.credentialId, accountId: request.account_id,
    clientTxId: `close:${request.account_id}`, amount, fee: 0n, txId,
    own_ref: 'account closure',
  }
}

function internalPayout(actor: { credentialId: string }, request: CloseRequest,
    account: LockedAccount, amount: bigint, payeeId: string, payeeNumber: string): InternalJob {
  return {
    ...paymentBase(actor, request, account, amount), kind: 'internal',
    ref: 'Account closure', name: 'Own account', account_number: payeeNumber,
    payeeAccountId: payeeId, payeeTxId: newRowId(), feeTxId: null,
  }
}

function eftPayout(actor: { credentialId: string }, request: CloseRequest,
    account: LockedAccount, amount: bigint,
    eft: NonNullable<CloseRequest['pay_by_eft']>): PayoutJob {
  return {
    ...paymentBase(actor, request, account, amount), kind: 'payout', paymentType: 'EFT',
    ref: eft.ref, name: eft.name, account_number: eft.account_number,
    branch_code: eft.branch_code,
  }
}
