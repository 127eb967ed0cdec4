import { z } from 'zod'
import { centsString } from '../accounts/account-contract.ts'
import { pageCursor } from '../contract/cursor.ts'
import { pageLimit, timestamp, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'

// The operators' list of payments still pending across every partner and account (issue
// 32: "no list of pending payments across accounts"). A pending payment is a ledger row
// whose money is held or on its way and whose outcome is not known yet: an EFT waiting for
// the next clearing cycle, an RTC whose rail has not answered, a bulk batch waiting for its
// PIN (its funding row) or being paid (each payment's row, whose parent is the funding
// row), a card authorization not yet cleared. A plain read: not audited.

export const pending_payment_page_limit_default = 50
export const pending_payment_page_limit_max = 200

/** The rails a payment goes by (a transaction's `tx_payment_type`). */
export const pending_payment_rails = ['EFT', 'RTC', 'DEBIT_ORDER', 'CARD', 'INTERNAL'] as const
/**
 * The kinds of payment that wait for an outcome (a transaction's `tx_type`). The Pending fee
 * rows of payouts taken by earlier versions are not payments of their own and are left out.
 */
export const pending_payment_kinds = ['transfer', 'bulk_payment', 'debit_order', 'card'] as const

const rail = z.enum(pending_payment_rails, {
  error: `must be one of ${pending_payment_rails.join(', ')}`,
})
const kind = z.enum(pending_payment_kinds, {
  error: `must be one of ${pending_payment_kinds.join(', ')}`,
})

export const pendingPaymentView = z.object({
  tx_id: z.string(),
  /** A bulk batch's payment names its batch's funding row here; null otherwise. */
  parent_tx_id: z.string().nullable(),
  partner_id: z.string(),
  account_id: z.string(),
  kind,
  rail,
  /** Integer cents, as strings (the money rule). */
  amount: centsString,
  fee: centsString,
  /** What the payment holds of its account's balance until it settles. */
  held: centsString,
  ref: z.string(),
  recipient_name: z.string(),
  recipient_account: z.string(),
  recipient_branch: z.string(),
  /** The credential that made it. */
  added_by: z.string(),
  created_at: timestamp,
})
export type PendingPaymentView = z.output<typeof pendingPaymentView>

export const pendingPaymentOperations = {
  pending: operation({
    name: 'ops_payment_pending',
    sdk: 'payments.pending',
    subject: 'ops.payment.pending',
    permission: 'operator',
    summary: `Payments still pending across partners and accounts, newest first: EFTs waiting for clearing, RTCs waiting for their rail, bulk batches not finished, card authorizations not cleared. Filter by partner, account, rail and kind; limit (default ${pending_payment_page_limit_default}, max ${pending_payment_page_limit_max}) and next_cursor for the next page. Amounts are integer-cent strings.`,
    request: z.strictObject({
      partner_id: uuid().optional(),
      account_id: uuid().optional(),
      rail: rail.optional(),
      kind: kind.optional(),
      limit: pageLimit(pending_payment_page_limit_max).default(pending_payment_page_limit_default),
      cursor: pageCursor().optional(),
    }),
    response: z.object({
      payments: z.array(pendingPaymentView),
      next_cursor: z.string().optional(),
    }),
  }),
}
