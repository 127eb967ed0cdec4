import { randomUUID } from 'node:crypto'
import { sql, type Kysely, type Transaction } from 'kysely'
import { bankNow, onPartnerClock, type Clock } from '../clock.ts'
import type { JobRunner } from '../jobs/job-runner.ts'
import type { Database } from '../schema.ts'
import { ruleParams, type MonitoringRule, type RuleParams } from './monitoring-rules-contract.ts'
import { evaluate, history_rows_max, type MovementRow, type RuleHit } from './monitoring-rules.ts'
import { monitoring_sweep_limits } from './monitoring-limits.ts'

// Transaction monitoring runs off the payment path (RULINGS "Financial crime controls").
// Transfers announce nothing through the outbox (an event per payment would be one more write
// in the ledger writer's transaction), so the sweep reads the ledger behind it, through
// indexes the ledger keeps anyway, and adds no work to a payment:
//
//  - every posted movement: the postings after the sweep's place (`postings.id`, their
//    primary key), from `overlap` ids before it, since a posting whose id was taken earlier
//    may commit later than one read already;
//  - payouts taken and not yet settled (an EFT waiting for its clearing cycle): the ledger's
//    index of Pending rows, of the last days.
//
// Each movement is evaluated once (`monitoring_evaluated`, claimed in the transaction that
// records its alerts), by the rules' stored parameters over the account's recent rows. A hit
// joins the open alert of the same rule and account when that alert's last movement is
// within the rule's window (ten payments of a structuring pattern and the eleventh are one
// alert); otherwise it opens an alert in the customer's open case, or a new case. The
// `monitoring.sweep` job runs it every few seconds of bank time, one sweep at a time across
// instances (a transaction-scoped advisory lock); `ops.monitoring.run` runs it at once.

export const monitoring_sweep_job_kind = 'monitoring.sweep'

const sweep_lock_key = 7_260_046

export interface SweepReport {
  evaluated: number
  alerts_opened: number
  alerts_joined: number
}

interface Candidate extends MovementRow {
  partner_id: string
  account_id: string
  entity_id: string
  account_created_at: Date
}

