import { z } from 'zod'
import { text, timestamp, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'

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
  /** Legal holds on the account (none until the bank places them). */
  holds: z.array(z.object({ reference: z.string(), amount: z.string(),
    expires_at: timestamp.nullable() })),
})
export type AccountStatusView = z.output<typeof accountStatusView>

const change = z.strictObject({ account_id: uuid(), reason: text(1, 200) })

const changeSummary = (what: string) => `${what} Answers the account's status as ` +
  '`status` does. Asking for the status it has already changes nothing and answers it. ' +
  'Raises `account.status_changed`.'

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
}
