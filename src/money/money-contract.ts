import { z } from 'zod'
import { text, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'
import { centsAmount } from '../transfers/transfer-contract.ts'

// The operator's operations on money itself: a deposit (how a sandbox partner funds an
// account), the reversal of one made in error, and `ledger verify`. They are the ledger's
// operations as the wire sees them, but they cannot live in src/ledger/: the ledger imports
// only ledger/, db/, the clock and the error table (.dependency-cruiser.mjs), and a
// contract imports zod and src/contract/. Nor do they belong to one account capability:
// verify spans the whole ledger and the audit trail. So this folder holds them, and a reader
// looking for `ops.account.deposit` or `ops.ledger.verify` finds them by their name.
// They are served by audit/dual-control.ts (a deposit or reversal above the threshold waits
// for a second operator) over ledger/ledger-service.ts, and verify by the ledger's check
// with the audit trail's (audit/operator-audit.ts, withChainCheck).

const ledgerProblem = z.object({
  kind: z.string(),
  account_id: z.string().optional(),
  tx_id: z.string().optional(),
  journal_id: z.string().optional(),
  audit_id: z.string().optional(),
  message: z.string(),
})

/**
 * What a deposit or reversal answers: moved now (`Successful`, with its transaction), or,
 * above the dual-control threshold, waiting for a second operator (`pending_approval`, with
 * the approval's id; nothing moved, the balances are today's).
 */
const moneyMoved = z.object({
  status: z.enum(['Successful', 'pending_approval']),
  approval_id: z.string().nullable(),
  tx_id: z.string().nullable(),
  account_id: z.string(),
  amount: z.string(),
  balance: z.string(),
  available_balance: z.string(),
})

export const moneyOperations = {
  accountDeposit: operation({
    name: 'ops_account_deposit',
    sdk: 'accounts.deposit',
    cli: { positionals: ['account_id', 'amount'], names: { amount: 'amount_cents' } },
    subject: 'ops.account.deposit',
    permission: 'operator',
    summary: 'Credit an account as an inbound payment would (how a sandbox partner funds an account). Above the dual-control threshold it waits for a second operator (`pending_approval`).',
    request: z.strictObject({
      account_id: uuid(),
      amount: centsAmount().min(1, { error: 'must be at least 1 cent' }),
      ref: text(1, 30).default('deposit'),
    }),
    response: moneyMoved,
  }),
  transactionReverse: operation({
    name: 'ops_transaction_reverse',
    sdk: 'accounts.reverse',
    cli: { positionals: ['tx_id'] },
    subject: 'ops.transaction.reverse',
    permission: 'operator',
    summary:
      "Reverse an operator's deposit (a credit made in error): the amount leaves the account " +
        "again as a `reversal` transaction and the deposit becomes Reversed. " +
      'The account must have the amount available (else 422). Above the dual-control threshold ' +
        'it waits for a second operator (`pending_approval`).',
    request: z.strictObject({ tx_id: uuid(), reason: text(1, 200) }),
    response: moneyMoved,
  }),
  ledgerVerify: operation({
    name: 'ops_ledger_verify',
    sdk: 'ledger.verify',
    // A mismatch is a reply, not a refusal; the CLI exits 3 so that scripts notice it.
    cli: { exitCode: (report) => ((report as { ok: boolean }).ok ? 0 : 3) },
    subject: 'ops.ledger.verify',
    permission: 'operator',
    summary: "Recompute every balance from postings, every hold, running balance and hash chain, and the audit trail's hash chain; report mismatches. A clean verify leaves checkpoints; with `incremental: true` (`bank ledger verify --incremental`) each chain is checked only from its checkpoint on, the checkpoint's own row included, and balances from the checkpoint's sums plus the postings since (docs/operations.md, \"Verifying the ledger\").",
    request: z.strictObject({
      incremental: z.boolean({ error: 'must be true or false' }).optional(),
    }),
    response: z.object({
      ok: z.boolean(),
      incremental: z.boolean(),
      since: z.string().nullable(),
      checkpoint_written: z.boolean(),
      accounts_checked: z.number(),
      transactions_checked: z.number(),
      journals_checked: z.number(),
      audit_rows_checked: z.number(),
      postings_total: z.string(),
      internal_balances: z.record(z.string(), z.string()),
      problems: z.array(ledgerProblem),
    }),
  }),
}

/** A deposit's or reversal's reply, for dual control, which builds it. */
export type MoneyMoved = z.output<typeof moneyMoved>
