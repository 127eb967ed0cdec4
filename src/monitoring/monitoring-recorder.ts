import { randomUUID } from 'node:crypto'
import { sql, type Transaction } from 'kysely'
import type { Database } from '../schema.ts'
import type { MonitoringRule } from './monitoring-rules-contract.ts'
import type { MovementRow, RuleHit } from './monitoring-rules.ts'

// Records one sweep batch's hits. A hit joins the open alert of its rule and account when
// that alert's last movement is within the rule's window, or opens an alert in the customer's
// open case (or a new case). What the batch learns is kept for the rest of it: the
// customer's open case and the account's newest open alert of a rule are looked up (and
// locked) once per batch, not per hit, and the alerts' movements are linked in one statement
// at the end (a hit of a busy account names up to 500 movements, most linked already by the
// hit before it). A hit whose movement is already in an alert of the same rule (read again:
// a payout evaluated while Pending, the ledger read from an earlier place) is not recorded
// again. Alerts and cases are stamped on the bank's clock (see monitoring-sweep.ts).

/** A movement as the sweep evaluates it: its row and whose it is. */
export interface Candidate extends MovementRow {
  partner_id: string
  account_id: string
  entity_id: string
  account_created_at: Date
}

interface OpenAlert {
  id: string
  last_tx_at: Date
  moved: boolean
}

export class HitRecorder {
  private readonly cases = new Map<string, string | undefined>()
  private readonly alerts = new Map<string, OpenAlert | undefined>()
  private readonly links = new Map<string, Set<string>>()
  private recorded = new Set<string>()

  constructor(private readonly trx: Transaction<Database>, private readonly now: Date) {}

  /** Learns which of the movements are already in an alert of a rule (one statement). */
  async load(movementIds: string[]): Promise<void> {
    if (movementIds.length === 0) return
    const rows = await this.trx.selectFrom('monitoring_alert_transactions as l')
      .innerJoin('monitoring_alerts as a', 'a.id', 'l.alert_id')
      .select(['l.tx_id', 'a.rule']).where('l.tx_id', 'in', movementIds).execute()
    this.recorded = new Set(rows.map((row) => `${row.tx_id}/${row.rule}`))
  }

  /** Joins the hit to an open alert or opens one: 'opened', 'joined', or 'known' (skipped). */
  async record(m: Candidate, hit: RuleHit,
      params: Record<string, number>): Promise<'opened' | 'joined' | 'known'> {
    if (this.recorded.has(`${m.id}/${hit.rule}`)) return 'known'
    this.recorded.add(`${m.id}/${hit.rule}`)
    // The customer's open case is locked first, as a decision locks it before its alerts: a
    // sweep and a decision never wait on each other's locks in a circle.
    const caseId = await this.openCase(m.entity_id)
    const open = hit.window_ms === 0 ? undefined : await this.openAlert(m.account_id, hit.rule)
    if (open && open.last_tx_at.getTime() >= m.created_at.getTime() - hit.window_ms) {
      this.link(open.id, hit.tx_ids)
      if (m.created_at > open.last_tx_at) {
        open.last_tx_at = m.created_at
        open.moved = true
      }
      return 'joined'
    }
    const id = randomUUID()
    await this.trx.insertInto('monitoring_alerts').values({
      id, case_id: caseId ?? await this.newCase(m), partner_id: m.partner_id,
      entity_id: m.entity_id, account_id: m.account_id, rule: hit.rule,
      params: JSON.stringify(params), detail: hit.detail, status: 'open', opened_at: this.now,
      last_tx_at: m.created_at, closed_at: null,
    }).execute()
    if (hit.window_ms > 0) {
      this.alerts.set(`${m.account_id}/${hit.rule}`,
        { id, last_tx_at: m.created_at, moved: false })
    }
    this.link(id, hit.tx_ids)
    return 'opened'
  }

  /** Writes the batch's links and the joined alerts' last movement times. */
  async flush(): Promise<void> {
    const pairs = [...this.links].flatMap(([alertId, txIds]) =>
      [...txIds].map((txId) => ({ alert_id: alertId, tx_id: txId })))
    if (pairs.length > 0) {
      await sql`insert into monitoring_alert_transactions (alert_id, tx_id)
        select * from unnest(${sql.val(pairs.map((p) => p.alert_id))}::uuid[],
          ${sql.val(pairs.map((p) => p.tx_id))}::uuid[])
        on conflict (alert_id, tx_id) do nothing`.execute(this.trx)
    }
    const moved = [...this.alerts.values()].filter((a): a is OpenAlert => a?.moved === true)
    for (const alert of moved) {
      await this.trx.updateTable('monitoring_alerts')
        .set({ last_tx_at: sql`greatest(last_tx_at, ${alert.last_tx_at})` })
        .where('id', '=', alert.id).execute()
    }
  }

  private link(alertId: string, txIds: string[]): void {
    const set = this.links.get(alertId) ?? new Set<string>()
    for (const id of txIds) set.add(id)
    this.links.set(alertId, set)
  }

  /** The customer's open case, locked (once per batch); undefined when it has none. */
  private async openCase(entityId: string): Promise<string | undefined> {
    if (this.cases.has(entityId)) return this.cases.get(entityId)
    const open = await this.trx.selectFrom('monitoring_cases').select('id')
      .where('entity_id', '=', entityId)
      .where('status', 'in', ['open', 'escalated', 'report_pending'])
      .forUpdate().executeTakeFirst()
    this.cases.set(entityId, open?.id)
    return open?.id
  }

  /** The account's open alert of the rule with the latest movement, locked (once a batch). */
  private async openAlert(accountId: string,
      rule: MonitoringRule): Promise<OpenAlert | undefined> {
    const key = `${accountId}/${rule}`
    if (this.alerts.has(key)) return this.alerts.get(key)
    const row = await this.trx.selectFrom('monitoring_alerts').select(['id', 'last_tx_at'])
      .where('account_id', '=', accountId).where('rule', '=', rule)
      .where('status', '=', 'open').orderBy('last_tx_at', 'desc').limit(1)
      .forUpdate().executeTakeFirst()
    const open = row && { id: row.id, last_tx_at: new Date(row.last_tx_at), moved: false }
    this.alerts.set(key, open)
    return open
  }

  /** A new open case of the customer (one sweep at a time: none was open). */
  private async newCase(m: Candidate): Promise<string> {
    const id = randomUUID()
    await this.trx.insertInto('monitoring_cases').values({
      id, partner_id: m.partner_id, entity_id: m.entity_id, status: 'open', assigned_to: null,
      opened_at: this.now, updated_at: this.now, decision: null, decision_reason: null,
      decided_by: null, decided_at: null, approval_id: null,
    }).execute()
    this.cases.set(m.entity_id, id)
    return id
  }
}