export class MonitoringSweep {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    jobs: JobRunner,
  ) {
    jobs.register({
      kind: monitoring_sweep_job_kind,
      attempts_max: monitoring_sweep_limits.attempts_max,
      lease_ms: monitoring_sweep_limits.lease_ms,
      backoff_base_ms: monitoring_sweep_limits.backoff_base_ms,
      backoff_max_ms: monitoring_sweep_limits.backoff_max_ms,
      plan: (now) => [{ key: 'recurring', due_at: now }],
      next: (now) => new Date(now.getTime() + monitoring_sweep_limits.every_ms),
      // A sandbox advance does not stop for it: the bank's next tick evaluates what moved.
      skip_in_advance: true,
      run: async () => ({ ...(await this.run()) }),
    })
  }

  /** Evaluates every movement not yet evaluated, a batch per transaction. */
  async run(): Promise<SweepReport> {
    const report: SweepReport = { evaluated: 0, alerts_opened: 0, alerts_joined: 0 }
    for (;;) {
      const taken = await this.db.transaction().execute((trx) => this.batch(trx, report))
      if (taken < monitoring_sweep_limits.batch_max) return report
    }
  }

  /** One batch: how many candidates it took (fewer than a batch: none are left). */
  private async batch(trx: Transaction<Database>, report: SweepReport): Promise<number> {
    await sql`select pg_advisory_xact_lock(${sql.lit(sweep_lock_key)})`.execute(trx)
    const ids = await this.candidates(trx)
    if (ids.length === 0) return 0
    const fresh = await claim(trx, ids, bankNow(this.clock))
    const movements = (await movementsOf(trx, fresh)).sort((a, b) =>
      a.created_at.getTime() - b.created_at.getTime() || (a.seq < b.seq ? -1 : 1))
    const rules = await enabledRules(trx)
    const histories = await historiesOf(trx, movements)
    for (const m of movements) {
      const history = histories.get(m.account_id)!.filter((r) => r.seq <= m.seq
        && r.seq > m.seq - BigInt(history_rows_max))
      const hits = evaluate({ movement: m, history, account_created_at: m.account_created_at,
        rules })
      for (const hit of hits) {
        const opened = await this.record(trx, m, hit, rules[hit.rule]!)
        if (opened) report.alerts_opened++
        else report.alerts_joined++
      }
    }
    report.evaluated += fresh.length
    return ids.length
  }

  /** Postings after the sweep's place (and the overlap), and recent Pending payouts. */
  private async candidates(trx: Transaction<Database>): Promise<string[]> {
    const limit = monitoring_sweep_limits.batch_max
    const cursor = await trx.selectFrom('monitoring_cursor').select('postings_id')
      .where('id', '=', 1).forUpdate().executeTakeFirstOrThrow()
    const from = BigInt(cursor.postings_id) - BigInt(monitoring_sweep_limits.overlap_ids)
    const { rows: [top] } = await sql<{ id: string | null }>`
      select max(id) as id from postings`.execute(trx)
    const hi = top?.id ?? '0'
    const { rows: posted } = await sql<{ id: string; tx_id: string }>`
      select p.id, p.tx_id from postings as p
      where p.id > ${from < 0n ? 0n : from} and p.id <= ${hi} and p.account_id is not null
        and p.tx_id is not null
        and not exists (select 1 from monitoring_evaluated as e where e.tx_id = p.tx_id)
      order by p.id limit ${limit}`.execute(trx)
    const place = posted.length === limit ? posted.at(-1)!.id : hi
    if (BigInt(place) > BigInt(cursor.postings_id)) {
      await trx.updateTable('monitoring_cursor').set({ postings_id: String(place) })
        .where('id', '=', 1).execute()
    }
    const since = new Date(bankNow(this.clock).getTime()
      - monitoring_sweep_limits.pending_days * 86_400_000)
    const { rows: pending } = await sql<{ id: string }>`
      select t.id from transactions as t
      where t.status = 'Pending' and t.tx_payment_type in ('EFT', 'RTC')
        and t.created_at >= ${since}
        and not exists (select 1 from monitoring_evaluated as e where e.tx_id = t.id)
      limit ${limit}`.execute(trx)
    return [...new Set([...posted.map((r) => r.tx_id), ...pending.map((r) => r.id)])]
  }

  /** Joins the hit to an open alert of its rule and account, or opens one; true: opened. */
  private async record(trx: Transaction<Database>, m: Candidate, hit: RuleHit,
      params: Record<string, number>): Promise<boolean> {
    // The customer's open case is locked first, as a decision locks it before its alerts: a
    // sweep and a decision never wait on each other's locks in a circle.
    const active = await lockOpenCase(trx, m.entity_id)
    const since = new Date(m.created_at.getTime() - hit.window_ms)
    const open = hit.window_ms === 0 ? undefined : await trx.selectFrom('monitoring_alerts')
      .select('id').where('account_id', '=', m.account_id).where('rule', '=', hit.rule)
      .where('status', '=', 'open').where('last_tx_at', '>=', since)
      .orderBy('seq', 'desc').limit(1).forUpdate().executeTakeFirst()
    if (open) {
      await linkTransactions(trx, open.id, hit.tx_ids)
      await trx.updateTable('monitoring_alerts')
        .set({ last_tx_at: sql`greatest(last_tx_at, ${m.created_at})` })
        .where('id', '=', open.id).execute()
      return false
    }
    const now = onPartnerClock(m.partner_id, () => this.clock.now())
    const caseId = active ?? await newCase(trx, m, now)
    const id = randomUUID()
    await trx.insertInto('monitoring_alerts').values({
      id, case_id: caseId, partner_id: m.partner_id, entity_id: m.entity_id,
      account_id: m.account_id, rule: hit.rule, params: JSON.stringify(params),
      detail: hit.detail, status: 'open', opened_at: now, last_tx_at: m.created_at,
      closed_at: null,
    }).execute()
    await linkTransactions(trx, id, hit.tx_ids)
    return true
  }
}

/** Marks the movements evaluated; answers those no sweep had evaluated before. */
async function claim(trx: Transaction<Database>, ids: string[], now: Date): Promise<string[]> {
  const rows = await trx.insertInto('monitoring_evaluated')
    .values(ids.map((tx_id) => ({ tx_id, evaluated_at: now })))
    .onConflict((oc) => oc.column('tx_id').doNothing())
    .returning('tx_id').execute()
  return rows.map((row) => row.tx_id)
}

const movement_columns = sql`t.id, t.seq, t.created_at, t.tx_type, t.status, t.amount,
  t.credit, t.debit, t.recipient_account, t.recipient_branch`

