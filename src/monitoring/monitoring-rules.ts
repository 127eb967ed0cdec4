import { fromSast, toSast } from '../calendar/sa-calendar.ts'
import type { MonitoringRule, RuleParams } from './monitoring-rules-contract.ts'

// The rules themselves: pure functions of one money movement and its account's recent rows
// (the last `history_rows_max` rows up to and including the movement, by the account's own
// sequence). Windows are measured back from the movement's own time (the clock that stamped
// it: a sandbox partner's own); the daily velocity window is the movement's SAST day.

/** A row of an account's history, as the rules read it. */
export interface MovementRow {
  id: string
  seq: bigint
  created_at: Date
  tx_type: string
  status: string
  amount: bigint
  credit: bigint
  debit: bigint
  recipient_account: string
  recipient_branch: string
}

/** What a rule found: the rows involved, a sentence, and the window it looked at. */
export interface RuleHit {
  rule: MonitoringRule
  detail: string
  tx_ids: string[]
  window_ms: number
}

/** The rows money moves by for the customer (not fees, reversals or refunds). */
export const customer_movement_types = ['transfer', 'bulk_payment', 'debit_order', 'card',
  'incoming', 'deposit'] as const
const counted = new Set<string>(customer_movement_types)
const live = new Set(['Pending', 'Successful'])

/** The most rows of an account's history one evaluation reads. */
export const history_rows_max = 500

const hour_ms = 3_600_000
const day_ms = 24 * hour_ms

export interface Evaluation {
  movement: MovementRow
  /** Rows of the account up to and including the movement, by seq. */
  history: MovementRow[]
  account_created_at: Date
  rules: Partial<RuleParams>
}

/** Every enabled rule's hit for one movement. */
export function evaluate(e: Evaluation): RuleHit[] {
  if (!isCustomerMovement(e.movement)) return []
  const rows = e.history.filter(isCustomerMovement)
  const hits: Array<RuleHit | undefined> = [
    e.rules.velocity && velocity(e.movement, rows, e.rules.velocity),
    e.rules.structuring && structuring(e.movement, rows, e.rules.structuring),
    e.rules.rapid_in_out && rapidInOut(e.movement, rows, e.rules.rapid_in_out),
    e.rules.new_payee_large && newPayeeLarge(e.movement, e.history, e.rules.new_payee_large),
    e.rules.dormant_active && dormantActive(e, rows, e.rules.dormant_active),
  ]
  return hits.filter((hit): hit is RuleHit => hit !== undefined)
}

function isCustomerMovement(row: MovementRow): boolean {
  return counted.has(row.tx_type) && live.has(row.status)
}

const isOut = (row: MovementRow) => row.debit > 0n
const isIn = (row: MovementRow) => row.credit > 0n

/** The rows from `since` up to the movement (inclusive). */
function within(rows: MovementRow[], m: MovementRow, since: number): MovementRow[] {
  return rows.filter((r) => r.seq <= m.seq && r.created_at.getTime() >= since)
}

const sum = (rows: MovementRow[], side: 'debit' | 'credit') =>
  rows.reduce((total, r) => total + r[side], 0n)

const rand = (cents: bigint | number) => `R${(Number(cents) / 100).toFixed(2)}`

function velocity(m: MovementRow, rows: MovementRow[],
    p: RuleParams['velocity']): RuleHit | undefined {
  if (!isOut(m)) return undefined
  const at = m.created_at.getTime()
  const hour = within(rows, m, at - hour_ms).filter(isOut)
  const day = within(rows, m, fromSast(toSast(m.created_at).date).getTime()).filter(isOut)
  const over = (list: MovementRow[], countMax: number, amountMax: number, span: string) => {
    const total = sum(list, 'debit')
    if (list.length <= countMax && total <= BigInt(amountMax)) return undefined
    return `${list.length} payments out of ${rand(total)} in the ${span} (at most ${countMax} ` +
      `and ${rand(amountMax)})`
  }
  const inHour = over(hour, p.count_per_hour, p.amount_per_hour_cents, 'last hour')
  if (inHour) return { rule: 'velocity', detail: inHour, tx_ids: ids(hour), window_ms: hour_ms }
  const inDay = over(day, p.count_per_day, p.amount_per_day_cents, 'SAST day')
  if (inDay) return { rule: 'velocity', detail: inDay, tx_ids: ids(day), window_ms: day_ms }
  return undefined
}

