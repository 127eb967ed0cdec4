import { AccountNotActive, assert, BankError, InvalidState } from '../errors.ts'
import type { AccountStatus, Journal } from './journal.ts'
import type { JournalKind } from './journal-kind.ts'
import { payInternal, reservePayout, type InternalJob, type PayoutJob } from './payment-journals.ts'

// An account's status as the ledger enforces it (RULINGS "Account lifecycle"): every new
// debit a customer makes (a payout, an internal payment out, a card authorization, a bulk
// batch's funding) is refused from an account that is not `active`, and every credit to a
// `blocked` or `closed` one; both are checked by the kinds under the account's lock, whichever
// door the money takes. What already moved (a Pending payout's settlement, a return, a card
// clearing of an authorization taken before) is not a new debit and goes on. A status is
// changed only through the writer (accountStatusChange), so a batch that started from a
// remembered account finds it stale once its status changed.

export const account_statuses: readonly AccountStatus[] =
  ['active', 'frozen', 'blocked', 'dormant', 'closed']

/** Why the customer may not debit the account now (its status); undefined when it may. */
export function debitRefusal(journal: Journal, accountId: string,
    field = 'account_id'): AccountNotActive | undefined {
  const status = journal.account(accountId).status
  return status === 'active' ? undefined : new AccountNotActive(field, accountId, status)
}

/** Whether money may arrive in the account: not when it is blocked or closed. */
export function takesCredits(status: AccountStatus): boolean {
  return status !== 'blocked' && status !== 'closed'
}

/**
 * Why money may not arrive in the account now; undefined when it may. The payee may be
 * another partner's customer: the refusal does not say its status.
 */
export function creditRefusal(journal: Journal, accountId: string,
    field = 'account_number'): BankError | undefined {
  if (takesCredits(journal.account(accountId).status)) return undefined
  const message = 'the account cannot receive payments'
  return new BankError('account_not_active', `${field}: ${message}`, [{ field, message }])
}

export interface StatusChange {
  accountId: string
  /** The status the caller decided from, read under the same lock (a change meanwhile is a
   * programmer's mistake, since the caller holds the lock). */
  from: AccountStatus
  to: AccountStatus
}

/** Changes an account's status, under its lock, written with the ledger's account state. */
export const accountStatusChange: JournalKind<StatusChange, { from: AccountStatus }> = {
  name: 'account.status',
  accountsOf: (c) => [c.accountId],
  record(journal, c) {
    const from = journal.account(c.accountId).status
    if (from !== c.from) throw new InvalidState(`the account is ${from}, not ${c.from}`)
    journal.setAccountStatus(c.accountId, c.to)
    return { from }
  },
}

/** A closure (RULINGS "Account lifecycle"): its payout, if the account has a balance. */
export interface Closure extends StatusChange {
  to: 'closed'
  /** The balance's payment: internal to another account of the customer, or by EFT. */
  payout: InternalJob | PayoutJob | undefined
}

/**
 * Closes an account: what it holds must be nothing (no pending payment, no legal hold: the
 * caller has named those obstacles), its whole balance leaves with the payout, and its status
 * becomes `closed`, all under its lock. Returns its last sequence after the payout's rows.
 */
export const accountClosure: JournalKind<Closure, { lastSeq: bigint }> = {
  name: 'account.close',
  accountsOf: (c) => c.payout?.kind === 'internal'
    ? [c.accountId, c.payout.payeeAccountId] : [c.accountId],
  record(journal, c) {
    const account = journal.account(c.accountId)
    if (account.status !== c.from) {
      throw new InvalidState(`the account is ${account.status}, not ${c.from}`)
    }
    assert(account.held === 0n, 'a closing account holds nothing')
    const payout = c.payout
    assert((payout?.amount ?? 0n) === account.balance, 'a closure pays out the whole balance')
    if (payout?.kind === 'internal') {
      const refused = creditRefusal(journal, payout.payeeAccountId, 'pay_to_account_id')
      if (refused) throw refused
      assert(payInternal(journal, payout), 'the balance covers its own payout')
    } else if (payout) {
      assert(reservePayout(journal, payout), 'the balance covers its own payout')
    }
    journal.setAccountStatus(c.accountId, 'closed')
    return { lastSeq: journal.account(c.accountId).last_seq }
  },
}
