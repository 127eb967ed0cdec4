import { href, html, rand, sast } from './console-html.ts'
import {
  actionForm,
  choice,
  cursorPager,
  doneAt,
  filterForm,
  idLink,
  isUuid,
  notice,
  pageNumber,
  pager,
  page_rows,
  param,
  table,
  type Column,
  type Ops,
  type PageRequest,
  type Rendered,
  type Reply,
} from './console-kit.ts'

// Payments: the payments still pending across partners and accounts (`ops.payment.pending`:
// EFTs waiting for clearing, RTCs for their rail, bulk batches not finished, card
// authorizations), paged by the bank's cursor and filtered by partner, account, rail and
// kind; the EFT clearing runs, bulk batches and debit-order runs as the bank's jobs record
// them (`ops.jobs.list` by kind, each run's report as its result), a button that runs a
// clearing cycle now (`ops.clearing.run`) and one that runs the debit-order collection
// (`ops.debit.run`); and a partner's debit orders (`ops.debit.list`).

type Job = Reply<Ops['jobs']['list']>['jobs'][number]
type PendingPayment = Reply<Ops['payments']['pending']>['payments'][number]
type DebitOrder = Reply<Ops['debit']['list']>['debit_orders'][number]

const job_states = ['', 'queued', 'running', 'done', 'dead'] as const
const pending_rails = ['', 'EFT', 'RTC', 'CARD', 'DEBIT_ORDER', 'INTERNAL'] as const
const pending_kinds = ['', 'transfer', 'bulk_payment', 'card', 'debit_order'] as const
const debit_statuses = [
  '',
  'scheduled',
  'processing',
  'successful',
  'failed',
  'disputed',
  'cancelled',
] as const
/** Runs listed per kind. */
export const runs_shown = 20

export const run_kinds = {
  clearing: { kind: 'clearing.cycle', title: 'EFT clearing runs' },
  bulk: { kind: 'bulk.process', title: 'Bulk batches' },
  debit: { kind: 'debit.collection_run', title: 'Debit-order runs' },
} as const

function outcome(job: Job): string {
  if (job.last_error && job.state !== 'done') return job.last_error
  if (!job.result) return ''
  const parts = Object.entries(job.result)
    .filter(([, v]) => typeof v === 'number' || typeof v === 'boolean')
    .map(([k, v]) => `${k} ${String(v)}`)
  return parts.join(', ')
}

const job_columns: ReadonlyArray<Column<Job>> = [
  { label: 'Run', cell: (j) => j.key },
  { label: 'State', cell: (j) => j.state },
  { label: 'Due', cell: (j) => sast(j.due_at) },
  { label: 'Finished', cell: (j) => sast(j.finished_at) },
  { label: 'Attempts', cell: (j) => `${j.attempts}/${j.attempts_max}`, amount: true },
  { label: 'Outcome', cell: (j) => outcome(j) },
]

async function runs(r: PageRequest, which: keyof typeof run_kinds, state: string) {
  const { kind, title } = run_kinds[which]
  const { jobs } = await r.client.jobs.list({
    kind,
    limit: runs_shown,
    ...(state ? { state: state as Job['state'] } : {}),
  })
  return html`<h2 id="${which}">${title}</h2>
    ${table(jobs, job_columns, 'None.')}`
}

const pending_columns: ReadonlyArray<Column<PendingPayment>> = [
  { label: 'Taken', cell: (p) => sast(p.created_at) },
  { label: 'Rail', cell: (p) => p.rail },
  { label: 'Kind', cell: (p) => p.kind },
  { label: 'Amount', cell: (p) => rand(p.amount), amount: true },
  { label: 'Fee', cell: (p) => rand(p.fee), amount: true },
  { label: 'Held', cell: (p) => rand(p.held), amount: true },
  { label: 'Recipient', cell: (p) => p.recipient_name },
  { label: 'Reference', cell: (p) => p.ref },
  { label: 'Account', cell: (p) => idLink(`/accounts/${p.account_id}`, p.account_id) },
  { label: 'Partner', cell: (p) => idLink(`/partners/${p.partner_id}`, p.partner_id) },
  { label: 'Transaction', cell: (p) => html`<span class="id">${p.tx_id}</span>` },
]

/** The list's filters from the query string; an id that is not a UUID is left out, and said. */
function pendingFilter(url: URL) {
  const partnerId = param(url, 'partner_id')
  const accountId = param(url, 'account_id')
  return {
    partner_id: isUuid(partnerId) ? partnerId : undefined,
    account_id: isUuid(accountId) ? accountId : undefined,
    rail: choice(url, 'rail', pending_rails, ''),
    kind: choice(url, 'kind', pending_kinds, ''),
    cursor: param(url, 'cursor'),
    ignored: [partnerId && !isUuid(partnerId), accountId && !isUuid(accountId)].some(Boolean),
  }
}

