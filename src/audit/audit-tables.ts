import type { ColumnType, Generated, Selectable } from 'kysely'

type Json<T> = ColumnType<T, string, string>

// The audit trail (audit-chain.ts): one append-only row per operator action and per
// decision a capability records (a KYC approval, a document deleted by retention), chained
// by hash. `subject_id` is the one subject of a capability's row; `targets` every id an
// operator action touched.
export interface AuditLogTable {
  id: string
  seq: Generated<string>
  subject_id: string | null
  action: string
  actor: string
  actor_name: Generated<string>
  targets: ColumnType<string[], string, string>
  at: ColumnType<Date, Date | string, Date | string>
  details: Json<Record<string, unknown>>
  result: Generated<string>
  prev_sha: string
  sha: string
  /** The chain the row is on (audit-chain.ts): 1 to audit_chains. */
  chain: Generated<number>
}

export interface AuditChainHeadTable {
  id: number
  sha: string
}

/** Deposits and reversals above the dual-control threshold, waiting for a second operator. */
export interface ApprovalsTable {
  id: string
  created_seq: Generated<string>
  kind: 'deposit' | 'reversal' | 'hold_release' | 'unclaimed_pay' | 'str_filing'
  account_id: string
  amount: ColumnType<bigint | string, bigint | string, bigint | string>
  request: Json<Record<string, unknown>>
  state: 'pending_approval' | 'approved' | 'rejected' | 'expired'
  requested_by: string
  requested_by_name: string
  requested_at: Date
  expires_at: Date
  decided_by: string | null
  decided_by_name: string | null
  decided_at: Date | null
  reason: string | null
  tx_id: string | null
}

/**
 * Per chain, the last row a clean `ledger verify` checked (its `seq` and `sha`): an
 * incremental verify walks the chain from there (audit-verification.ts).
 */
export interface AuditChainCheckpointsTable {
  chain: number
  seq: ColumnType<string, string, string>
  sha: string
  verified_at: Date
}

export interface AuditTables {
  audit_log: AuditLogTable
  audit_chain_head: AuditChainHeadTable
  audit_chain_checkpoints: AuditChainCheckpointsTable
  approvals: ApprovalsTable
}

export type AuditRow = Selectable<AuditLogTable>
