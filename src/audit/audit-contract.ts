import { z } from 'zod'
import { pageCursor } from '../contract/cursor.ts'
import { pageLimit, text, timestamp, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'

// Operators are accountable: every action an operator takes is written to the audit trail
// (a hash chain that `ledger verify` checks) in the same transaction as the change, and a
// deposit or reversal above the dual-control threshold waits for a second operator.

export const audit_page_limit_default = 100
export const audit_page_limit_max = 1000
/** How long a dual-control request waits for a second operator before it expires. */
export const approval_ttl_hours = 24

/** A time filter: an RFC 3339 timestamp, or a date (that day's start in SAST). */
const instant = () =>
  z
    .string({ error: 'must be a date or an RFC 3339 timestamp' })
    .regex(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/, {
      error: 'must be a date (2026-11-27, that day from 00:00 SAST) or an RFC 3339 timestamp ' +
        '(2026-11-27T08:00:00Z)',
    })

const auditEntry = z.object({
  audit_id: z.string(),
  at: timestamp,
  action: z.string(),
  /**
   * The acting credential's id (or `system`, or a partner's credential for a partner's own
   * decision).
   */
  actor: z.string(),
  /** The acting credential's label at the time. */
  actor_name: z.string(),
  /** The one subject of a capability's own record (a user, entity or document), else null. */
  subject_id: z.string().nullable(),
  /** Every id the action touched: the request's ids and what it created. */
  targets: z.array(z.string()),
  /** What was asked (secrets left out), or what was decided. */
  details: z.record(z.string(), z.unknown()),
  /** `ok`, or the refusal the operator got (e.g. `403 forbidden: …`). */
  result: z.string(),
})

const approvalKind = z.enum(['deposit', 'reversal', 'hold_release', 'unclaimed_pay', 'str_filing'])
const approvalState = z.enum(['pending_approval', 'approved', 'rejected', 'expired'])

export const approvalView = z.object({
  approval_id: z.string(),
  kind: approvalKind,
  state: approvalState,
  account_id: z.string(),
  amount: z.string(),
  /**
   * What the requester asked (a deposit's ref, a reversal's tx_id and reason, a hold release's
   * hold_id and reason).
   */
  request: z.record(z.string(), z.unknown()),
  requested_by: z.string(),
  requested_by_name: z.string(),
  requested_at: timestamp,
  expires_at: timestamp,
  decided_by: z.string().nullable(),
  decided_by_name: z.string().nullable(),
  decided_at: timestamp.nullable(),
  reason: z.string().nullable(),
  /** The transaction made on approval (none for a hold release: no money moves). */
  tx_id: z.string().nullable(),
})
export type ApprovalView = z.infer<typeof approvalView>

export const auditOperations = {
  list: operation({
    name: 'ops_audit_list',
    sdk: 'audit.list',
    cli: { names: { subject_id: 'subject' } },
    subject: 'ops.audit.list',
    permission: 'operator',
    summary:
      'The audit trail, newest first: every operator action (who, what, on which ids, with what ' +
      'result) and the decisions recorded on a subject. Filter by actor (a credential id), ' +
        'target (any id the action touched), subject (a user, entity or document), action (e.g. ' +
          'account.deposit) ' +
      `and time (from inclusive, to exclusive); limit (default ${audit_page_limit_default}, ` +
        `max ${audit_page_limit_max}) and next_cursor for the next page.`,
    request: z.strictObject({
      subject_id: uuid().optional(),
      actor: text(1, 100).optional(),
      target: text(1, 100).optional(),
      action: text(1, 100).optional(),
      from: instant().optional(),
      to: instant().optional(),
      limit: pageLimit(audit_page_limit_max).default(audit_page_limit_default),
      cursor: pageCursor().optional(),
    }),
    response: z.object({ entries: z.array(auditEntry), next_cursor: z.string().optional() }),
  }),
}

export const approvalOperations = {
  list: operation({
    name: 'ops_approvals_list',
    sdk: 'approvals.list',
    subject: 'ops.approvals.list',
    permission: 'operator',
    summary:
      `Dual-control requests, newest first (by default those waiting: pending_approval). A ` +
        `request not decided within ${approval_ttl_hours} hours is expired. ` +
      'limit (default 100, max 1000) and next_cursor for the next page.',
    request: z.strictObject({
      state: approvalState.default('pending_approval'),
      limit: pageLimit(1000).default(100),
      cursor: pageCursor().optional(),
    }),
    response: z.object({ approvals: z.array(approvalView), next_cursor: z.string().optional() }),
  }),
  approve: operation({
    name: 'ops_approvals_approve',
    sdk: 'approvals.approve',
    subject: 'ops.approvals.approve',
    permission: 'operator',
    summary: 'Approves a waiting deposit or reversal, which then moves the money in the same transaction. The operator who asked for it cannot approve it (403).',
    request: z.strictObject({ approval_id: uuid() }),
    response: approvalView,
  }),
  reject: operation({
    name: 'ops_approvals_reject',
    sdk: 'approvals.reject',
    subject: 'ops.approvals.reject',
    permission: 'operator',
    summary: 'Rejects a waiting deposit or reversal: nothing moves. Any operator may reject, the requester too (a withdrawal).',
    request: z.strictObject({ approval_id: uuid(), reason: text(1, 500) }),
    response: approvalView,
  }),
}

// The console's sign-ins and sign-outs (issue 32). The console signs an operator in by
// calling `ops.console.sign_in` with the credential given (the bank's answer proves it an
// operator's: a partner's credential is refused, 403, an unknown one 401), and calls
// `ops.console.sign_out` when the session ends. Neither changes anything; each is an
// audited `ops.` operation, so the endpoint wrapper writes its row under the operator's
// credential like any other action's (operator-audit.ts), and the trail shows who used the
// console when. `session_id` is a random id of the console's own, made at sign-in and never
// the session's cookie, so that a sign-in and its sign-out can be paired.

export const console_sign_out_reasons = [
  'signed_out',
  'expired',
  'replaced',
  'console_stopped',
] as const
const consoleSession = z.object({
  /** The credential the bank knows the operator by, and its label. */
  credential_id: z.string(),
  name: z.string(),
})

export const consoleSessionOperations = {
  signIn: operation({
    name: 'ops_console_sign_in',
    sdk: 'console.signIn',
    subject: 'ops.console.sign_in',
    permission: 'operator',
    summary: "Records an operator's sign-in to the operator console in the audit trail (the console calls it with the credential given; an operator credential is required). address is where the browser connected from, as the console saw it. Changes nothing else.",
    request: z.strictObject({
      session_id: uuid(),
      address: text(1, 100).optional(),
    }),
    response: consoleSession,
  }),
  signOut: operation({
    name: 'ops_console_sign_out',
    sdk: 'console.signOut',
    subject: 'ops.console.sign_out',
    permission: 'operator',
    summary: "Records the end of an operator's console session in the audit trail: signed_out (the operator signed out), expired (idle or at its absolute limit), replaced (ended for a newer one at the console's limit of sessions) or console_stopped. Changes nothing else.",
    request: z.strictObject({
      session_id: uuid(),
      reason: z.enum(console_sign_out_reasons, {
        error: `must be one of ${console_sign_out_reasons.join(', ')}`,
      }),
    }),
    response: consoleSession,
  }),
}
