import { z } from 'zod'
import { centsString } from '../accounts/account-contract.ts'
import { branchCode, pageLimit, text, timestamp, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'

/** Integer cents in a request: a JSON integer within ±(2^53−1) (RULINGS, Money). */
export const centsAmount = () =>
  z.int({ error: 'must be a whole number of cents (a JSON integer, at most 2^53-1)' })

export const transaction_page_limit_default = 100
export const transaction_page_limit_max = 1000

export const transferRequest = z.strictObject({
  account_id: uuid(),
  clientTxId: uuid(),
  amount: centsAmount().min(100, { error: 'must be at least 100 cents' }),
  ref: text(1, 30),
  pay_and_clear: z.boolean({ error: 'must be true or false' }).optional(),
  own_ref: text(2, 50),
  account_number: z.string({ error: 'must be a string' }).regex(/^\d{6,16}$/, { error: 'must be 6 to 16 digits' }),
  branch_code: branchCode(),
  name: text(1, 100),
})
export type TransferRequest = z.output<typeof transferRequest>

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
  tx_type: z.enum(['transfer', 'fee', 'deposit', 'bulk_payment', 'debit_order', 'reversal', 'refund']),
  tx_payment_type: z.enum(['EFT', 'RTC', 'INTERNAL', 'DEBIT_ORDER']),
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
    summary: 'Pay out of an account by EFT (held now, settled by the clearing cycle) or RTC (pay_and_clear: settled at once).',
    request: transferRequest,
    response: z.object({
      tx_id: z.string(),
      amount: centsString,
      status: z.enum(['Invalid', 'Pending', 'Successful', 'Failed']),
    }),
  }),
  list: operation({
    name: 'account_list_transactions',
    sdk: 'accounts.listTransactions',
    subject: 'svc.account.<partner_id>.list',
    permission: 'read',
    summary: "An account's transactions, newest first, a page at a time (limit default 100, max 1000; next_cursor until the last page).",
    request: z.strictObject({
      account_id: uuid(),
      limit: pageLimit(transaction_page_limit_max).optional(),
      cursor: z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, { error: 'must be a next_cursor from an earlier page' }).optional(),
    }),
    response: z.object({
      account_id: z.string(),
      transactions: z.array(transactionView),
      next_cursor: z.string().optional(),
    }),
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

/** The transfer reply, for the service that builds it. */
export type TransferResult = z.output<typeof transferOperations.transfer.response>
