import { randomUUID } from 'node:crypto'
import { sql, type Kysely, type Selectable } from 'kysely'
import type { Caller } from '../auth/credential-store.ts'
import { bankNow, type Clock } from '../clock.ts'
import { noteCommitTargets } from '../db/commit-hooks.ts'
import { Invalid, InvalidState, NotFound } from '../errors.ts'
import type { Database } from '../schema.ts'
import { formatTimestamp } from '../contract/format.ts'
import {
  alert_money_max, monitoring_page_limit_default, type AlertView, type CaseView,
  type MovementView, type NoteView,
} from './monitoring-contract.ts'
import { ruleParams, type MonitoringRule } from './monitoring-rules-contract.ts'
import { case_recent_rows } from './monitoring-limits.ts'
import type { CaseStatus, MonitoringCasesTable, MonitoringRuleName } from './monitoring-tables.ts'
import { alertView, caseView, noteView, reportView, type CaseCounts } from './monitoring-views.ts'

// Alerts and cases as operators work them (RULINGS "Financial crime controls"): lists with
// filters, a case with the customer's recent money, assignment, notes and the decisions that
// need one operator (false positive, escalate). Filing a report needs a second one
// (monitoring-reports.ts).

/** A case's statuses while it is undecided: new alerts of its customer join it. */
export const active_case_statuses: CaseStatus[] = ['open', 'escalated', 'report_pending']

type CaseRow = Selectable<MonitoringCasesTable>

export interface AlertFilter {
  status?: 'open' | 'closed' | undefined
  rule?: MonitoringRule | undefined
  partner_id?: string | undefined
  case_id?: string | undefined
  older_than_hours?: number | undefined
  limit?: number | undefined
}

export interface CaseFilter {
  status?: CaseStatus | undefined
  rule?: MonitoringRule | undefined
  partner_id?: string | undefined
  assigned_to?: string | undefined
  older_than_hours?: number | undefined
  /** A queue: the oldest first (else the newest). */
  oldest_first?: boolean | undefined
  limit?: number | undefined
}

export class MonitoringCases {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async rules() {
    const rows = await this.db.selectFrom('monitoring_rules').selectAll().orderBy('rule').execute()
    return { rules: rows.map(ruleView) }
  }

