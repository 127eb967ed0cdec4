import { sql, type Insertable, type Kysely, type Selectable } from 'kysely'
import type { Database } from '../schema.ts'
import { addDays, fromSast, toSast } from '../calendar/sa-calendar.ts'
import { unnestRows } from '../db/speed/arrays.ts'
import type { RailStatementEntriesTable, RailStatementsTable } from './reconciliation-tables.ts'

// The reconciliation's queries: the statements it keeps, and the bank's side of the
// settlement account (the payments its records say moved through it), by day or by the
// end-to-end ids a statement names.

type Db = Kysely<Database>

export type StatementRow = Selectable<RailStatementsTable>
export type EntryRow = Selectable<RailStatementEntriesTable>

/** One movement of the settlement account as the bank's records have it. */
export interface BankItem {
  /** payout: the bank paid out (debit); return: a payout came back (credit); incoming: another
   * bank paid in (credit); incoming_return: the bank sent an incoming payment back (debit). */
  kind: 'payout' | 'return' | 'incoming' | 'incoming_return'
  credit_debit: 'CRDT' | 'DBIT'
  end_to_end_id: string
  /** The ledger transaction it moved (null: a credit returned before any booking). */
  tx_id: string | null
  amount: bigint
  /** The day (SAST) the bank's records put it on. */
  day: string
}

/** How many ids one lookup names at most. */
const lookup_page = 5_000

export async function insertStatement(trx: Db,
    row: Insertable<RailStatementsTable>): Promise<void> {
  await trx.insertInto('rail_statements').values(row).execute()
}

export async function insertEntries(trx: Db,
    rows: Array<Insertable<RailStatementEntriesTable>>): Promise<void> {
  if (rows.length > 0) await trx.insertInto('rail_statement_entries').values(rows).execute()
}

/** The statements of a day, of one kind, oldest recorded first. */
export function statementsOf(db: Db, day: string, kind: string): Promise<StatementRow[]> {
  return db.selectFrom('rail_statements').selectAll()
    .where('statement_date', '=', day).where('kind', '=', kind)
    .orderBy('recorded_at').orderBy('message_id').execute()
}

/** The latest statements, newest day first. */
export function latestStatements(db: Db, limit: number, before?: string): Promise<StatementRow[]> {
  let query = db.selectFrom('rail_statements').selectAll()
  if (before !== undefined) query = query.where('statement_date', '<', before)
  return query.orderBy('statement_date', 'desc').orderBy('recorded_at', 'desc')
    .limit(limit).execute()
}

export function entriesOf(db: Db, messageIds: string[]): Promise<EntryRow[]> {
  if (messageIds.length === 0) return Promise.resolve([])
  return db.selectFrom('rail_statement_entries').selectAll()
    .where('message_id', 'in', messageIds)
    .orderBy('message_id').orderBy('position').execute()
}

/** The bank's movements of the settlement account its records put on `day`. */
export async function bankItemsOf(db: Db, day: string): Promise<BankItem[]> {
  const from = fromSast(day)
  const to = fromSast(addDays(day, 1))
  const payouts = await db.selectFrom('rail_submissions as s')
    .innerJoin('rail_messages as m', (join) => join.onRef('m.message_id', '=', 's.message_id')
      .on('m.direction', '=', 'out'))
    .select(['s.tx_id', 's.end_to_end_id', 's.amount'])
    .where('m.settlement_date', '=', day).where('s.status', 'in', ['ACSC', 'ACCC']).execute()
  const returns = await db.selectFrom('rail_submissions')
    .select(['tx_id', 'end_to_end_id', 'amount', 'returned_at'])
    .where('returned_at', '>=', from).where('returned_at', '<', to).execute()
  const credits = await db.selectFrom('incoming_payments')
    .select(['tx_id', 'end_to_end_id', 'amount', 'status', 'settlement_date', 'received_at'])
    .where((eb) => eb.or([eb('settlement_date', '=', day), eb.and([
      eb('status', '=', 'returned'), eb('received_at', '>=', from), eb('received_at', '<', to)])]))
    .execute()
  return [
    ...payouts.map((p) => item('payout', p.end_to_end_id, p.tx_id, p.amount, day)),
    ...returns.map((r) => item('return', r.end_to_end_id, r.tx_id, r.amount, day)),
    ...credits.flatMap((c) => incomingItems(c).filter((i) => i.day === day)),
  ]
}

