import { randomUUID } from 'node:crypto'
import { sql, type Kysely, type Selectable } from 'kysely'
import type { Caller } from '../auth/credential-store.ts'
import type { DualControl } from '../audit/dual-control.ts'
import { bankNow, type Clock } from '../clock.ts'
import { toSast } from '../calendar/sa-calendar.ts'
import { Conflict, InvalidState, NotFound } from '../errors.ts'
import type { Database } from '../schema.ts'
import type { EntitiesTable } from '../entities/entity-tables.ts'
import { monitoring_page_limit_default, type CaseView, type ReportView } from './monitoring-contract.ts'
import { active_case_statuses, closeAlerts, lockedCase, type MonitoringCases } from './monitoring-cases.ts'
import { goamlReport, type GoamlPerson, type GoamlSettings } from './goaml-report.ts'
import { reportView } from './monitoring-views.ts'

// Suspicious-transaction reports (RULINGS "Financial crime controls"): an operator decides
// to report a case, which asks a second operator through dual control (`str_filing`) and
// moves the case to `report_pending`; the approval, by another operator, files it in the same
// transaction: the goAML XML is made from the case's movements and customer and kept with the
// bank's reference (`STR-<SAST date>-<number>`), the case is `reported` and its alerts close.

/** The most people a report names as signatories of the customer's accounts. */
const signatories_max = 5

export class MonitoringReports {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly cases: MonitoringCases,
    private readonly dualControl: DualControl,
    private readonly settings: GoamlSettings | undefined,
    private readonly institution: { name: string; branchCode: string },
  ) {
    dualControl.register('str_filing', {
      approved: async (trx, asked, requestedBy, approvedBy) => {
        await this.file(trx, String(asked.case_id), String(asked.reason), requestedBy,
          approvedBy)
      },
    })
  }

  /** Asks a second operator to file a report of the case; the case waits `report_pending`. */
  async request(caller: Caller, caseId: string,
      reason: string): Promise<{ case: CaseView; approval_id: string }> {
    if (!this.settings) {
      throw new Conflict('reports cannot be filed before the bank\'s goAML settings are set ' +
        '(BANK_GOAML_RENTITY_ID, BANK_GOAML_REPORTING_USER, BANK_GOAML_LOCATION)')
    }
    let approvalId = ''
    const view = await this.cases.change(caseId, 'reported', async (trx, row) => {
      if (row.status === 'report_pending' && row.approval_id
        && await this.stillWaiting(trx, row.approval_id)) {
        throw new InvalidState('a report of the case is waiting for a second operator ' +
          `(approval ${row.approval_id})`, [], 409)
      }
      const { account_id, amount } = await caseMoney(trx, caseId)
      approvalId = await this.dualControl.request(trx, caller, 'str_filing', account_id, amount,
        { case_id: caseId, reason })
      const now = bankNow(this.clock)
      await trx.updateTable('monitoring_cases').set({ status: 'report_pending',
        decision: 'report', decision_reason: reason, decided_by: caller.credentialId,
        decided_at: now, updated_at: now, approval_id: approvalId })
        .where('id', '=', caseId).execute()
    })
    return { case: view, approval_id: approvalId }
  }

  async list(request: { partner_id?: string | undefined; limit?: number | undefined }):
      Promise<{ reports: ReportView[] }> {
    let query = this.db.selectFrom('monitoring_reports')
      .select(['id', 'seq', 'case_id', 'partner_id', 'reference', 'report_code', 'reason',
        'requested_by', 'approved_by', 'filed_at'])
      .orderBy('seq', 'desc').limit(request.limit ?? monitoring_page_limit_default)
    if (request.partner_id) query = query.where('partner_id', '=', request.partner_id)
    return { reports: (await query.execute()).map(reportView) }
  }

  async get(reportId: string): Promise<{ report: ReportView; xml: string }> {
    const row = await this.db.selectFrom('monitoring_reports').selectAll()
      .where('id', '=', reportId).executeTakeFirst()
    if (!row) throw new NotFound('report')
    return { report: reportView(row), xml: row.xml }
  }

  private async stillWaiting(trx: Kysely<Database>, approvalId: string): Promise<boolean> {
    const approval = await trx.selectFrom('approvals').select(['state', 'expires_at'])
      .where('id', '=', approvalId).executeTakeFirst()
    return approval?.state === 'pending_approval'
      && approval.expires_at.getTime() > this.clock.now().getTime()
  }

  /** Files the report on approval: in the approval's transaction. */
  private async file(trx: Kysely<Database>, caseId: string, reason: string,
      requestedBy: string, approvedBy: string): Promise<void> {
    const row = await lockedCase(trx, caseId)
    if (row.status !== 'report_pending' || !active_case_statuses.includes(row.status)) {
      throw new InvalidState(`the case is ${row.status}; no report of it can be filed`, [], 409)
    }
    const now = bankNow(this.clock)
    const { rows: [numbered] } = await sql<{ n: string }>`
      select nextval('monitoring_report_number') as n`.execute(trx)
    const reference = `STR-${toSast(now).date.replaceAll('-', '')}-`
      + String(numbered!.n).padStart(6, '0')
    const xml = goamlReport({
      settings: this.settings!, institution: this.institution, reference, reason,
      action: 'Reported to the FIC; the case is closed as reported.', reportedAt: now,
      ...(await reportData(trx, caseId, row.entity_id)),
    })
    await trx.insertInto('monitoring_reports').values({ id: randomUUID(), case_id: caseId,
      partner_id: row.partner_id, reference, report_code: 'STR', reason,
      requested_by: requestedBy, approved_by: approvedBy, filed_at: now, xml }).execute()
    await trx.updateTable('monitoring_cases').set({ status: 'reported', updated_at: now })
      .where('id', '=', caseId).execute()
    await closeAlerts(trx, caseId, now)
  }
}

