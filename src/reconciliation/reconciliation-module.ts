import type { Module } from '../module.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'
import { Reconciliation, type ReconciliationReport } from './reconciliation-service.ts'
import type { ReconciliationTables } from './reconciliation-tables.ts'
import { railStatementsMigration } from './reconciliation-migration.ts'
import type { StatementRow } from './reconciliation-store.ts'

/** What the module builds: its members of the bank's Services. */
export interface ReconciliationServices {
  /** The clearing house's statements kept, and a day of the settlement account reconciled. */
  reconciliation: Reconciliation
}

const why = 'a read model: reconciliation matches the statements against the rail\'s and the ' +
  'ledger\'s records of the same payments, by their own keys'

// Reconciliation: the clearing house's camt.053/camt.054 statements of the bank's settlement
// account, recorded as the rail applies them, matched on demand against the bank's records.
export const reconciliationModule: Module<ReconciliationServices, ReconciliationTables> = {
  name: 'reconciliation',
  needs: ['rails', 'incoming', 'ledger'],
  reads: {
    rail_submissions: why,
    rail_messages: why,
    incoming_payments: why,
    transactions: why,
  },
  services: (s, { db, clock, config }) => {
    const reconciliation = new Reconciliation(db, clock, config.rail.settlementAccount)
    s.isoRail.handleStatements(reconciliation)
    return { reconciliation }
  },
  migrations: { '0038_rail_statements': railStatementsMigration },
  endpoints: (s) => [
    endpoint(contract.reconciliation.railsStatements, async (r) => ({
      statements: (await s.reconciliation.statements(r.limit ?? 50, r.before))
        .map(statementReply),
    })),
    endpoint(contract.reconciliation.railsReconcile,
      async (r) => reportReply(await s.reconciliation.reconcile(r.date))),
  ],
}

function statementReply(row: StatementRow) {
  return {
    ...row,
    kind: row.kind as 'camt.053.001.08' | 'camt.054.001.08',
    opening_balance: row.opening_balance === null ? null : String(row.opening_balance),
    closing_balance: row.closing_balance === null ? null : String(row.closing_balance),
    recorded_at: row.recorded_at.toISOString(),
  }
}

function reportReply(report: ReconciliationReport) {
  const side = (s: { count: number; sum: bigint }) => ({ count: s.count, sum: String(s.sum) })
  const totals = (t: ReconciliationReport['ledger_totals']) =>
    ({ credits: side(t.credits), debits: side(t.debits) })
  return {
    ...report,
    statements: report.statements.map(statementReply),
    statement_totals: totals(report.statement_totals),
    ledger_totals: totals(report.ledger_totals),
    matched: side(report.matched),
    breaks: report.breaks.map((b) => ({ ...b,
      statement_amount: b.statement_amount === null ? null : String(b.statement_amount),
      ledger_amount: b.ledger_amount === null ? null : String(b.ledger_amount) })),
  }
}
