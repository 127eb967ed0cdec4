import type { Selectable } from 'kysely'
import { formatTimestamp } from '../contract/format.ts'
import type { AlertView, CaseView, NoteView, ReportView } from './monitoring-contract.ts'
import type {
  MonitoringAlertsTable, MonitoringCaseNotesTable, MonitoringCasesTable, MonitoringReportsTable,
  MonitoringRuleName,
} from './monitoring-tables.ts'

// The rows of monitoring's tables as operators read them.

const orNull = (at: Date | null) => (at ? formatTimestamp(at) : null)

export function alertView(row: Selectable<MonitoringAlertsTable>, txIds: string[]): AlertView {
  return {
    alert_id: row.id, case_id: row.case_id, partner_id: row.partner_id,
    entity_id: row.entity_id, account_id: row.account_id, rule: row.rule, params: row.params,
    detail: row.detail, status: row.status, opened_at: formatTimestamp(row.opened_at),
    last_tx_at: formatTimestamp(row.last_tx_at), closed_at: orNull(row.closed_at),
    tx_ids: txIds,
  }
}

export interface CaseCounts {
  alerts: number
  alerts_open: number
  rules: MonitoringRuleName[]
}

export function caseView(row: Selectable<MonitoringCasesTable>, counts: CaseCounts): CaseView {
  return {
    case_id: row.id, partner_id: row.partner_id, entity_id: row.entity_id, status: row.status,
    assigned_to: row.assigned_to, opened_at: formatTimestamp(row.opened_at),
    updated_at: formatTimestamp(row.updated_at), decision: row.decision,
    decision_reason: row.decision_reason, decided_by: row.decided_by,
    decided_at: orNull(row.decided_at), approval_id: row.approval_id, ...counts,
  }
}

export function noteView(row: Selectable<MonitoringCaseNotesTable>): NoteView {
  return { note_id: row.id, case_id: row.case_id, author: row.author,
    author_name: row.author_name, text: row.text, created_at: formatTimestamp(row.created_at) }
}

export function reportView(row: Omit<Selectable<MonitoringReportsTable>, 'xml'>): ReportView {
  return { report_id: row.id, case_id: row.case_id, partner_id: row.partner_id,
    reference: row.reference, report_code: row.report_code, reason: row.reason,
    requested_by: row.requested_by, approved_by: row.approved_by,
    filed_at: formatTimestamp(row.filed_at) }
}