/** The account of the case's first alert and the amount of all its movements. */
async function caseMoney(trx: Kysely<Database>,
    caseId: string): Promise<{ account_id: string; amount: bigint }> {
  const { rows } = await sql<{ account_id: string; amount: string | null }>`
    select (select account_id from monitoring_alerts where case_id = ${caseId}
        order by seq limit 1) as account_id,
      (select sum(t.amount) from transactions as t where t.id in (
        select x.tx_id from monitoring_alert_transactions as x
        join monitoring_alerts as a on a.id = x.alert_id where a.case_id = ${caseId})) as amount
  `.execute(trx)
  return { account_id: rows[0]!.account_id, amount: BigInt(rows[0]!.amount ?? 0) }
}

/** The customer, its accounts and the movements of the case's alerts, for the report. */
async function reportData(trx: Kysely<Database>, caseId: string, entityId: string) {
  const entity = await trx.selectFrom('entities').selectAll().where('id', '=', entityId)
    .executeTakeFirstOrThrow()
  const { rows: movements } = await sql<{ tx_id: string; account_id: string; created_at: Date
    tx_type: string; amount: string; credit: string; ref: string; recipient_name: string
    recipient_account: string; recipient_branch: string }>`
    select distinct t.id as tx_id, t.account_id, t.created_at, t.tx_type, t.amount, t.credit,
      t.ref, t.recipient_name, t.recipient_account, t.recipient_branch
    from monitoring_alerts as a
    join monitoring_alert_transactions as x on x.alert_id = a.id
    join transactions as t on t.id = x.tx_id
    where a.case_id = ${caseId} order by t.created_at, t.id`.execute(trx)
  const accountIds = [...new Set(movements.map((m) => m.account_id))]
  const accounts = await trx.selectFrom('accounts')
    .select(['id', 'account_number', 'created_at', 'balance', 'status'])
    .where('id', 'in', accountIds).execute()
  return {
    customer: { entity_id: entityId, name: entity.name, persons: await personsOf(trx, entity) },
    accounts: accounts.map((a) => ({ account_id: a.id, account_number: a.account_number,
      opened: a.created_at, balance: BigInt(a.balance), status: a.status })),
    movements: movements.map((m) => ({ ...m, created_at: new Date(m.created_at),
      amount: BigInt(m.amount), credit: BigInt(m.credit) })),
  }
}

/**
 * The people a report names for the customer: the entity's users (its holder first), and a
 * personal customer itself; goAML needs each one's date of birth. 409 when there is none.
 */
async function personsOf(trx: Kysely<Database>,
    entity: Selectable<EntitiesTable>): Promise<GoamlPerson[]> {
  const users = await trx.selectFrom('users')
    .select(['first_name', 'last_name', 'date_of_birth', 'id_number', 'country', 'phone_number'])
    .where('entity_id', '=', entity.id).orderBy('is_entity_holder', 'desc')
    .orderBy('created_seq').limit(signatories_max).execute()
  const persons: GoamlPerson[] = users.map((u) => ({ first_name: u.first_name,
    last_name: u.last_name, birthdate: u.date_of_birth, id_number: u.id_number || null,
    country: u.country || 'ZA', phone: digits(u.phone_number) }))
  if (entity.entity_type === 'personal' && entity.date_of_birth && persons.length === 0) {
    persons.push({ first_name: entity.first_name, last_name: entity.last_name,
      birthdate: entity.date_of_birth, id_number: entity.id_number, country: entity.country,
      phone: digits(entity.phone_number) })
  }
  if (persons.length === 0) {
    throw new InvalidState('the customer has no person with a date of birth on record to name ' +
      'in the report', [], 409)
  }
  return persons
}

function digits(phone: string): string {
  return phone.replace(/\D/g, '').replace(/^27/, '0').slice(0, 50)
}
