import type { Insertable, Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import type { Database } from '../schema.ts'
import type { AccountReport, StatementHandler } from '../rails/iso-rail.ts'
import { camt053_message, camt054_message, type AccountEntry } from '../rails/iso20022/camt-read.ts'
import type { RailStatementEntriesTable } from './reconciliation-tables.ts'
import {
  bankItemsNamed, bankItemsOf, entriesElsewhere, entriesOf, insertEntries, insertStatement,
  latestStatements, ledgerTransactions, statementsOf, type BankItem, type EntryRow,
  type StatementRow,
} from './reconciliation-store.ts'

// Reconciliation of the bank's settlement account at the clearing house
// (docs/operators/rails.md, "Reconciliation"). The clearing house's statements (camt.053 at
// the end of a day, camt.054 during it) arrive as inbound rail files and are kept entry by
// entry. A day is reconciled on demand: every booked entry of the day's statement is matched
// by its end-to-end id and direction to a movement the bank's records hold (a payout it
// sent and the clearing house accepted, a payout returned, another bank's credit, a credit
// the bank sent back), with the same amount, whose ledger transaction says the same; every
// movement the bank's records put on the day must be on a statement. What does not match is
// a break, listed for the operators. Nothing is changed by reconciling: a break is for a
// person to look into.

/** Why a statement entry or a movement of the bank's did not reconcile. */
export type BreakKind =
  /** In the statement, and not in the bank's records. */
  | 'not_in_ledger'
  /** In the bank's records for the day, and on no statement. */
  | 'not_in_statement'
  /** In both, with other amounts. */
  | 'amount_differs'
  /** In both, but the ledger's transaction is missing, of another amount or not settled. */
  | 'ledger_differs'
  /** The same payment twice in the day's statement. */
  | 'duplicate_entry'

export interface ReconciliationBreak {
  kind: BreakKind
  credit_debit: 'CRDT' | 'DBIT'
  end_to_end_id: string | null
  tx_id: string | null
  statement_amount: bigint | null
  ledger_amount: bigint | null
  /** The statement entry: its message and place (from 0). */
  message_id: string | null
  position: number | null
  detail: string
}

interface Totals {
  credits: { count: number; sum: bigint }
  debits: { count: number; sum: bigint }
}

export interface ReconciliationReport {
  date: string
  /** What the day was reconciled against: its end-of-day statement, its intraday
   * notifications (no statement yet), or nothing (no statement or notification of the day). */
  source: 'statement' | 'notifications' | 'none'
  statements: StatementRow[]
  /** The booked entries of the statements used. */
  statement_totals: Totals
  /** Entries not booked (pending, information only): not reconciled. */
  not_booked: number
  /** The movements the bank's records put on the day. */
  ledger_totals: Totals
  matched: { count: number; sum: bigint }
  /** Movements of the day the bank holds that another day's statement carries. */
  on_other_days: number
  breaks_count: number
  /** The first breaks (at most `breaks_max`), in statement order, then the bank's. */
  breaks: ReconciliationBreak[]
}

/** How many breaks a report lists (it counts them all). */
export const breaks_max = 1_000

/** How many entries are recorded with one statement. */
const entries_page = 1_000

const expected_status: Record<BankItem['kind'], readonly string[]> = {
  payout: ['Successful', 'Reversed'],
  return: ['Reversed'],
  incoming: ['Successful'],
  incoming_return: [],
}

export class Reconciliation implements StatementHandler {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    /** The bank's settlement account at the clearing house: the account statements are of. */
    private readonly settlementAccount: string,
  ) {}

  refusal(report: AccountReport): string | undefined {
    const account = report.header.account_id
    if (account === this.settlementAccount) return undefined
    return `the ${report.message} reports account ${account}, not the bank's settlement ` +
      `account ${this.settlementAccount} (BANK_SETTLEMENT_ACCOUNT)`
  }

  async record(trx: Kysely<Database>, messageId: string, report: AccountReport): Promise<void> {
    const statement = report.message === camt053_message ? report.header : undefined
    await insertStatement(trx, {
      message_id: messageId,
      kind: report.message,
      report_id: report.header.report_id,
      account_id: report.header.account_id,
      statement_date: (statement?.closing_balance.date ?? report.header.created_at).slice(0, 10),
      opening_balance: statement?.opening_balance.amount ?? null,
      closing_balance: statement?.closing_balance.amount ?? null,
      entry_count: report.opened.count,
      issued_at: report.header.created_at,
      recorded_at: this.clock.now(),
    })
    let position = 0
    for await (const chunk of report.opened.items(entries_page)) {
      await insertEntries(trx, chunk.map((entry) => entryRow(messageId, position++, entry)))
    }
  }

  /** The latest statements, newest day first (`before`: only days before it). */
  statements(limit: number, before?: string): Promise<StatementRow[]> {
    return latestStatements(this.db, limit, before)
  }

  /** Reconciles a day (`YYYY-MM-DD`, South African time); changes nothing. */
  async reconcile(date: string): Promise<ReconciliationReport> {
    const { source, statements } = await this.statementsFor(date)
    const used = statements.map((s) => s.message_id)
    const entries = await entriesOf(this.db, used)
    const booked = entries.filter((e) => e.status === 'BOOK')
    const named = await bankItemsNamed(this.db, [...new Set(booked
      .flatMap((e) => (e.end_to_end_id === null ? [] : [e.end_to_end_id])))])
    const ofDay = await bankItemsOf(this.db, date)
    const ledger = await ledgerTransactions(this.db, [...new Set([...named, ...ofDay]
      .flatMap((i) => (i.tx_id === null ? [] : [i.tx_id])))])
    const matching = new Matching(named, ledger)
    for (const entry of booked) matching.entry(entry)
    const unmatched = ofDay.filter((i) => !matching.used.has(keyOf(i)))
    const elsewhere = await entriesElsewhere(this.db, unmatched, date)
    let onOtherDays = 0
    for (const item of unmatched) {
      if (elsewhere.has(keyOf(item))) onOtherDays++
      else matching.missing(item, source)
    }
    return {
      date, source, statements,
      statement_totals: totals(booked.map((e) => ({ credit_debit: e.credit_debit,
        amount: BigInt(e.amount) }))),
      not_booked: entries.length - booked.length,
      ledger_totals: totals(ofDay),
      matched: matching.matched,
      on_other_days: onOtherDays,
      breaks_count: matching.breaks_count,
      breaks: matching.breaks,
    }
  }

  /** The day's end-of-day statement (the latest, if sent again), else its notifications. */
  private async statementsFor(date: string): Promise<{ source: ReconciliationReport['source'];
      statements: StatementRow[] }> {
    const statements = await statementsOf(this.db, date, camt053_message)
    const latest = statements.at(-1)
    if (latest) return { source: 'statement', statements: [latest] }
    const notifications = await statementsOf(this.db, date, camt054_message)
    return { source: notifications.length > 0 ? 'notifications' : 'none',
      statements: notifications }
  }
}