  /** Sets some of a rule's parameters and whether it is enabled; 400 for a bad parameter. */
  async setRule(caller: Caller, request: { rule: MonitoringRule; enabled?: boolean | undefined
      params?: Record<string, number> | undefined }) {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('monitoring_rules').selectAll()
        .where('rule', '=', request.rule).forUpdate().executeTakeFirstOrThrow()
      const merged = { ...row.params, ...request.params }
      const parsed = ruleParams[request.rule].safeParse(merged)
      if (!parsed.success) {
        throw Invalid.listing('params', parsed.error.issues.map((issue) => ({
          field: ['params', ...issue.path.map(String)].join('.'), message: issue.message })))
      }
      const updated = await trx.updateTable('monitoring_rules')
        .set({ params: JSON.stringify(parsed.data), enabled: request.enabled ?? row.enabled,
          updated_at: bankNow(this.clock), updated_by: caller.credentialId })
        .where('rule', '=', request.rule).returningAll().executeTakeFirstOrThrow()
      return ruleView(updated)
    })
  }

  async alerts(filter: AlertFilter): Promise<{ alerts: AlertView[] }> {
    let query = this.db.selectFrom('monitoring_alerts').selectAll()
      .orderBy('seq', 'desc').limit(filter.limit ?? monitoring_page_limit_default)
    if (filter.status) query = query.where('status', '=', filter.status)
    if (filter.rule) query = query.where('rule', '=', filter.rule)
    if (filter.partner_id) query = query.where('partner_id', '=', filter.partner_id)
    if (filter.case_id) query = query.where('case_id', '=', filter.case_id)
    if (filter.older_than_hours !== undefined) {
      query = query.where('opened_at', '<=', this.hoursAgo(filter.older_than_hours))
    }
    const rows = await query.execute()
    const txs = await transactionsOf(this.db, rows.map((row) => row.id))
    return { alerts: rows.map((row) => alertView(row, txs.get(row.id) ?? [])) }
  }

  async cases(filter: CaseFilter): Promise<{ cases: CaseView[] }> {
    let query = this.db.selectFrom('monitoring_cases').selectAll()
      .orderBy('seq', filter.oldest_first ? 'asc' : 'desc')
      .limit(filter.limit ?? monitoring_page_limit_default)
    if (filter.status) query = query.where('status', '=', filter.status)
    if (filter.partner_id) query = query.where('partner_id', '=', filter.partner_id)
    if (filter.assigned_to) query = query.where('assigned_to', '=', filter.assigned_to)
    if (filter.older_than_hours !== undefined) {
      query = query.where('opened_at', '<=', this.hoursAgo(filter.older_than_hours))
    }
    const rule = filter.rule
    if (rule) {
      query = query.where(({ exists, selectFrom }) => exists(selectFrom('monitoring_alerts as a')
        .select('a.id').whereRef('a.case_id', '=', 'monitoring_cases.id')
        .where('a.rule', '=', rule)))
    }
    return { cases: await this.withCounts(this.db, await query.execute()) }
  }

  /** A case with its alerts, notes, reports and the customer's recent money; 404 if none. */
  async detail(caseId: string) {
    const row = await this.db.selectFrom('monitoring_cases').selectAll()
      .where('id', '=', caseId).executeTakeFirst()
    if (!row) throw new NotFound('case')
    const [[view], { alerts }, notes, reports, customer, alert_money, recent_money] =
      await Promise.all([
        this.withCounts(this.db, [row]),
        this.alerts({ case_id: caseId, limit: 500 }),
        this.db.selectFrom('monitoring_case_notes').selectAll().where('case_id', '=', caseId)
          .orderBy('seq').execute(),
        this.db.selectFrom('monitoring_reports').selectAll().where('case_id', '=', caseId)
          .orderBy('seq').execute(),
        this.db.selectFrom('entities').select(['id as entity_id', 'name', 'entity_type'])
          .where('id', '=', row.entity_id).executeTakeFirstOrThrow(),
        alertMoney(this.db, caseId),
        recentMoney(this.db, row.entity_id),
      ])
    return { case: view!, customer, alerts, notes: notes.map(noteView),
      reports: reports.map(reportView), alert_money, recent_money }
  }

  /** Assigns an undecided case to an operator (by credential id). */
  async assign(caseId: string, assignee: string): Promise<CaseView> {
    const operator = await this.db.selectFrom('credentials').select('id')
      .where('id', '=', assignee).where('role', '=', 'operator')
      .where('revoked_at', 'is', null).executeTakeFirst()
    if (!operator) throw Invalid.field('assignee', 'must be the credential id of an operator')
    return this.change(caseId, 'assigned', (trx) => trx.updateTable('monitoring_cases')
      .set({ assigned_to: assignee, updated_at: bankNow(this.clock) })
      .where('id', '=', caseId).execute())
  }

  async note(caller: Caller, caseId: string, text: string): Promise<NoteView> {
    return this.db.transaction().execute(async (trx) => {
      await lockedCase(trx, caseId)
      const row = await trx.insertInto('monitoring_case_notes').values({
        id: randomUUID(), case_id: caseId, author: caller.credentialId,
        author_name: caller.label, text, created_at: bankNow(this.clock),
      }).returningAll().executeTakeFirstOrThrow()
      noteCommitTargets(row.id)
      return noteView(row)
    })
  }

  /** Closes a case as a false positive (with its alerts), or escalates it. */
  async decide(caller: Caller, caseId: string, decision: 'false_positive' | 'escalate',
      reason: string): Promise<CaseView> {
    const now = bankNow(this.clock)
    const decided = { decision, decision_reason: reason, decided_by: caller.credentialId,
      decided_at: now, updated_at: now }
    return this.change(caseId, decision === 'escalate' ? 'escalated' : 'closed', async (trx,
        row) => {
      if (decision === 'escalate') {
        if (row.status !== 'open') throw new InvalidState(`the case is ${row.status}; only ` +
          'an open case can be escalated', [], 409)
        await trx.updateTable('monitoring_cases').set({ ...decided, status: 'escalated' })
          .where('id', '=', caseId).execute()
        return
      }
      await trx.updateTable('monitoring_cases').set({ ...decided, status: 'closed' })
        .where('id', '=', caseId).execute()
      await closeAlerts(trx, caseId, now)
    })
  }

  /** Runs `change` on the locked, undecided case; answers the case after it. */
  async change(caseId: string, what: string,
      change: (trx: Kysely<Database>, row: CaseRow) => Promise<unknown>): Promise<CaseView> {
    return this.db.transaction().execute(async (trx) => {
      const row = await lockedCase(trx, caseId)
      if (!active_case_statuses.includes(row.status)) {
        throw new InvalidState(`the case is ${row.status}; it cannot be ${what}`, [], 409)
      }
      await change(trx, row)
      const after = await trx.selectFrom('monitoring_cases').selectAll()
        .where('id', '=', caseId).executeTakeFirstOrThrow()
      return (await this.withCounts(trx, [after]))[0]!
    })
  }

  private hoursAgo(hours: number): Date {
    return new Date(bankNow(this.clock).getTime() - hours * 3_600_000)
  }

  private async withCounts(db: Kysely<Database>, rows: CaseRow[]): Promise<CaseView[]> {
    if (rows.length === 0) return []
    const counts = await db.selectFrom('monitoring_alerts')
      .select(['case_id', 'rule', 'status', (eb) => eb.fn.countAll<string>().as('n')])
      .where('case_id', 'in', rows.map((row) => row.id))
      .groupBy(['case_id', 'rule', 'status']).execute()
    return rows.map((row) => {
      const mine = counts.filter((c) => c.case_id === row.id)
      const total = (list: typeof mine) => list.reduce((n, c) => n + Number(c.n), 0)
      const of: CaseCounts = {
        alerts: total(mine),
        alerts_open: total(mine.filter((c) => c.status === 'open')),
        rules: [...new Set(mine.map((c) => c.rule as MonitoringRuleName))].sort(),
      }
      return caseView(row, of)
    })
  }
}

