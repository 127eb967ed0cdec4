import { z } from 'zod'
import { branchCode, text, timestamp, utcTimestamp, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'
import { accountNumber, centsAmount } from '../transfers/transfer-contract.ts'

// An account's status (RULINGS "Account lifecycle"): partners freeze and unfreeze their
// customers' accounts; operators also block and reactivate them. The reference SDK reads
// account records with a strict mapper, so the status is never a key of those replies: it
// has a subject of its own (`status`) and the `Account-Status` header of `get_details`.

export const accountStatuses = ['active', 'frozen', 'blocked', 'dormant', 'closed'] as const

export const accountStatusView = z.object({
  account_id: z.string(),
  status: z.enum(accountStatuses),
  /** Why it has that status; null for an account never changed. */
  reason: z.string().nullable(),
  /** Who made the last change: the partner, an operator, or the bank itself. */
  changed_by: z.enum(['partner', 'operator', 'system']).nullable(),
  changed_at: timestamp.nullable(),
  /** The legal holds the bank keeps on the account now (their amounts are not available). */
  holds: z.array(z.object({ hold_id: z.string(), reference: z.string(), amount: z.string(),
    placed_at: timestamp, expires_at: timestamp.nullable() })),
})
export type AccountStatusView = z.output<typeof accountStatusView>

const change = z.strictObject({ account_id: uuid(), reason: text(1, 200) })

/** A legal hold as operators see it (RULINGS "Account lifecycle"). */
export const holdView = z.object({
  hold_id: z.string(),
  account_id: z.string(),
  /** Integer cents the account may not use while the hold stands. */
  amount: z.string(),
  /** The order it serves (e.g. a garnishee order's number). */
  reference: z.string(),
  expires_at: timestamp.nullable(),
  placed_at: timestamp,
  /** The credential of the operator who placed it. */
  placed_by: z.string(),
  /** Null while it holds. */
  released_at: timestamp.nullable(),
  /** The operator's credential that released it, or `system` when it expired. */
  released_by: z.string().nullable(),
  release_reason: z.string().nullable(),
})
export type HoldView = z.output<typeof holdView>

/** Where a closing account's balance goes: one of the two when it has a balance. */
const closePayout = {
  /** Another account of the same customer (entity), paid at once. */
  pay_to_account_id: uuid().optional(),
  /** An EFT to another bank: it goes with the next clearing cycle. */
  pay_by_eft: z.strictObject({
    account_number: accountNumber(),
    branch_code: branchCode(),
    name: text(1, 100),
    ref: text(1, 30),
  }).optional(),
}

const closeRequest = z.strictObject({ account_id: uuid(), reason: text(1, 200), ...closePayout })
  .refine((r) => !(r.pay_to_account_id && r.pay_by_eft), {
    error: 'name one of pay_to_account_id and pay_by_eft, not both', path: ['pay_by_eft'] })

export const closeResult = accountStatusView.extend({
  /** The closing payment of the balance; null when the account had nothing to pay out. */
  payout: z.object({
    tx_id: z.string(),
    amount: z.string(),
    payment_type: z.enum(['INTERNAL', 'EFT']),
    /** `Successful` for an internal payment; `Pending` for an EFT until it clears. */
    status: z.enum(['Successful', 'Pending']),
  }).nullable(),
})
export type CloseResult = z.output<typeof closeResult>

const closeSummary = (who: string) => `Closes the account for good${who}. Refused (422 ` +
  '`account_not_closable`, `details` naming each obstacle) while it has pending ' +
  'transactions (a verified bulk batch not yet completed among them) or legal holds. A ' +
  'balance is paid out in the same request, without a fee, to another account of the same ' +
  'customer (`pay_to_account_id`) or by EFT (`pay_by_eft`); ' +
  'its cards are cancelled and the debit orders that collect into it cancelled. Incoming ' +
  'payments to it are then sent back (AC04); money that comes back for it later (a payout ' +
  'returned, the closing EFT failed) is kept by the bank as unclaimed funds, never credited ' +
  'to it. Closing a closed account answers its status. ' +
  'Raises `account.status_changed`.'

const changeSummary = (what: string) => `${what} Answers the account's status as ` +
  '`status` does. Asking for the status it has already changes nothing and answers it. ' +
  'Raises `account.status_changed`.'

/**
 * Money the bank keeps for a closed account (unclaimed funds): what came back for one of its
 * payments after it closed (a payout returned, the closing EFT failed).
 */
export const unclaimedView = z.object({
  /** The payment it came back for: a row of the closed account. */
  tx_id: z.string(),
  account_id: z.string(),
  entity_id: z.string(),
  partner_id: z.string(),
  /** Integer cents still unclaimed. */
  amount: z.string(),
  payment_type: z.string(),
  ref: z.string(),
  recipient_name: z.string(),
  /** When it came back. */
  since: timestamp,
})
export type UnclaimedView = z.output<typeof unclaimedView>

export const accountStatusOperations = {
  status: operation({
    name: 'account_status',
    sdk: 'accounts.status',
    subject: 'svc.account.<partner_id>.status',
    permission: 'read',
    summary: "An account's status (active, frozen, blocked, dormant, closed), why and since " +
      'when, and its legal holds.',
    request: z.strictObject({ account_id: uuid() }),
    response: accountStatusView,
  }),
  freeze: operation({
    name: 'account_freeze',
    sdk: 'accounts.freeze',
    subject: 'svc.account.<partner_id>.freeze',
    permission: 'write',
    summary: changeSummary('Freezes an active (or dormant) account: no debits (payouts, ' +
      'internal payments out, card authorizations, bulk batches) until unfrozen; credits ' +
      'still arrive.'),
    request: change,
    response: accountStatusView,
  }),
  unfreeze: operation({
    name: 'account_unfreeze',
    sdk: 'accounts.unfreeze',
    subject: 'svc.account.<partner_id>.unfreeze',
    permission: 'write',
    summary: changeSummary('Unfreezes a frozen account: active again. An account the bank ' +
      'froze only the bank can unfreeze (403).'),
    request: change,
    response: accountStatusView,
  }),
  close: operation({
    name: 'account_close',
    sdk: 'accounts.close',
    subject: 'svc.account.<partner_id>.close',
    permission: 'write',
    summary: closeSummary(' (not one the bank froze or blocked: 403)'),
    request: closeRequest,
    response: closeResult,
  }),
}

export const accountStatusOperatorOperations = {
  accountStatus: operation({
    name: 'ops_account_status',
    sdk: 'accounts.status',
    subject: 'ops.account.status',
    permission: 'operator',
    summary: "Any account's status, why, since when and who changed it, and its holds.",
    request: z.strictObject({ account_id: uuid() }),
    response: accountStatusView,
  }),
  accountFreeze: operation({
    name: 'ops_account_freeze',
    sdk: 'accounts.freeze',
    subject: 'ops.account.freeze',
    permission: 'operator',
    summary: changeSummary('Freezes an account as the bank: its partner cannot unfreeze it.'),
    request: change,
    response: accountStatusView,
  }),
  accountUnfreeze: operation({
    name: 'ops_account_unfreeze',
    sdk: 'accounts.unfreeze',
    subject: 'ops.account.unfreeze',
    permission: 'operator',
    summary: changeSummary('Unfreezes a frozen account, whoever froze it.'),
    request: change,
    response: accountStatusView,
  }),
  accountBlock: operation({
    name: 'ops_account_block',
    sdk: 'accounts.block',
    subject: 'ops.account.block',
    permission: 'operator',
    summary: changeSummary('Blocks an account: no debits and no credits (incoming payments ' +
      'are sent back with AC06, internal payments to it refused).'),
    request: change,
    response: accountStatusView,
  }),
  accountReactivate: operation({
    name: 'ops_account_reactivate',
    sdk: 'accounts.reactivate',
    subject: 'ops.account.reactivate',
    permission: 'operator',
    summary: changeSummary('Makes a frozen, blocked or dormant account active again.'),
    request: change,
    response: accountStatusView,
  }),
  accountClose: operation({
    name: 'ops_account_close',
    sdk: 'accounts.close',
    subject: 'ops.account.close',
    permission: 'operator',
    summary: closeSummary(', whatever its status'),
    request: closeRequest,
    response: closeResult,
  }),
  holdPlace: operation({
    name: 'ops_account_hold_place',
    sdk: 'accounts.placeHold',
    cli: { positionals: ['account_id', 'amount', 'reference'], names: { amount: 'amount_cents' } },
    subject: 'ops.account.hold.place',
    permission: 'operator',
    summary: 'Places a legal hold (e.g. a garnishee order) of an amount on an account: its ' +
      'available balance drops by it until the hold is released or expires (`expires_at`, ' +
      'released within the hour after). Only money the account has available can be held ' +
      '(else 422). Raises `account.hold_placed`.',
    request: z.strictObject({
      account_id: uuid(),
      amount: centsAmount().min(1, { error: 'must be at least 1 cent' }),
      reference: text(1, 100),
      expires_at: utcTimestamp().optional(),
    }),
    response: holdView,
  }),
  holdRelease: operation({
    name: 'ops_account_hold_release',
    sdk: 'accounts.releaseHold',
    subject: 'ops.account.hold.release',
    permission: 'operator',
    summary: 'Releases a legal hold: its amount is available again. Above the dual-control ' +
      'threshold it waits (`pending_approval`) for a second operator to approve it ' +
      '(`ops.approvals.approve`). A hold released already is answered as it is. Raises ' +
      '`account.hold_released` once released.',
    request: z.strictObject({ hold_id: uuid(), reason: text(1, 200) }),
    response: z.object({
      status: z.enum(['released', 'pending_approval']),
      /** The request a second operator must approve; null once released. */
      approval_id: z.string().nullable(),
      hold: holdView,
    }),
  }),
  unclaimed: operation({
    name: 'ops_account_unclaimed',
    sdk: 'accounts.unclaimed',
    // `account unclaimed` is the group of `list` and `pay`.
    cli: { words: 'account unclaimed list', positionals: ['account_id'] },
    subject: 'ops.account.unclaimed',
    permission: 'operator',
    summary: 'Unclaimed funds: money that came back for a closed account after it closed (a ' +
      'payout returned by the recipient\'s bank, the EFT of its closing balance failed), kept ' +
      'by the bank and not yet paid out, oldest first; of one account (`account_id`) or all.',
    request: z.strictObject({ account_id: uuid().optional() }),
    response: z.object({ unclaimed: z.array(unclaimedView) }),
  }),
  unclaimedPay: operation({
    name: 'ops_account_unclaimed_pay',
    sdk: 'accounts.payUnclaimed',
    cli: { positionals: ['tx_id', 'pay_to_account_id'] },
    subject: 'ops.account.unclaimed.pay',
    permission: 'operator',
    summary: 'Pays the unclaimed funds of a payment of a closed account (`tx_id`, as ' +
      '`ops.account.unclaimed` lists it) to another account of the same customer, in full: ' +
      'a `reversal` row there whose parent is that payment. Above the dual-control threshold ' +
      'it waits for a second operator (`pending_approval`, `ops.approvals.approve`) and moves ' +
      'nothing until approved. 404 when nothing is unclaimed for it (paid out already); 422 ' +
      '`account_not_active` when the account takes no payments.',
    request: z.strictObject({ tx_id: uuid(), pay_to_account_id: uuid(), reason: text(1, 200) }),
    response: z.object({
      /** `paid` now, or `pending_approval` until a second operator approves it. */
      status: z.enum(['paid', 'pending_approval']),
      /** The approval request when it waits for one, else null. */
      approval_id: z.string().nullable(),
      /** The credit's row on `pay_to_account_id` once paid, else null. */
      tx_id: z.string().nullable(),
      pay_to_account_id: z.string(),
      amount: z.string(),
      /** What was unclaimed: now paid, or to be paid on approval. */
      paid: unclaimedView,
    }),
  }),
  holds: operation({
    name: 'ops_account_holds',
    sdk: 'accounts.holds',
    subject: 'ops.account.holds',
    permission: 'operator',
    summary: "An account's legal holds, newest first: those holding now, or all (`all`).",
    request: z.strictObject({ account_id: uuid(), all: z.boolean().optional() }),
    response: z.object({ holds: z.array(holdView) }),
  }),
}