/** Matches statement entries to the bank's movements, collecting the breaks. */
class Matching {
  readonly used = new Set<string>()
  readonly matched = { count: 0, sum: 0n }
  readonly breaks: ReconciliationBreak[] = []
  breaks_count = 0
  private readonly byKey = new Map<string, BankItem>()

  constructor(items: BankItem[],
      private readonly ledger: Map<string, { status: string; amount: bigint }>) {
    for (const item of items) this.byKey.set(keyOf(item), item)
  }

  entry(entry: EntryRow): void {
    const amount = BigInt(entry.amount)
    const at = { credit_debit: entry.credit_debit, end_to_end_id: entry.end_to_end_id,
      statement_amount: amount, message_id: entry.message_id, position: entry.position }
    if (entry.end_to_end_id === null || entry.reversal) {
      this.add({ ...at, kind: 'not_in_ledger', tx_id: null, ledger_amount: null,
        detail: entry.reversal ? 'a reversal entry: the bank makes none of its own'
          : 'the entry names no end-to-end id to match by' })
      return
    }
    const key = `${entry.credit_debit}:${entry.end_to_end_id}`
    const item = this.byKey.get(key)
    if (item === undefined) {
      this.add({ ...at, kind: 'not_in_ledger', tx_id: null, ledger_amount: null,
        detail: 'no payment of the bank moved this way with this end-to-end id' })
      return
    }
    const base = { ...at, tx_id: item.tx_id, ledger_amount: item.amount }
    if (this.used.has(key)) {
      this.add({ ...base, kind: 'duplicate_entry',
        detail: 'the payment is on the statement twice' })
      return
    }
    this.used.add(key)
    if (item.amount !== amount) {
      this.add({ ...base, kind: 'amount_differs', detail: `the statement says ${amount} cents, ` +
        `the bank's record ${item.amount}` })
      return
    }
    const differs = this.ledgerDiffers(item)
    if (differs !== undefined) {
      this.add({ ...base, kind: 'ledger_differs', detail: differs })
      return
    }
    this.matched.count++
    this.matched.sum += amount
  }

