import { html, sast } from './console-html.ts'
import {
  choice,
  filterForm,
  idLink,
  isUuid,
  notice,
  pageNumber,
  pager,
  param,
  slicePage,
  table,
  type Download,
  type Ops,
  type PageRequest,
  type Rendered,
  type Reply,
} from './console-kit.ts'
import { caseStatuses } from '../monitoring/monitoring-contract.ts'
import { monitoringRules } from '../monitoring/monitoring-rules-contract.ts'

// Transaction-monitoring cases (RULINGS "Financial crime controls"): the queue of cases,
// oldest first, filtered by status, assignee, partner, rule and age (`ops.monitoring.cases`),
// and the suspicious-transaction reports filed with their references, each one's goAML XML
// a download (`ops.monitoring.reports`, `ops.monitoring.report`, audited). One case's page,
// its notes, assignment and decisions are console-case.ts.

export type CaseView = Reply<Ops['monitoring']['cases']>['cases'][number]
export type ReportView = Reply<Ops['monitoring']['reports']>['reports'][number]

/** The queue's status filter: the undecided cases (the work to do), one status, or any. */
const queue_statuses = ['undecided', ...caseStatuses, 'any'] as const
type QueueStatus = (typeof queue_statuses)[number]
/** The statuses of a case still to be worked (the bank's `active_case_statuses`). */
export const undecided_statuses = ['open', 'escalated', 'report_pending'] as const
/** The most cases or reports one list call returns (the operations' limit). */
const monitoring_list_max = 500
/** The age filter's bound: a year, in hours (the operation's). */
const age_hours_max = 8_760

/** The operator a case is assigned to (or who decided it): "you" for the one signed in. */
export function operatorName(r: PageRequest, credentialId: string | null): string {
  if (credentialId === null) return 'nobody'
  return credentialId === r.operator.credentialId ? `you (${r.operator.name})` : credentialId
}

/** A whole number of hours within the operation's bounds, else none. */
function ageHours(url: URL): number | undefined {
  const text = param(url, 'older_than_hours')
  if (text === undefined || !/^\d{1,4}$/.test(text)) return undefined
  const hours = Number(text)
  return hours <= age_hours_max ? hours : undefined
}

interface QueueFilter {
  status: QueueStatus
  rule: (typeof monitoringRules)[number] | ''
  partner_id: string | undefined
  assigned_to: string | undefined
  older_than_hours: number | undefined
}

function queueFilter(r: PageRequest): QueueFilter {
  const assignee = param(r.url, 'assigned_to')
  return {
    status: choice(r.url, 'status', queue_statuses, 'undecided'),
    rule: choice(r.url, 'rule', ['', ...monitoringRules] as const, ''),
    partner_id: param(r.url, 'partner_id'),
    assigned_to: assignee === 'me' ? r.operator.credentialId : assignee,
    older_than_hours: ageHours(r.url),
  }
}

/**
 * The cases the filter names, oldest first. Undecided: one call per status, merged (each
 * call's oldest are the oldest of its status, so the merge's first are the oldest of all).
 */
async function queuedCases(r: PageRequest, f: QueueFilter): Promise<CaseView[]> {
  const asked = {
    oldest_first: true,
    limit: monitoring_list_max,
    ...(f.rule ? { rule: f.rule } : {}),
    ...(isUuid(f.partner_id) ? { partner_id: f.partner_id } : {}),
    ...(isUuid(f.assigned_to) ? { assigned_to: f.assigned_to } : {}),
    ...(f.older_than_hours === undefined ? {} : { older_than_hours: f.older_than_hours }),
  }
  if (f.status === 'any') return (await r.client.monitoring.cases(asked)).cases
  const statuses = f.status === 'undecided' ? undecided_statuses : [f.status]
  const lists = await Promise.all(
    statuses.map((status) => r.client.monitoring.cases({ ...asked, status })),
  )
  return lists
    .flatMap((list) => list.cases)
    .sort((a, b) => Date.parse(a.opened_at) - Date.parse(b.opened_at))
    .slice(0, monitoring_list_max)
}

