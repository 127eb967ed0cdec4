import { z } from 'zod'
import { accountDetails, accountSummary } from '../accounts/account-contract.ts'
import { entityListItem } from '../entities/entity-contract.ts'
import { pageCursor } from '../contract/cursor.ts'
import { country, email, pageLimit, registrationNumber, text, timestamp, uuid } from '../contract/fields.ts'
import { operation, permissions } from '../contract/operation.ts'
import { detach, reportOrJob } from '../jobs/jobs-contract.ts'
import { centsAmount, transaction_page_limit_default, transaction_page_limit_max, transactionView } from '../transfers/transfer-contract.ts'
import { kycStatus, userRecord } from '../users/user-contract.ts'

// The bank's side, which interface.md does not cover: operators onboard partners, issue
// and revoke credentials and decide KYB/KYC, on `ops.` subjects with an operator credential.

const credentialView = z.object({
  id: z.string(),
  partner_id: z.string().nullable(),
  permissions: z.array(z.enum(['read', 'write', 'payments'])),
  label: z.string(),
  created_at: timestamp,
  expires_at: timestamp.nullable(),
  revoked_at: timestamp.nullable(),
})

const issuedCredential = z.object({ id: z.string(), token: z.string() })

/** The longest a credential may be issued for: ten years. */
export const credential_ttl_seconds_max = 10 * 365 * 24 * 3600

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