function structuring(m: MovementRow, rows: MovementRow[],
    p: RuleParams['structuring']): RuleHit | undefined {
  const threshold = BigInt(p.threshold_cents)
  const floor = threshold * BigInt(p.band_pct) / 100n
  const inBand = (r: MovementRow) => isOut(r) && r.amount >= floor && r.amount < threshold
  if (!inBand(m)) return undefined
  const window_ms = p.window_minutes * 60_000
  const band = within(rows, m, m.created_at.getTime() - window_ms).filter(inBand)
  if (band.length < p.count) return undefined
  return { rule: 'structuring', window_ms, tx_ids: ids(band),
    detail: `${band.length} payments out between ${rand(floor)} and just under ` +
      `${rand(threshold)} within ${p.window_minutes} minutes` }
}

function rapidInOut(m: MovementRow, rows: MovementRow[],
    p: RuleParams['rapid_in_out']): RuleHit | undefined {
  if (!isOut(m)) return undefined
  const window_ms = p.window_hours * hour_ms
  const recent = within(rows, m, m.created_at.getTime() - window_ms)
  const ins = recent.filter(isIn)
  const received = sum(ins, 'credit')
  if (received < BigInt(p.min_in_cents)) return undefined
  const outs = recent.filter((r) => isOut(r) && r.seq > ins[0]!.seq)
  const paid = sum(outs, 'debit')
  if (paid * 100n < received * BigInt(p.out_pct)) return undefined
  return { rule: 'rapid_in_out', window_ms, tx_ids: ids([...ins, ...outs]),
    detail: `${rand(received)} received and ${rand(paid)} paid out again within ` +
      `${p.window_hours} hours` }
}

function newPayeeLarge(m: MovementRow, history: MovementRow[],
    p: RuleParams['new_payee_large']): RuleHit | undefined {
  if (!isOut(m) || m.recipient_account === '' || m.amount < BigInt(p.amount_cents)) {
    return undefined
  }
  const paidBefore = history.some((r) => r.seq < m.seq && isOut(r)
    && r.recipient_account === m.recipient_account && r.recipient_branch === m.recipient_branch)
  if (paidBefore) return undefined
  return { rule: 'new_payee_large', window_ms: 0, tx_ids: [m.id],
    detail: `${rand(m.amount)} to ${m.recipient_account} (branch ${m.recipient_branch || '-'}), ` +
      'a recipient this account has not paid before' }
}

function dormantActive(e: Evaluation, rows: MovementRow[],
    p: RuleParams['dormant_active']): RuleHit | undefined {
  const m = e.movement
  if (m.amount < BigInt(p.amount_cents)) return undefined
  const idle_ms = p.inactive_days * day_ms
  const previous = rows.filter((r) => r.seq < m.seq).at(-1)
  const since = previous?.created_at ?? e.account_created_at
  if (m.created_at.getTime() - since.getTime() < idle_ms) return undefined
  const days = Math.floor((m.created_at.getTime() - since.getTime()) / day_ms)
  return { rule: 'dormant_active', window_ms: 0, tx_ids: [m.id],
    detail: `${rand(m.amount)} ${isOut(m) ? 'out' : 'in'} after ${days} days without a ` +
      `movement${previous ? '' : ' since the account opened'}` }
}

function ids(rows: MovementRow[]): string[] {
  return rows.map((r) => r.id)
}