async function pendingPayments(r: PageRequest, state: string) {
  const { ignored, ...f } = pendingFilter(r.url)
  const list = await r.client.payments.pending({
    limit: page_rows,
    ...(f.partner_id ? { partner_id: f.partner_id } : {}),
    ...(f.account_id ? { account_id: f.account_id } : {}),
    ...(f.rail ? { rail: f.rail } : {}),
    ...(f.kind ? { kind: f.kind } : {}),
    ...(f.cursor ? { cursor: f.cursor } : {}),
  })
  const hint = ignored ? html`<p>An id that is not a UUID was left out of the filter.</p>` : ''
  return html`<h2 id="pending">Pending payments</h2>
    ${hint}${table(list.payments, pending_columns, 'No pending payments.')}
    ${cursorPager('/payments', { state, ...f }, list.next_cursor)}`
}

function paymentsFilter(state: string, url: URL) {
  const f = pendingFilter(url)
  return filterForm('/payments', [
    { name: 'partner_id', label: 'Partner id', value: param(url, 'partner_id') },
    { name: 'account_id', label: 'Account id', value: param(url, 'account_id') },
    { name: 'rail', label: 'Rail', value: f.rail, options: pending_rails },
    { name: 'kind', label: 'Kind', value: f.kind, options: pending_kinds },
    { name: 'state', label: 'Run state', value: state, options: job_states },
  ])
}

export async function paymentsPage(r: PageRequest, pending: unknown = ''): Promise<Rendered> {
  const state = choice(r.url, 'state', job_states, '')
  const [waiting, clearing, bulk, debit] = await Promise.all([
    pendingPayments(r, state),
    runs(r, 'clearing', state),
    runs(r, 'bulk', state),
    runs(r, 'debit', state),
  ])
  const buttons = html`<div class="decide">
    ${actionForm('/payments/clearing', r.csrf, 'Run clearing now')}
    ${actionForm('/payments/debit-run', r.csrf, 'Run the debit-order collection now')}
  </div>`
  const filter = paymentsFilter(state, r.url)
  return {
    title: 'Payments',
    current: '/payments',
    body: html`${notice(r.url)}${buttons}${pending} ${filter} ${waiting} ${clearing}${bulk}${debit}
      <p><a href="/payments/debit-orders">Debit orders by partner</a></p>`,
  }
}

export async function runClearing(r: PageRequest): Promise<string> {
  const report = await r.client.clearing.run({})
  return doneAt(
    '/payments',
    `Clearing cycle ${report.cycle}: settled ${report.settled}, failed ${report.failed}, ` +
      `returned ${report.returned}, invalid ${report.invalid}.`,
  )
}

export async function runDebit(r: PageRequest): Promise<string> {
  const report = await r.client.debit.run({})
  return doneAt(
    '/payments',
    `Debit-order run ${report.run}: submitted ${report.submitted}, successful ` +
      `${report.successful}, failed ${report.failed}, retrying ${report.retrying}.`,
  )
}

const debit_columns: ReadonlyArray<Column<DebitOrder>> = [
  { label: 'Collection date', cell: (d) => d.collection_date },
  { label: 'Holder', cell: (d) => d.account_holder_name },
  { label: 'Amount', cell: (d) => rand(d.amount), amount: true },
  { label: 'Status', cell: (d) => d.status },
  { label: 'Frequency', cell: (d) => d.frequency },
  { label: 'Mandate', cell: (d) => d.mandate_reference },
  { label: 'Entity', cell: (d) => idLink(`/entities/${d.entity_id}`, d.entity_id) },
  { label: 'Id', cell: (d) => html`<span class="id">${d.debit_order_id}</span>` },
]

export async function debitOrdersPage(r: PageRequest): Promise<Rendered> {
  const partnerId = param(r.url, 'partner_id')
  const status = choice(r.url, 'status', debit_statuses, '')
  const pageNo = pageNumber(r.url)
  const filter = filterForm('/payments/debit-orders', [
    { name: 'partner_id', label: 'Partner id', value: partnerId },
    { name: 'status', label: 'Status', value: status, options: debit_statuses },
  ])
  if (!isUuid(partnerId)) {
    const hint = partnerId ? 'That is not a partner id.' : 'Choose a partner.'
    const partners = html`<a href="/partners">the partners' list</a>`
    return {
      title: 'Debit orders',
      current: '/payments',
      body: html`${filter}
        <p>${hint} A partner's page (${partners}) links to its debit orders.</p>`,
    }
  }
  const list = await r.client.debit.list({
    partner_id: partnerId,
    limit: page_rows,
    offset: (pageNo - 1) * page_rows,
    ...(status ? { status: status as DebitOrder['status'] } : {}),
  })
  const more = list.offset + list.debit_orders.length < list.total
  const path = '/payments/debit-orders'
  return {
    title: 'Debit orders',
    current: '/payments',
    body: html`${filter}
      <p>
        ${list.total} orders of partner
        <a href="${href(`/partners/${partnerId}`, {})}" class="id">${partnerId}</a>
      </p>
      ${table(list.debit_orders, debit_columns, 'No debit orders.')}
      ${pager(path, { partner_id: partnerId, status }, pageNo, more)}`,
  }
}
