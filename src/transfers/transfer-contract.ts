import { z } from 'zod'
import { centsString } from '../accounts/account-contract.ts'
import { branchCode, email, pageLimit, text, timestamp, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'
import { pageCursor } from '../contract/cursor.ts'

/** Integer cents in a request: a JSON integer within ±(2^53−1). */
export const centsAmount = () =>
  z.int({ error: 'must be a whole number of cents (a JSON integer, at most 2^53-1)' })

export const transaction_page_limit_default = 100
export const transaction_page_limit_max = 1000
/** Rows a transaction list request without `limit` or `cursor` gets (the reference client's). */
export const transaction_unpaged_rows = 1000
export const transaction_filter_users_max = 100

/**
 * What the incumbent's reference client sends with every payment beyond the interface
 * (docs/guides/moving-from-the-incumbent.md): a payment advice for the recipient, and a saved
 * beneficiary, which this bank does not offer. Its client writes every field, absent ones as `null`
 * (which the decode step reads as absent) and `beneficiary_version` as 0.
 */
const referenceClientFields = {
  notification_email: email().optional(),
  notification_name: text(1, 100).optional(),
  beneficiary_id: z.never({ error: 'saved beneficiaries are not offered: leave beneficiary_id ' +
    'out (or null) and name the recipient' }).optional(),
  beneficiary_version: z
    .int({ error: 'must be a whole number' })
    .min(0, { error: 'must be 0 or more' })
    .max(2_147_483_647, { error: 'must be at most 2147483647' })
    .optional(),
}

/** Every payment's amount: integer cents, at least R1.00. */
const paymentAmount = () => centsAmount().min(100, { error: 'must be at least 100 cents' })

/** An account number: of this bank for internal payments, of any bank for EFT and RTC. */
export const accountNumber = () => z.string({ error: 'must be a string' }).regex(/^\d{6,16}$/, { error: 'must be 6 to 16 digits' })

export const transferRequest = z.strictObject({
  account_id: uuid(),
  clientTxId: uuid(),
  amount: paymentAmount(),
  ref: text(1, 30),
  pay_and_clear: z.boolean({ error: 'must be true or false' }).optional(),
  own_ref: text(2, 50),
  account_number: accountNumber(),
  branch_code: branchCode(),
  name: text(1, 100),
  ...referenceClientFields,
})
export type TransferRequest = z.output<typeof transferRequest>

/** A payment to another account of this bank, named by its account number. */
export const internalTransferRequest = z.strictObject({
  account_id: uuid(),
  clientTxId: uuid(),
  amount: paymentAmount(),
  ref: text(1, 30),
  own_ref: text(2, 50),
  account_number: accountNumber(),
  name: text(1, 100),
  ...referenceClientFields,
})
export type InternalTransferRequest = z.output<typeof internalTransferRequest>

/**
 * The payment reply carries only the reference client's record components
 * (docs/guides/moving-from-the-incumbent.md): its reader fails on any other key. The payment's
 * status travels in the reply header `Bank-Tx-Status`, which our SDK puts back into its result as
 * `status`.
 */
const paymentReply = z.strictObject({ tx_id: z.string(), amount: centsString })
const paymentReplyHeaders = { status: 'Bank-Tx-Status' } as const

export const transferStatus = z.enum(['Invalid', 'Pending', 'Successful', 'Failed'])

export const transactionView = z.object({
  tx_id: z.string(),
  parent_tx_id: z.string(),
  date: timestamp,
  amount: centsString,
  ref: z.string(),
  status: z.enum(['Invalid', 'Pending', 'Successful', 'Failed', 'Reversed']),
  tx_sha: z.string(),
  user_id: z.string(),
  added_by: z.string(),
  tx_type: z.enum(['transfer', 'fee', 'deposit', 'bulk_payment', 'debit_order', 'reversal',
    'refund', 'card', 'incoming']),
  tx_payment_type: z.enum(['EFT', 'RTC', 'INTERNAL', 'DEBIT_ORDER', 'CARD']),
  fee: centsString,
  recipient_name: z.string(),
  credit: centsString,
  debit: centsString,
  running_balance: centsString,
  verified: z.boolean(),
})
export type TransactionView = z.output<typeof transactionView>

export const transferOperations = {
  transfer: operation({
    name: 'account_transfer_eft_rtc',
    sdk: 'accounts.transfer',
    subject: 'svc.account.<partner_id>.transfer_eft_rtc',
    permission: 'payments',
    summary:
      'Pay out of an account by EFT (held now, settled by the clearing cycle) or RTC ' +
      '(pay_and_clear: settled at once). The reply header Bank-Tx-Status carries the status ' +
      '(Pending, Successful, Failed or Invalid).',
    request: transferRequest,
    response: paymentReply,
    replyHeaders: paymentReplyHeaders,
  }),
  transferInternal: operation({
    name: 'account_transfer_internal',
    sdk: 'accounts.transferInternal',
    subject: 'svc.account.<partner_id>.transfer_internal',
    permission: 'payments',
    summary:
      'Pay another account of this bank, named by its account_number (any partner\'s): instant, ' +
      'both sides in one ledger transaction, RTC limits by SAST time. The reply header ' +
      'Bank-Tx-Status is Successful.',
    request: internalTransferRequest,
    response: paymentReply,
    replyHeaders: paymentReplyHeaders,
  }),
  list: operation({
    name: 'account_list_transactions',
    sdk: 'accounts.listTransactions',
    subject: 'svc.account.<partner_id>.list',
    permission: 'read',
    summary:
      "An account's transactions, newest first. With limit (default 100, max 1000) or cursor: a " +
      "page, and next_cursor until the last; without either: the newest 1000. A reply with more " +
      "rows behind it carries the cursor in header Bank-Next-Cursor.",
    request: z.strictObject({
      account_id: uuid(),
      limit: pageLimit(transaction_page_limit_max).optional(),
      cursor: pageCursor().optional(),
      // Only transactions of these acting users; `{}` (how the reference client writes its
      // empty UUIDs record) or `[]` means no filter.
      filter_user_ids: z
        .union(
            [z.array(uuid()).max(transaction_filter_users_max,
            { error: `must list at most ${transaction_filter_users_max} user ids` }),
            z.strictObject({})], {
          error: 'must be a list of user ids',
        })
        .optional(),
    }),
    response: z.object({
      account_id: z.string(),
      transactions: z.array(transactionView),
      next_cursor: z.string().optional(),
    }),
    replyHeaders: { next_cursor: 'Bank-Next-Cursor' },
  }),
  getTransaction: operation({
    name: 'account_get_transaction',
    sdk: 'accounts.getTransaction',
    subject: 'svc.account.<partner_id>.get_transaction',
    permission: 'read',
    summary: 'One transaction of any of the partner\'s accounts.',
    request: z.strictObject({ tx_id: uuid() }),
    response: z.object({ transaction: transactionView }),
  }),
}

/**
 * Any partner's account's transactions as an operator reads them (`ops.account.transactions`):
 * the partner's `list_transactions` page, served by the same transaction service.
 */
export const transactionOperatorOperations = {
  accountTransactions: operation({
    name: 'ops_account_transactions',
    sdk: 'accounts.transactions',
    subject: 'ops.account.transactions',
    permission: 'operator',
    summary: `One account's transactions, of any partner, newest first: limit (default ${transaction_page_limit_default}, max ${transaction_page_limit_max}) and next_cursor for the next page.`,
    request: z.strictObject({
      account_id: uuid(),
      limit: pageLimit(transaction_page_limit_max).default(transaction_page_limit_default),
      cursor: pageCursor().optional(),
    }),
    response: z.object({ account_id: z.string(), transactions: z.array(transactionView),
      next_cursor: z.string().optional() }),
  }),
}

/** A payment as the service answers it: the reply body, and the status its header carries. */
export type TransferResult = z.output<typeof paymentReply> & {
  status: z.output<typeof transferStatus> }