  /** A movement the bank holds for the day that no statement carries. */
  missing(item: BankItem, source: ReconciliationReport['source']): void {
    this.add({ kind: 'not_in_statement', credit_debit: item.credit_debit,
      end_to_end_id: item.end_to_end_id, tx_id: item.tx_id, statement_amount: null,
      ledger_amount: item.amount, message_id: null, position: null,
      detail: `${describe(item)} is on no ${source === 'none' ? 'statement (none arrived for ' +
        'the day)' : 'statement'}` })
  }

  private ledgerDiffers(item: BankItem): string | undefined {
    if (item.tx_id === null) return undefined
    const tx = this.ledger.get(item.tx_id)
    if (tx === undefined) return `the ledger has no transaction ${item.tx_id}`
    if (tx.amount !== item.amount) {
      return `the ledger's transaction is of ${tx.amount} cents, the rail's record ${item.amount}`
    }
    if (!expected_status[item.kind].includes(tx.status)) {
      return `${describe(item)}: its ledger transaction is ${tx.status}`
    }
    return undefined
  }

  private add(found: ReconciliationBreak): void {
    this.breaks_count++
    if (this.breaks.length < breaks_max) this.breaks.push(found)
  }
}

function keyOf(item: BankItem): string {
  return `${item.credit_debit}:${item.end_to_end_id}`
}

function describe(item: BankItem): string {
  switch (item.kind) {
    case 'payout': return 'a payout the clearing house accepted'
    case 'return': return 'a payout returned'
    case 'incoming': return 'an incoming credit'
    case 'incoming_return': return 'an incoming credit the bank sent back'
  }
}

function totals(items: ReadonlyArray<{ credit_debit: 'CRDT' | 'DBIT'; amount: bigint }>): Totals {
  const found: Totals = { credits: { count: 0, sum: 0n }, debits: { count: 0, sum: 0n } }
  for (const item of items) {
    const side = item.credit_debit === 'CRDT' ? found.credits : found.debits
    side.count++
    side.sum += item.amount
  }
  return found
}

function entryRow(messageId: string, position: number,
    entry: AccountEntry): Insertable<RailStatementEntriesTable> {
  const refs = entry.references[0]
  return {
    message_id: messageId, position, amount: entry.amount, credit_debit: entry.credit_debit,
    reversal: entry.reversal, status: entry.status, booking_date: entry.booking_date,
    entry_reference: entry.entry_reference,
    account_servicer_reference: entry.account_servicer_reference,
    end_to_end_id: refs?.end_to_end_id ?? null, ref_message_id: refs?.message_id ?? null,
    ref_tx_id: refs?.tx_id ?? null,
  }
}
