import { href, html, rand, sast, type Html } from './console-html.ts'
import { table, type Ops, type PageRequest, type Rendered, type Reply } from './console-kit.ts'
import { auditTable } from './console-pages.ts'

// The overview: the bank at a glance from `ops.summary` (indexed aggregates, milliseconds on
// a ledger of millions of transactions), the KYC queue's length and the latest operator
// actions. Payments per minute are drawn by uPlot (served from node_modules, see
// console-assets.ts) from the figures in a data attribute, and listed in a table too, for
// readers without the picture. The full ledger check (`ops.ledger.verify`, which reads every
// posting) runs only when asked for, on its own page.

type Summary = Reply<Ops['summary']['get']>
type LedgerReport = Reply<Ops['ledger']['verify']>

/** The most pending KYC submissions counted (one list call). */
const kyc_counted_max = 500

function figure(label: string, value: string | number, extra?: Html): Html {
  return html`<li>${label}<strong>${value}</strong>${extra ?? ''}</li>`
}

function percent(rate: number): string {
  return `${(rate * 100).toFixed(1)} %`
}

function chart(s: Summary): Html {
  const minutes = s.payments.per_minute
  const startSeconds = Math.floor(Date.parse(s.payments.per_minute_from) / 1000)
  const rows = minutes.map((n, i) => ({
    at: new Date((startSeconds + i * 60) * 1000).toISOString(),
    n,
  }))
  return html`<figure class="chart">
    <figcaption>Payments per minute over the last hour (SAST)</figcaption>
    <div
      id="payments-chart"
      role="img"
      aria-label="A line chart of payments per minute over the last hour: ${
        s.payments.last_hour
      } in all"
      data-start="${startSeconds}"
      data-series="${JSON.stringify(minutes)}"
    ></div>
    <details>
      <summary>The same figures as a table</summary>
      ${table(
        rows,
        [
          { label: 'Minute from', cell: (r) => sast(r.at) },
          { label: 'Payments', cell: (r) => r.n, amount: true },
        ],
        'None.',
      )}
    </details>
  </figure>`
}

function clearing(s: Summary): Html {
  const last = s.clearing.last_run
  return html`<ul class="figures">
    ${figure('Cycles (business days, SAST)', s.clearing.cycles_sast.join(', ') || 'none')}
    ${figure('Next cycle', sast(s.clearing.next_cycles[0]) || 'none scheduled')}
    ${figure('Then', s.clearing.next_cycles.slice(1).map(sast).join(' · ') || '—')}
    ${figure('Last run', last ? `${last.cycle}: ${last.state}` : 'none yet')}
  </ul>`
}

export function overviewBody(s: Summary, kycWaiting: number, recent: Html): Html {
  const w = s.webhooks
  const failures = html`<a href="${href('/webhooks', { state: 'failed' })}">${w.failed} failed</a>`
  const pendingEfts = html`<a href="${href('/payments', { rail: 'EFT' })}#pending">list them</a>`
  return html`<p>At ${sast(s.now)}.</p>
    <h2>Money</h2>
    <ul class="figures">
      ${figure('Balances', rand(s.money.balance_total))} ${figure('Held', rand(s.money.held_total))}
      ${figure('Available', rand(s.money.available_total))} ${figure('Accounts', s.money.accounts)}
      ${figure('Fee income today', rand(s.payments.fee_income_today))}
    </ul>
    <h2>Payments</h2>
    <ul class="figures">
      ${figure('Pending EFTs', s.payments.pending_eft_count, pendingEfts)}
      ${figure('Pending EFT amount', rand(s.payments.pending_eft_amount))}
      ${figure('Payments in the last hour', s.payments.last_hour)}
    </ul>
    ${chart(s)}
    <h2>Clearing</h2>
    ${clearing(s)}
    <h2>Background jobs and webhooks</h2>
    <ul class="figures">
      ${figure('Jobs queued', s.jobs.queued)} ${figure('Running', s.jobs.running)}
      ${figure('Overdue (5 min)', s.jobs.overdue)} ${figure('Dead', s.jobs.dead)}
      ${figure('Done in the last hour', s.jobs.done_last_hour)}
      ${figure('Webhook failure rate', percent(w.failure_rate), html`${failures}`)}
    </ul>
    <h2>Reviews</h2>
    <ul class="figures">
      ${figure(
        'KYC waiting for review',
        kycWaiting >= kyc_counted_max ? `${kyc_counted_max}+` : kycWaiting,
      )}
    </ul>
    <h2>Latest operator actions</h2>
    ${recent}
    <p>
      <a href="/audit">The whole audit log</a> ·
      <a href="/ledger-check">Run the full ledger check</a>
    </p>`
}

export async function overviewPage(r: PageRequest): Promise<Rendered> {
  const [summary, kyc, recent] = await Promise.all([
    r.client.summary.get(),
    r.client.kyc.list({ state: 'pending', limit: kyc_counted_max }),
    r.client.audit.list({ limit: 5 }),
  ])
  return {
    title: 'Overview',
    current: '/',
    body: overviewBody(summary, kyc.applications.length, auditTable(recent.entries)),
    scripts: ['/assets/uplot.js', '/console-chart.js'],
    styles: ['/assets/uplot.css'],
  }
}

function ledgerBody(report: LedgerReport): Html {
  const state = report.ok
    ? html`<span class="ok">balanced</span>`
    : html`<span class="problem">${report.problems.length} problems</span>`
  const balances = Object.entries(report.internal_balances).map(([name, cents]) => ({
    name,
    cents,
  }))
  return html`<ul class="figures">
      ${figure('Ledger check', '', state)} ${figure('Accounts', report.accounts_checked)}
      ${figure('Transactions', report.transactions_checked)}
      ${figure('Postings total', rand(report.postings_total))}
    </ul>
    <h2>Internal balances</h2>
    ${table(
      balances,
      [
        { label: 'Account', cell: (b) => b.name },
        { label: 'Balance', cell: (b) => rand(b.cents), amount: true },
      ],
      'None yet.',
    )}`
}

/** `ops.ledger.verify`: every balance, hold and hash chain recomputed (slow on a big ledger). */
export async function ledgerCheckPage(r: PageRequest): Promise<Rendered> {
  const report = await r.client.ledger.verify({})
  return { title: 'Ledger check', current: '/', body: ledgerBody(report) }
}
