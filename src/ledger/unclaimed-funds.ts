import type { Journal } from './journal.ts'

// Money that comes back for a closed account (RULINGS "Account lifecycle": a closed account
// is final, its balance stays 0; docs/guides/payments.md "Closing an account"). A payout it
// made before it closed may still be returned by the recipient's bank, and the EFT that paid
// out its balance may fail: that money is back at the bank and cannot be sent on to the
// recipient again. It is not credited to the closed account: it goes to the bank's
// `unclaimed_funds` ledger account, each amount posted with the tx_id of the payment it
// came back for, and stays there until an operator pays it to another account of the
// customer (`ops.account.unclaimed.pay`, docs/operators/operator-commands.md). A blocked
// account still takes back its own money (a return, a refund): it is the customer's and
// nothing leaves it while it is blocked.

export const unclaimed_funds = 'unclaimed_funds' as const

/** Whether money coming back for this account goes to unclaimed funds: it is closed. */
export function goesUnclaimed(journal: Journal, accountId: string): boolean {
  return journal.account(accountId).status === 'closed'
}

/** What the payment's row says of money kept as unclaimed funds. */
export function unclaimedReason(reason: string): string {
  return `${reason}; the account is closed: the bank keeps the money as unclaimed funds ` +
    'until an operator pays it to another account of the customer'
}