type RawMovement = Omit<MovementRow, 'seq' | 'amount' | 'credit' | 'debit'> & {
  seq: string | bigint; amount: string | bigint; credit: string | bigint; debit: string | bigint }

function movementOf<T extends RawMovement>(row: T): T & MovementRow {
  return { ...row, seq: BigInt(row.seq), amount: BigInt(row.amount), credit: BigInt(row.credit),
    debit: BigInt(row.debit), created_at: new Date(row.created_at) }
}

async function movementsOf(trx: Transaction<Database>, ids: string[]): Promise<Candidate[]> {
  if (ids.length === 0) return []
  const { rows } = await sql<RawMovement & { partner_id: string; account_id: string
    entity_id: string; account_created_at: Date }>`
    select ${movement_columns}, t.partner_id, t.account_id, a.entity_id,
      a.created_at as account_created_at
    from transactions as t join accounts as a on a.id = t.account_id
    where t.id in (${sql.join(ids)})`.execute(trx)
  return rows.map((row) => ({ ...movementOf(row),
    account_created_at: new Date(row.account_created_at) }))
}

/**
 * Each account's rows the batch's movements need, by seq: from `history_rows_max` rows before
 * its first movement of the batch up to its last, in one statement (the ledger's index of an
 * account's rows).
 */
async function historiesOf(trx: Transaction<Database>,
    movements: Candidate[]): Promise<Map<string, MovementRow[]>> {
  const ranges = new Map<string, { lo: bigint; hi: bigint }>()
  for (const m of movements) {
    const range = ranges.get(m.account_id)
    ranges.set(m.account_id, { lo: range && range.lo < m.seq ? range.lo : m.seq,
      hi: range && range.hi > m.seq ? range.hi : m.seq })
  }
  const histories = new Map<string, MovementRow[]>([...ranges.keys()].map((id) => [id, []]))
  if (ranges.size === 0) return histories
  const values = [...ranges].map(([id, r]) =>
    sql`(${id}::uuid, ${r.lo - BigInt(history_rows_max)}::bigint, ${r.hi}::bigint)`)
  const { rows } = await sql<RawMovement & { account_id: string }>`
    select ${movement_columns}, t.account_id
    from (values ${sql.join(values)}) as r (account_id, lo, hi)
    join transactions as t on t.account_id = r.account_id and t.seq > r.lo and t.seq <= r.hi
    order by t.account_id, t.seq`.execute(trx)
  for (const row of rows) histories.get(row.account_id)!.push(movementOf(row))
  return histories
}

/** The stored parameters of the enabled rules (a row that fails its schema is skipped). */
export async function enabledRules(db: Kysely<Database>): Promise<Partial<RuleParams>> {
  const rows = await db.selectFrom('monitoring_rules').selectAll().where('enabled', '=', true)
    .execute()
  const rules: Partial<Record<MonitoringRule, unknown>> = {}
  for (const row of rows) {
    const parsed = ruleParams[row.rule]?.safeParse(row.params)
    if (parsed?.success) rules[row.rule] = parsed.data
  }
  return rules as Partial<RuleParams>
}

async function linkTransactions(trx: Transaction<Database>, alertId: string,
    txIds: string[]): Promise<void> {
  await trx.insertInto('monitoring_alert_transactions')
    .values(txIds.map((tx_id) => ({ alert_id: alertId, tx_id })))
    .onConflict((oc) => oc.columns(['alert_id', 'tx_id']).doNothing()).execute()
}

/** The customer's open case, locked; undefined when it has none. */
async function lockOpenCase(trx: Transaction<Database>,
    entityId: string): Promise<string | undefined> {
  const open = await trx.selectFrom('monitoring_cases').select('id')
    .where('entity_id', '=', entityId)
    .where('status', 'in', ['open', 'escalated', 'report_pending'])
    .forUpdate().executeTakeFirst()
  return open?.id
}

/** A new open case of the customer (one sweep at a time: none was open). */
async function newCase(trx: Transaction<Database>, m: Candidate, now: Date): Promise<string> {
  const id = randomUUID()
  await trx.insertInto('monitoring_cases').values({
    id, partner_id: m.partner_id, entity_id: m.entity_id, status: 'open', assigned_to: null,
    opened_at: now, updated_at: now, decision: null, decision_reason: null, decided_by: null,
    decided_at: null, approval_id: null,
  }).execute()
  return id
}