export const operatorOperations = {
  partnerCreate: operation({
    name: 'ops_partner_create',
    sdk: 'partners.create',
    subject: 'ops.partner.create',
    permission: 'operator',
    summary:
      'Onboard a partner: its root business entity (pending KYB), a first credential with every permission, its ' +
      'webhook signing secret and its NATS credentials file (each shown in this reply only).',
    request: z.strictObject({
      name: text(),
      email: email(),
      registration_number: registrationNumber(),
      trading_name: text(),
      country: country().default('ZAF'),
    }),
    response: z.object({
      partner_id: z.string(),
      root_entity_id: z.string(),
      credential: issuedCredential,
      webhook_secret: z.string(),
      /**
       * The partner's NATS credentials file (a user of its own NATS account), shown once; null
       * when the bank runs on an open NATS server (a sandbox without `bank nats init`).
       */
      nats_creds: z.string().nullable(),
    }),
  }),
  partnerList: operation({
    name: 'ops_partner_list',
    sdk: 'partners.list',
    subject: 'ops.partner.list',
    permission: 'operator',
    summary: 'Every partner, oldest first.',
    request: z.strictObject({}),
    response: z.object({
      partners: z.array(
        z.object({ partner_id: z.string(), name: z.string(), email: z.string(), root_entity_id: z.string(), created_at: timestamp }),
      ),
    }),
  }),
  credentialCreate: operation({
    name: 'ops_credential_create',
    sdk: 'credentials.create',
    cli: { durations: ['expires_in_seconds'] },
    subject: 'ops.credential.create',
    permission: 'operator',
    summary: 'Issue a partner credential; the token is shown once and only its hash is kept.',
    request: z.strictObject({
      partner_id: uuid(),
      permissions: z.array(z.enum(permissions as ['read', 'write', 'payments'], { error: 'must be read, write or payments' })).min(1, { error: 'name at least one permission' }),
      expires_in_seconds: z.int({ error: 'must be a whole number of seconds' }).min(60).max(credential_ttl_seconds_max).optional(),
      label: z.string().max(100).optional(),
    }),
    response: issuedCredential,
  }),
  credentialRevoke: operation({
    name: 'ops_credential_revoke',
    sdk: 'credentials.revoke',
    subject: 'ops.credential.revoke',
    permission: 'operator',
    summary: 'Revoke a credential at once.',
    request: z.strictObject({ credential_id: uuid() }),
    response: credentialView,
  }),
  credentialList: operation({
    name: 'ops_credential_list',
    sdk: 'credentials.list',
    subject: 'ops.credential.list',
    permission: 'operator',
    summary: "A partner's credentials (never their tokens).",
    request: z.strictObject({ partner_id: uuid() }),
    response: z.object({ credentials: z.array(credentialView) }),
  }),
  entityReview: operation({
    name: 'ops_entity_review',
    sdk: 'entities.review',
    cli: { choices: { decision: { approve: [], reject: ['reason'] } } },
    subject: 'ops.entity.review',
    permission: 'operator',
    summary: "Decide an entity's KYB/KYC; the first approval opens its first account (the pool account for a root entity).",
    request: z
      .strictObject({
        entity_id: uuid(),
        decision: z.enum(['approve', 'reject'], { error: 'must be approve or reject' }),
        reason: text(1, 500).optional(),
      })
      .refine((r) => r.decision === 'approve' || r.reason !== undefined, { path: ['reason'], error: 'is required when rejecting' }),
    response: z.object({
      entity_id: z.string(),
      review_status: z.enum(['pending', 'approved', 'rejected']),
      approved: z.boolean(),
      account: accountSummary.extend({ kind: z.string() }).nullable(),
    }),
  }),
  entityList: operation({
    name: 'ops_entity_list',
    sdk: 'entities.list',
    subject: 'ops.entity.list',
    permission: 'operator',
    summary: "A partner's entities with their review state.",
    request: z.strictObject({ partner_id: uuid() }),
    response: z.object({
      entities: z.array(
        entityListItem.extend({ partner_id: z.string(), review_status: z.string(), is_root: z.boolean(), tax_number: z.string(), purpose: z.string() }),
      ),
    }),
  }),
  userKyc: operation({
    name: 'ops_user_kyc',
    sdk: 'users.kyc',
    subject: 'ops.user.kyc',
    permission: 'operator',
    summary: "Set a user's KYC state: pending (resubmitted), approved or rejected (with a reason).",
    request: z.strictObject({
      user_id: uuid(),
      status: kycStatus.exclude(['not_started'], { error: 'must be pending, approved or rejected' }),
      reason: text(1, 500).optional(),
    }),
    response: z.object({ user: userRecord }),
  }),
  accountList: operation({
    name: 'ops_account_list',
    sdk: 'accounts.list',
    subject: 'ops.account.list',
    permission: 'operator',
    summary: "An entity's accounts, oldest first.",
    request: z.strictObject({ entity_id: uuid() }),
    response: z.object({ entity_id: z.string(), accounts: z.array(accountSummary.extend({ kind: z.string(), partner_id: z.string() })) }),
  }),
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
      "Reverse an operator's deposit (a credit made in error): the amount leaves the account again as a `reversal` transaction and the deposit becomes Reversed. " +
      'The account must have the amount available (else 422). Above the dual-control threshold it waits for a second operator (`pending_approval`).',
    request: z.strictObject({ tx_id: uuid(), reason: text(1, 200) }),
    response: moneyMoved,
  }),
  accountShow: operation({
    name: 'ops_account_show',
    sdk: 'accounts.show',
    subject: 'ops.account.show',
    permission: 'operator',
    summary: "One account of any partner: its owner, kind, number, balance and available balance (balance less holds), in cents.",
    request: z.strictObject({ account_id: uuid() }),
    response: accountDetails.extend({ partner_id: z.string(), entity_id: z.string(), kind: z.string(), country: z.string(), created_at: timestamp }),
  }),
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
    response: z.object({ account_id: z.string(), transactions: z.array(transactionView), next_cursor: z.string().optional() }),
  }),
  ledgerVerify: operation({
    name: 'ops_ledger_verify',
    sdk: 'ledger.verify',
    // A mismatch is a reply, not a refusal; the CLI exits 3 so that scripts notice it.
    cli: { exitCode: (report) => ((report as { ok: boolean }).ok ? 0 : 3) },
    subject: 'ops.ledger.verify',
    permission: 'operator',
    summary: "Recompute every balance from postings, every hold, running balance and hash chain, and the audit trail's hash chain; report mismatches.",
    request: z.strictObject({}),
    response: z.object({
      ok: z.boolean(),
      accounts_checked: z.number(),
      transactions_checked: z.number(),
      journals_checked: z.number(),
      audit_rows_checked: z.number(),
      postings_total: z.string(),
      internal_balances: z.record(z.string(), z.string()),
      problems: z.array(ledgerProblem),
    }),
  }),
  clearingRun: operation({
    name: 'ops_clearing_run',
    sdk: 'clearing.run',
    subject: 'ops.clearing.run',
    permission: 'operator',
    summary:
      'Run an EFT clearing cycle now: settle pending EFTs, collect returns, recover stranded RTCs. ' +
      'Answers the report; with `detach: true` answers at once with the cycle\'s job (queued behind a cycle still running), ' +
      'whose `result` becomes the report (`ops.jobs.get`). `bank clearing run` detaches and follows the job.',
    // A cycle may wait for one in progress elsewhere (BANK_JOBS_EXCLUSIVE_WAIT_MS), then settle
    // thousands; a detached call is answered at once, so its reply keeps the caller's timeout.
    replyTimeoutMs: 10 * 60_000,
    request: z.strictObject({ detach }),
    response: reportOrJob(
      z.object({
        cycle: z.string(),
        resumed: z.boolean(),
        settled: z.number(),
        failed: z.number(),
        invalid: z.number(),
        returned: z.number(),
        rtc_recovered: z.number(),
      }),
    ),
  }),
}

// The replies' types, for the services that build them: written once, here, as schemas.
export type IssuedCredential = z.output<typeof issuedCredential>
export type CredentialView = z.output<typeof credentialView>
export type ClearingReport = z.output<(typeof operatorOperations.clearingRun.response)['options'][0]>