function ruleView(row: Selectable<Database['monitoring_rules']>) {
  return { rule: row.rule, enabled: row.enabled, params: row.params,
    updated_at: formatTimestamp(row.updated_at), updated_by: row.updated_by }
}

/** The case, locked for a change; 404 if there is none. */
export async function lockedCase(trx: Kysely<Database>, caseId: string): Promise<CaseRow> {
  const row = await trx.selectFrom('monitoring_cases').selectAll().where('id', '=', caseId)
    .forUpdate().executeTakeFirst()
  if (!row) throw new NotFound('case')
  noteCommitTargets(caseId)
  return row
}

export async function closeAlerts(trx: Kysely<Database>, caseId: string, now: Date) {
  await trx.updateTable('monitoring_alerts').set({ status: 'closed', closed_at: now })
    .where('case_id', '=', caseId).where('status', '=', 'open').execute()
}

/** Each alert's transaction ids, in the order they joined. */
export async function transactionsOf(db: Kysely<Database>,
    alertIds: string[]): Promise<Map<string, string[]>> {
  const map = new Map<string, string[]>()
  if (alertIds.length === 0) return map
  const rows = await db.selectFrom('monitoring_alert_transactions').selectAll()
    .where('alert_id', 'in', alertIds).execute()
  for (const row of rows) map.set(row.alert_id, [...(map.get(row.alert_id) ?? []), row.tx_id])
  return map
}

interface MovementRow {
  id: string
  account_id: string
  created_at: Date
  tx_type: string
  status: string
  amount: string
  credit: string
  debit: string
  recipient_name: string
  recipient_account: string
}

function movementView(r: MovementRow): MovementView {
  return { tx_id: r.id, account_id: r.account_id,
    created_at: formatTimestamp(new Date(r.created_at)), tx_type: r.tx_type, status: r.status,
    amount: String(r.amount), credit: String(r.credit), debit: String(r.debit),
    recipient_name: r.recipient_name, recipient_account: r.recipient_account }
}

/** The movements the case's alerts hold, oldest first (each once), at most alert_money_max. */
async function alertMoney(db: Kysely<Database>, caseId: string): Promise<MovementView[]> {
  const { rows } = await sql<MovementRow>`
    select t.id, t.account_id, t.created_at, t.tx_type, t.status, t.amount, t.credit, t.debit,
      t.recipient_name, t.recipient_account
    from transactions as t
    where t.id in (select x.tx_id from monitoring_alert_transactions as x
      join monitoring_alerts as a on a.id = x.alert_id where a.case_id = ${caseId})
    order by t.created_at, t.id limit ${alert_money_max}`.execute(db)
  return rows.map(movementView)
}

/** The customer's accounts' newest rows, newest first (each account by its own index). */
async function recentMoney(db: Kysely<Database>, entityId: string): Promise<MovementView[]> {
  const { rows } = await sql<MovementRow & { seq: string }>`
    select t.id, t.account_id, t.created_at, t.tx_type, t.status, t.amount, t.credit, t.debit,
      t.recipient_name, t.recipient_account, t.seq
    from accounts as a cross join lateral (
      select * from transactions as x where x.account_id = a.id
      order by x.seq desc limit ${case_recent_rows}) as t
    where a.entity_id = ${entityId}
    order by t.created_at desc, t.seq desc limit ${case_recent_rows}`.execute(db)
  return rows.map(movementView)
}
