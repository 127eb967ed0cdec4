import { html, rand, sast, type Html } from './console-html.ts'
import {
  filterForm, param, table, type Column, type Ops, type PageRequest, type Rendered, type Reply,
} from './console-kit.ts'

// Reconciliation of the bank's settlement account (`ops.rails.reconcile`,
// docs/operators/rails.md "Reconciliation"): a day's totals on the statement's side and the
// bank's, what matched, every break listed; and the statements received, newest day first.
// The day is a South African date in the query string; by default the latest statement's
// (or, before any, the day before today).

type Report = Reply<Ops['rails']['reconcile']>
type Break = Report['breaks'][number]
type Statement = Reply<Ops['rails']['statements']>['statements'][number]

const day_pattern = /^\d{4}-\d{2}-\d{2}$/

/** How many received statements the page lists. */
const statements_shown = 30

const break_columns: ReadonlyArray<Column<Break>> = [
  { label: 'Break', cell: (b) => b.kind.replaceAll('_', ' ') },
  { label: 'Way', cell: (b) => (b.credit_debit === 'CRDT' ? 'credit' : 'debit') },
  { label: 'Statement', cell: (b) => (b.statement_amount === null ? '' : rand(b.statement_amount)),
    amount: true },
  { label: 'Bank', cell: (b) => (b.ledger_amount === null ? '' : rand(b.ledger_amount)),
    amount: true },
  { label: 'End-to-end id', cell: (b) => html`<span class="id">${b.end_to_end_id ?? ''}</span>` },
  { label: 'Transaction', cell: (b) => html`<span class="id">${b.tx_id ?? ''}</span>` },
  { label: 'Entry', cell: (b) => (b.message_id === null ? ''
    : html`<span class="id">${b.message_id}</span> #${(b.position ?? 0) + 1}`) },
  { label: 'Why', cell: (b) => b.detail },
]

const statement_columns: ReadonlyArray<Column<Statement>> = [
  { label: 'Day', cell: (s) => html`<a href="/rails/reconciliation?date=${s.statement_date}">${
    s.statement_date}</a>` },
  { label: 'Kind', cell: (s) => s.kind },
  { label: 'Entries', cell: (s) => s.entry_count, amount: true },
  { label: 'Opening', cell: (s) => (s.opening_balance === null ? '' : rand(s.opening_balance)),
    amount: true },
  { label: 'Closing', cell: (s) => (s.closing_balance === null ? '' : rand(s.closing_balance)),
    amount: true },
  { label: 'Received', cell: (s) => sast(s.recorded_at) },
  { label: 'Message', cell: (s) => html`<span class="id">${s.message_id}</span>` },
]

/** A real date, YYYY-MM-DD (what the bank takes). */
function isDay(text: string): boolean {
  return day_pattern.test(text) && !Number.isNaN(Date.parse(`${text}T00:00:00Z`))
    && new Date(`${text}T00:00:00Z`).toISOString().startsWith(text)
}

/** Yesterday in South Africa: the latest day a statement can be whole for. */
function yesterday(): string {
  return new Date(Date.now() + 2 * 3600_000 - 86_400_000).toISOString().slice(0, 10)
}

function side(name: string, totals: Report['ledger_totals']): Html {
  return html`<tr><th scope="row">${name}</th>
    <td class="amount">${totals.credits.count}</td>
    <td class="amount">${rand(totals.credits.sum)}</td>
    <td class="amount">${totals.debits.count}</td>
    <td class="amount">${rand(totals.debits.sum)}</td>
  </tr>`
}

function summary(report: Report): Html {
  const source = report.source === 'statement' ? 'the end-of-day statement (camt.053)'
    : report.source === 'notifications' ? 'the intraday notifications (camt.054); the ' +
      'end-of-day statement has not come' : 'nothing: no statement or notification of the day ' +
      'has come'
  const verdict = report.breaks_count === 0
    ? html`<p class="notice" role="status">Reconciled: no breaks.</p>`
    : html`<p class="error" role="alert">${report.breaks_count} break(s).</p>`
  return html`<p>Reconciled against ${source}.</p>${verdict}
    <table><thead><tr><th></th><th scope="col" class="amount">Credits</th>
      <th scope="col" class="amount">Sum</th><th scope="col" class="amount">Debits</th>
      <th scope="col" class="amount">Sum</th></tr></thead>
    <tbody>${side('Statement', report.statement_totals)}${side('Bank', report.ledger_totals)}
    </tbody></table>
    <p>Matched: ${report.matched.count} (${rand(report.matched.sum)}).
      On another day's statement: ${report.on_other_days}. Entries not booked:
      ${report.not_booked}.</p>`
}

export async function reconciliationPage(r: PageRequest): Promise<Rendered> {
  const asked = param(r.url, 'date')
  const { statements } = await r.client.rails.statements({ limit: statements_shown })
  const date = asked !== undefined && isDay(asked) ? asked
    : statements[0]?.statement_date ?? yesterday()
  const report = await r.client.rails.reconcile({ date })
  const more = report.breaks_count > report.breaks.length
    ? html`<p>The first ${report.breaks.length} are listed; <code>bank rails reconcile ${date}
      </code> answers the same.</p>` : ''
  const body = html`<p><a href="/rails">Rails</a></p>
    ${filterForm('/rails/reconciliation', [{ name: 'date', label: 'Day (SAST)', value: date }])}
    <h2>${date}</h2>
    ${summary(report)}${table(report.breaks, break_columns, 'No breaks.')}${more}
    <h2>Statements received</h2>
    ${table(statements, statement_columns, 'None yet.')}`
  return { title: 'Reconciliation', current: '/rails', body }
}