function queueTable(r: PageRequest, rows: readonly CaseView[]) {
  return table<CaseView>(
    rows,
    [
      { label: 'Case', cell: (c) => idLink(`/cases/${c.case_id}`, c.case_id) },
      { label: 'Opened', cell: (c) => sast(c.opened_at) },
      { label: 'Status', cell: (c) => c.status },
      { label: 'Open alerts', cell: (c) => c.alerts_open, amount: true },
      { label: 'Alerts', cell: (c) => c.alerts, amount: true },
      { label: 'Rules', cell: (c) => c.rules.join(', ') },
      { label: 'Assigned to', cell: (c) => operatorName(r, c.assigned_to) },
      { label: 'Customer', cell: (c) => idLink(`/entities/${c.entity_id}`, c.entity_id) },
      { label: 'Partner', cell: (c) => idLink(`/partners/${c.partner_id}`, c.partner_id) },
    ],
    'No cases match.',
  )
}

export async function casesPage(r: PageRequest): Promise<Rendered> {
  const f = queueFilter(r)
  const found = await queuedCases(r, f)
  const pageNo = pageNumber(r.url)
  const { rows, more } = slicePage(found, pageNo)
  const shown = {
    status: f.status,
    rule: f.rule,
    partner_id: f.partner_id,
    assigned_to: param(r.url, 'assigned_to'),
    older_than_hours: f.older_than_hours,
  }
  const filter = filterForm('/cases', [
    { name: 'status', label: 'Status', value: f.status, options: queue_statuses },
    { name: 'assigned_to', label: 'Assigned to (credential id, or me)', value: shown.assigned_to },
    { name: 'partner_id', label: 'Partner id', value: f.partner_id },
    { name: 'rule', label: 'Rule', value: f.rule, options: ['', ...monitoringRules] },
    { name: 'older_than_hours', label: 'Opened at least (hours ago)',
      value: f.older_than_hours?.toString() },
  ])
  return {
    title: 'Cases',
    current: '/cases',
    body: html`${notice(r.url)}
      <p>
        The monitoring rules' alerts, grouped into one case per customer, oldest first. Filing
        a report needs a second operator. <a href="/cases/reports">Reports filed</a>
      </p>
      ${filter}${queueTable(r, rows)}${pager('/cases', shown, pageNo, more)}`,
  }
}

export function reportsTable(r: PageRequest, reports: readonly ReportView[]) {
  return table<ReportView>(
    reports,
    [
      { label: 'Reference', cell: (p) => p.reference },
      { label: 'Filed', cell: (p) => sast(p.filed_at) },
      { label: 'Case', cell: (p) => idLink(`/cases/${p.case_id}`, p.case_id) },
      { label: 'Asked by', cell: (p) => operatorName(r, p.requested_by) },
      { label: 'Approved by', cell: (p) => operatorName(r, p.approved_by) },
      {
        label: 'goAML XML',
        cell: (p) =>
          html`<a href="/cases/reports/${p.report_id}/goaml" download>${p.reference}.xml</a>`,
      },
    ],
    'No reports filed.',
  )
}

export async function reportsPage(r: PageRequest): Promise<Rendered> {
  const partnerId = param(r.url, 'partner_id')
  const { reports } = await r.client.monitoring.reports({
    limit: monitoring_list_max,
    ...(isUuid(partnerId) ? { partner_id: partnerId } : {}),
  })
  const pageNo = pageNumber(r.url)
  const { rows, more } = slicePage(reports, pageNo)
  const filter = filterForm('/cases/reports', [
    { name: 'partner_id', label: 'Partner id', value: partnerId },
  ])
  return {
    title: 'Reports filed',
    current: '/cases',
    body: html`<p>
        Suspicious-transaction reports filed with the FIC, newest first, each with the bank's
        reference; each one's goAML XML is a download (audited).
      </p>
      ${filter}${reportsTable(r, rows)}
      ${pager('/cases/reports', { partner_id: partnerId }, pageNo, more)}`,
  }
}

/** A filed report's goAML XML, as filed, named by its reference. */
export async function reportDownload(r: PageRequest, reportId: string): Promise<Download> {
  const { report, xml } = await r.client.monitoring.report({ report_id: reportId })
  return {
    download: {
      file_name: `${report.reference}.xml`,
      content_type: 'application/xml; charset=utf-8',
      content: Buffer.from(xml, 'utf8'),
    },
  }
}
