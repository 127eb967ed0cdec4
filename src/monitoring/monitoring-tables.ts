import type { Generated } from 'kysely'
import type { Json, NullableTimestamp, Timestamp } from '../db/column-types.ts'

// Kysely types of the tables transaction monitoring owns (src/schema.ts's Database extends
// MonitoringTables): the rules' stored parameters, how far the ledger has been read, the
// movements evaluated, the alerts and the cases they group into, notes and filed reports.

export type MonitoringRuleName =
  'velocity' | 'structuring' | 'rapid_in_out' | 'new_payee_large' | 'dormant_active'

export type CaseStatus = 'open' | 'escalated' | 'report_pending' | 'closed' | 'reported'

/** A rule's parameters as an operator set them (seeded with the defaults). */
export interface MonitoringRulesTable {
  rule: MonitoringRuleName
  enabled: boolean
  params: Json<Record<string, number>>
  updated_at: Timestamp
  updated_by: string | null
}

/** How far the sweep has read the ledger's postings (one row, id 1). */
export interface MonitoringCursorTable {
  id: number
  postings_id: string
}

/**
 * A payout the rules looked at while it was Pending: its posting, when it settles, is not
 * evaluated again. Pruned once the payout is out of the Pending window.
 */
export interface MonitoringEvaluatedTable {
  tx_id: string
  evaluated_at: Timestamp
}

/**
 * Postings (ids after `lo` up to `hi`) read while the transactions `xids` (xid8) were in
 * progress: read again once they have all finished, for the ids it did not see (`seen`).
 */
export interface MonitoringOpenRangesTable {
  hi: string
  lo: string
  xids: string[]
  seen: string[]
}

export interface MonitoringCasesTable {
  id: string
  seq: Generated<string>
  partner_id: string
  entity_id: string
  status: CaseStatus
  assigned_to: string | null
  opened_at: Timestamp
  updated_at: Timestamp
  decision: 'false_positive' | 'escalate' | 'report' | null
  decision_reason: string | null
  decided_by: string | null
  decided_at: NullableTimestamp
  approval_id: string | null
}

export interface MonitoringAlertsTable {
  id: string
  seq: Generated<string>
  case_id: string
  partner_id: string
  entity_id: string
  account_id: string
  rule: MonitoringRuleName
  params: Json<Record<string, number>>
  detail: string
  status: 'open' | 'closed'
  opened_at: Timestamp
  last_tx_at: Timestamp
  closed_at: NullableTimestamp
}

export interface MonitoringAlertTransactionsTable {
  alert_id: string
  tx_id: string
}

export interface MonitoringCaseNotesTable {
  id: string
  seq: Generated<string>
  case_id: string
  author: string
  author_name: string
  text: string
  created_at: Timestamp
}

export interface MonitoringReportsTable {
  id: string
  seq: Generated<string>
  case_id: string
  partner_id: string
  reference: string
  report_code: 'STR'
  reason: string
  requested_by: string
  approved_by: string
  filed_at: Timestamp
  xml: string
}

export interface MonitoringTables {
  monitoring_rules: MonitoringRulesTable
  monitoring_cursor: MonitoringCursorTable
  monitoring_evaluated: MonitoringEvaluatedTable
  monitoring_open_ranges: MonitoringOpenRangesTable
  monitoring_cases: MonitoringCasesTable
  monitoring_alerts: MonitoringAlertsTable
  monitoring_alert_transactions: MonitoringAlertTransactionsTable
  monitoring_case_notes: MonitoringCaseNotesTable
  monitoring_reports: MonitoringReportsTable
}
