import { sql, type Kysely, type Transaction } from 'kysely'
import { bankNow, type Clock } from '../clock.ts'
import type { JobRunner } from '../jobs/job-runner.ts'
import type { Database } from '../schema.ts'
import { ruleParams, type MonitoringRule, type RuleParams } from './monitoring-rules-contract.ts'
import { customer_movement_types, evaluate, history_rows_max,
  type MovementRow } from './monitoring-rules.ts'
import { monitoring_sweep_limits } from './monitoring-limits.ts'
import { claimPending, pendingPayouts, pruneClaims, readPostings } from './monitoring-ledger-read.ts'
import { HitRecorder, type Candidate } from './monitoring-recorder.ts'

// Transaction monitoring runs off the payment path (RULINGS "Financial crime controls").
// Transfers announce nothing through the outbox (an event per payment would be one more write
// in the ledger writer's transaction), so the sweep reads the ledger behind it, through
// indexes the ledger keeps anyway, and adds no work to a payment (monitoring-ledger-read.ts):
//
//  - every posted movement: the postings after the sweep's place (`postings.id`, their
//    primary key), and those a range read earlier missed because their transaction was still
//    in progress then (the read's snapshot says which);
//  - payouts taken and not yet settled (an EFT waiting for its clearing cycle): the ledger's
//    index of Pending rows, of the last days, once per sweep.
//
// Each movement is evaluated once, by the rules' stored parameters over the account's recent
// rows (read once per batch for all the account's movements in it). A hit joins the open
// alert of the same rule and account when that alert's last movement is within the rule's
// window (ten payments of a structuring pattern and the eleventh are one alert); otherwise it
// opens an alert in the customer's open case, or a new case (monitoring-recorder.ts). The
// `monitoring.sweep` job runs it every few seconds of bank time, one sweep at a time across
// instances (a transaction-scoped advisory lock); `ops.monitoring.run` runs it at once.
//
// Clocks: the rules' windows are measured between movements, on the times the ledger stamped
// them (in the sandbox, the partner's own clock: movements of one account are all on its
// partner's clock). Alerts and cases are the bank's work queue: opened, decided and aged on the
// bank's clock (bankNow), like the age filters of the lists and the oldest-alert metric, so
// an alert's age never depends on how far a sandbox partner moved its clock.

export const monitoring_sweep_job_kind = 'monitoring.sweep'

const sweep_lock_key = 7_260_046

export interface SweepReport {
  evaluated: number
  alerts_opened: number
  alerts_joined: number
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
    const since = new Date(bankNow(this.clock).getTime()
      - monitoring_sweep_limits.pending_days * 86_400_000)
    await pruneClaims(this.db, since)
    const pending = await pendingPayouts(this.db, since, monitoring_sweep_limits.pending_max)
    for (;;) {
      const payouts = pending.splice(0, monitoring_sweep_limits.batch_max)
      const more = await this.db.transaction().execute((trx) =>
        this.batch(trx, payouts, report))
      if (!more && pending.length === 0) return report
    }
  }

  /** One batch: the next postings and `payouts`; true when postings are left to read. */
  private async batch(trx: Transaction<Database>, payouts: string[],
      report: SweepReport): Promise<boolean> {
    await sql`select pg_advisory_xact_lock(${sql.lit(sweep_lock_key)})`.execute(trx)
    const now = bankNow(this.clock)
    const posted = await readPostings(trx, monitoring_sweep_limits.batch_max)
    const fresh = [...posted.txIds, ...await claimPending(trx, payouts, now)]
    const movements = (await movementsOf(trx, fresh)).filter(isCustomerMovement).sort((a, b) =>
      a.created_at.getTime() - b.created_at.getTime() || (a.seq < b.seq ? -1 : 1))
    if (movements.length > 0) await this.evaluateAll(trx, movements, now, report)
    report.evaluated += fresh.length
    return posted.more
  }

  /** Evaluates the batch's movements in order and records their hits. */
  private async evaluateAll(trx: Transaction<Database>, movements: Candidate[], now: Date,
      report: SweepReport): Promise<void> {
    const rules = await enabledRules(trx)
    const histories = await historiesOf(trx, movements)
    const hits = movements.map((m) => {
      const history = histories.get(m.account_id)!.filter((r) => r.seq <= m.seq
        && r.seq > m.seq - BigInt(history_rows_max))
      return evaluate({ movement: m, history, account_created_at: m.account_created_at,
        rules })
    })
    const recorder = new HitRecorder(trx, now)
    await recorder.load(movements.filter((_, i) => hits[i]!.length > 0).map((m) => m.id))
    for (const [i, m] of movements.entries()) {
      for (const hit of hits[i]!) {
        const outcome = await recorder.record(m, hit, rules[hit.rule]!)
        if (outcome === 'opened') report.alerts_opened++
        if (outcome === 'joined') report.alerts_joined++
      }
    }
    await recorder.flush()
  }
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

const counted = new Set<string>(customer_movement_types)
const live = new Set(['Pending', 'Successful'])

/** Whether a rule could fire on it at all (fees, reversals and refunds are not looked at). */
function isCustomerMovement(m: Candidate): boolean {
  return counted.has(m.tx_type) && live.has(m.status)
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
