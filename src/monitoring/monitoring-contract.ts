import { z } from 'zod'
import { centsString } from '../accounts/account-contract.ts'
import { text, timestamp, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'
import { monitoringRules } from './monitoring-rules-contract.ts'

// Transaction monitoring as operators work it (RULINGS "Financial crime controls"): the rules'
// parameters, the alerts the rules open, the cases they group into per customer, the
// decisions on a case (false positive, escalate, report, the last with a second operator)
// and the suspicious-transaction reports filed in the FIC's goAML XML.

export const monitoring_page_limit_default = 50
const page_limit_max = 500
/** The most movements of a case's alerts its page shows (`alert_money`). */
export const alert_money_max = 200

export const caseStatuses = ['open', 'escalated', 'report_pending', 'closed', 'reported'] as const
export const caseDecisions = ['false_positive', 'escalate', 'report'] as const

const rule = z.enum(monitoringRules)
const limit = z.int({ error: 'must be a whole number' }).min(1).max(page_limit_max).optional()
/** Only those opened at least this many hours ago (on the bank's clock). */
const olderThanHours = z.int({ error: 'must be a whole number' }).min(0).max(8_760).optional()

export const ruleView = z.object({
  rule,
  enabled: z.boolean(),
  /** The rule's parameters (amounts in integer cents). */
  params: z.record(z.string(), z.number()),
  updated_at: timestamp,
  /** The operator's credential that last changed it; null for the shipped defaults. */
  updated_by: z.string().nullable(),
})

export const alertView = z.object({
  alert_id: z.string(),
  case_id: z.string(),
  partner_id: z.string(),
  entity_id: z.string(),
  account_id: z.string(),
  rule,
  /** The rule's parameters when it opened. */
  params: z.record(z.string(), z.number()),
  detail: z.string(),
  status: z.enum(['open', 'closed']),
  opened_at: timestamp,
  /** When the newest movement it holds happened. */
  last_tx_at: timestamp,
  closed_at: timestamp.nullable(),
  /** The money movements (transaction ids) involved. */
  tx_ids: z.array(z.string()),
})
export type AlertView = z.output<typeof alertView>

export const caseView = z.object({
  case_id: z.string(),
  partner_id: z.string(),
  /** The customer: the entity whose accounts the alerts are about. */
  entity_id: z.string(),
  status: z.enum(caseStatuses),
  /** The operator's credential it is assigned to. */
  assigned_to: z.string().nullable(),
  opened_at: timestamp,
  updated_at: timestamp,
  decision: z.enum(caseDecisions).nullable(),
  decision_reason: z.string().nullable(),
  decided_by: z.string().nullable(),
  decided_at: timestamp.nullable(),
  /** The dual-control request of a report waiting for a second operator. */
  approval_id: z.string().nullable(),
  alerts: z.number(),
  alerts_open: z.number(),
  rules: z.array(rule),
})
export type CaseView = z.output<typeof caseView>

export const noteView = z.object({
  note_id: z.string(),
  case_id: z.string(),
  author: z.string(),
  author_name: z.string(),
  text: z.string(),
  created_at: timestamp,
})
export type NoteView = z.output<typeof noteView>

export const reportView = z.object({
  report_id: z.string(),
  case_id: z.string(),
  partner_id: z.string(),
  /** The bank's reference of the report (goAML `entity_reference`). */
  reference: z.string(),
  report_code: z.literal('STR'),
  reason: z.string(),
  requested_by: z.string(),
  approved_by: z.string(),
  filed_at: timestamp,
})
export type ReportView = z.output<typeof reportView>

const movementView = z.object({
  tx_id: z.string(),
  account_id: z.string(),
  created_at: timestamp,
  tx_type: z.string(),
  status: z.string(),
  amount: centsString,
  credit: centsString,
  debit: centsString,
  recipient_name: z.string(),
  recipient_account: z.string(),
})
export type MovementView = z.output<typeof movementView>

const caseId = z.strictObject({ case_id: uuid() })

export const monitoringOperations = {
  monitoringRules: operation({
    name: 'ops_monitoring_rules',
    sdk: 'monitoring.rules',
    subject: 'ops.monitoring.rules',
    permission: 'operator',
    summary: "The transaction-monitoring rules with their stored parameters (amounts in " +
      'integer cents) and whether each is enabled.',
    request: z.strictObject({}),
    response: z.object({ rules: z.array(ruleView) }),
  }),
  monitoringRuleSet: operation({
    name: 'ops_monitoring_rule_set',
    sdk: 'monitoring.setRule',
    cli: { positionals: ['rule'] },
    subject: 'ops.monitoring.rule.set',
    permission: 'operator',
    summary: "Changes a monitoring rule: enables or disables it, and sets some or all of its " +
      'parameters (the others keep their stored values); 400 naming a parameter the rule ' +
      'does not have or a value out of its bounds. Movements evaluated from then on use it.',
    request: z.strictObject({
      rule,
      enabled: z.boolean().optional(),
      params: z.record(z.string(), z.number()).optional(),
    }),
    response: ruleView,
  }),
  monitoringRun: operation({
    name: 'ops_monitoring_run',
    sdk: 'monitoring.run',
    subject: 'ops.monitoring.run',
    permission: 'operator',
    summary: 'Evaluates now every money movement the monitoring sweep has not evaluated yet ' +
      '(the `monitoring.sweep` job does every few seconds): how many were evaluated, alerts ' +
      'opened and hits joined to an open alert. A movement is never evaluated twice.',
    request: z.strictObject({}),
    response: z.object({ evaluated: z.number(), alerts_opened: z.number(),
      alerts_joined: z.number() }),
  }),
  monitoringAlerts: operation({
    name: 'ops_monitoring_alerts',
    sdk: 'monitoring.alerts',
    subject: 'ops.monitoring.alerts',
    permission: 'operator',
    summary: 'Monitoring alerts, newest first, filtered by status, rule, partner, case and ' +
      `age (\`older_than_hours\`); at most \`limit\` (${monitoring_page_limit_default} by ` +
      `default, ${page_limit_max} at most).`,
    request: z.strictObject({
      status: z.enum(['open', 'closed']).optional(),
      rule: rule.optional(),
      partner_id: uuid().optional(),
      case_id: uuid().optional(),
      older_than_hours: olderThanHours,
      limit,
    }),
    response: z.object({ alerts: z.array(alertView) }),
  }),
  monitoringCases: operation({
    name: 'ops_monitoring_cases',
    sdk: 'monitoring.cases',
    subject: 'ops.monitoring.cases',
    permission: 'operator',
    summary: 'Monitoring cases (one open case per customer), newest first (oldest first with ' +
      '`oldest_first`: a queue), filtered by status, rule (a case with an alert of it), ' +
      'partner, assignee and age (`older_than_hours`); at most `limit` ' +
      `(${monitoring_page_limit_default} by default).`,
    request: z.strictObject({
      status: z.enum(caseStatuses).optional(),
      oldest_first: z.boolean().optional(),
      rule: rule.optional(),
      partner_id: uuid().optional(),
      assigned_to: uuid().optional(),
      older_than_hours: olderThanHours,
      limit,
    }),
    response: z.object({ cases: z.array(caseView) }),
  }),
  monitoringCase: operation({
    name: 'ops_monitoring_case',
    sdk: 'monitoring.case',
    cli: { words: 'monitoring case show', positionals: ['case_id'] },
    subject: 'ops.monitoring.case',
    permission: 'operator',
    summary: "A case with its alerts, notes and reports, the customer's name and kind, the " +
      `movements its alerts hold (\`alert_money\`, oldest first, at most ${alert_money_max}) ` +
      "and the customer's recent money (its accounts' newest rows). Audited: it shows a " +
      "customer's payments.",
    request: caseId,
    response: z.object({
      case: caseView,
      customer: z.object({ entity_id: z.string(), name: z.string(),
        entity_type: z.enum(['business', 'personal']) }),
      alerts: z.array(alertView),
      notes: z.array(noteView),
      reports: z.array(reportView),
      alert_money: z.array(movementView),
      recent_money: z.array(movementView),
    }),
  }),
  monitoringCaseAssign: operation({
    name: 'ops_monitoring_case_assign',
    sdk: 'monitoring.assign',
    cli: { positionals: ['case_id'] },
    subject: 'ops.monitoring.case.assign',
    permission: 'operator',
    summary: "Assigns a case to an operator (`assignee`: an operator's credential id); 400 " +
      'when it is none, 409 when the case is decided.',
    request: z.strictObject({ case_id: uuid(), assignee: uuid() }),
    response: caseView,
  }),
  monitoringCaseNote: operation({
    name: 'ops_monitoring_case_note',
    sdk: 'monitoring.note',
    cli: { positionals: ['case_id'] },
    subject: 'ops.monitoring.case.note',
    permission: 'operator',
    summary: 'Adds a note to a case (any status), in the operator\'s name.',
    request: z.strictObject({ case_id: uuid(), text: text(1, 2_000) }),
    response: noteView,
  }),
  monitoringCaseDecide: operation({
    name: 'ops_monitoring_case_decide',
    sdk: 'monitoring.decide',
    cli: { positionals: ['case_id'] },
    subject: 'ops.monitoring.case.decide',
    permission: 'operator',
    summary: 'Decides a case: `false_positive` closes it and its alerts; `escalate` marks it ' +
      'for a senior look (it stays open); `report` asks a second operator to file a ' +
      'suspicious-transaction report (`report_pending` with an `approval_id`; the report is ' +
      'filed when another operator approves it, `ops.approvals.approve`, never the one who ' +
      'asked). 409 when the case is decided already, or a report is asked without the ' +
      "bank's goAML settings.",
    request: z.strictObject({ case_id: uuid(), decision: z.enum(caseDecisions),
      reason: text(1, 2_000) }),
    response: z.object({ case: caseView, approval_id: z.string().nullable() }),
  }),
  monitoringReports: operation({
    name: 'ops_monitoring_reports',
    sdk: 'monitoring.reports',
    subject: 'ops.monitoring.reports',
    permission: 'operator',
    summary: 'The suspicious-transaction reports filed, newest first, with their references; ' +
      'of one partner when given.',
    request: z.strictObject({ partner_id: uuid().optional(), limit }),
    response: z.object({ reports: z.array(reportView) }),
  }),
  monitoringReport: operation({
    name: 'ops_monitoring_report',
    sdk: 'monitoring.report',
    cli: { positionals: ['report_id'] },
    subject: 'ops.monitoring.report',
    permission: 'operator',
    summary: "A filed report and its goAML XML (the FIC's `report` with `report_code` STR), " +
      'as filed. Audited: it holds a customer\'s details.',
    request: z.strictObject({ report_id: uuid() }),
    response: z.object({ report: reportView, xml: z.string() }),
  }),
}