/** The bank's movements that carry one of the end-to-end ids, whatever their day. */
export async function bankItemsNamed(db: Db, endToEndIds: string[]): Promise<BankItem[]> {
  const found: BankItem[] = []
  for (let start = 0; start < endToEndIds.length; start += lookup_page) {
    const ids = endToEndIds.slice(start, start + lookup_page)
    const sent = await db.selectFrom('rail_submissions as s')
      .innerJoin('rail_messages as m', (join) => join.onRef('m.message_id', '=', 's.message_id')
        .on('m.direction', '=', 'out'))
      .select(['s.tx_id', 's.end_to_end_id', 's.amount', 's.status', 's.returned_at',
        'm.settlement_date', 'm.created_at'])
      .where('s.end_to_end_id', 'in', ids).execute()
    for (const s of sent) {
      if (s.status !== 'ACSC' && s.status !== 'ACCC') continue
      found.push(item('payout', s.end_to_end_id, s.tx_id, s.amount,
        s.settlement_date ?? sastDay(s.created_at)))
      if (s.returned_at !== null) {
        found.push(item('return', s.end_to_end_id, s.tx_id, s.amount, sastDay(s.returned_at)))
      }
    }
    const credits = await db.selectFrom('incoming_payments')
      .select(['tx_id', 'end_to_end_id', 'amount', 'status', 'settlement_date', 'received_at'])
      .where('end_to_end_id', 'in', ids).execute()
    for (const c of credits) found.push(...incomingItems(c))
  }
  return found
}

/** Those of the movements a statement of another day than `day` carries, by key. */
export async function entriesElsewhere(db: Db, items: BankItem[], day: string):
    Promise<Set<string>> {
  const found = new Set<string>()
  for (let start = 0; start < items.length; start += lookup_page) {
    const page = items.slice(start, start + lookup_page)
    const rows = await sql<{ end_to_end_id: string; credit_debit: string }>`
      select distinct e.end_to_end_id, e.credit_debit
      from rail_statement_entries as e
      join ${unnestRows(page.map((i) => ({ end_to_end_id: i.end_to_end_id,
        credit_debit: i.credit_debit })), [['end_to_end_id', 'text'], ['credit_debit', 'text']])}
        on e.end_to_end_id = v.end_to_end_id and e.credit_debit = v.credit_debit
      join rail_statements as s on s.message_id = e.message_id
      where e.status = 'BOOK' and s.statement_date <> ${day}`
      .execute(db)
    for (const row of rows.rows) found.add(`${row.credit_debit}:${row.end_to_end_id}`)
  }
  return found
}

/** The ledger's transactions of those ids: status and amount. */
export async function ledgerTransactions(db: Db, txIds: string[]):
    Promise<Map<string, { status: string; amount: bigint }>> {
  const found = new Map<string, { status: string; amount: bigint }>()
  for (let start = 0; start < txIds.length; start += lookup_page) {
    const rows = await db.selectFrom('transactions').select(['id', 'status', 'amount'])
      .where('id', 'in', txIds.slice(start, start + lookup_page)).execute()
    for (const row of rows) found.set(row.id, { status: row.status, amount: BigInt(row.amount) })
  }
  return found
}

function item(kind: BankItem['kind'], endToEndId: string, txId: string | null,
    amount: bigint | string, day: string): BankItem {
  const credit_debit = kind === 'payout' || kind === 'incoming_return' ? 'DBIT' : 'CRDT'
  return { kind, credit_debit, end_to_end_id: endToEndId, tx_id: txId, amount: BigInt(amount),
    day }
}

/** An incoming payment: its credit, and its debit when the bank sent it back. */
function incomingItems(c: { tx_id: string | null; end_to_end_id: string;
    amount: bigint | string; status: string; settlement_date: string; received_at: Date }):
    BankItem[] {
  const credit = item('incoming', c.end_to_end_id, c.tx_id, c.amount, c.settlement_date)
  if (c.status !== 'returned') return [credit]
  return [credit, item('incoming_return', c.end_to_end_id, null, c.amount,
    sastDay(c.received_at))]
}

function sastDay(at: Date): string {
  return toSast(at).date
}
