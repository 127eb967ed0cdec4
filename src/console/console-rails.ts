import { href, html, rand, sast, type Html } from './console-html.ts'
import {
  choice,
  cursorPager,
  filterForm,
  idLink,
  isUuid,
  param,
  table,
  type Column,
  type Ops,
  type PageRequest,
  type Rendered,
  type Reply,
} from './console-kit.ts'

// The ISO 20022 rail as operators see it (`ops.rails.*`, docs/operators/rails.md): first the
// payouts sent whose answer has not come after the bank's age (BANK_RAIL_UNANSWERED_AFTER_MINUTES),
// then the messages the bank sent and applied, filtered and paged by the bank's cursor, the
// latest inbound files refused whole; one message with its payouts and, when asked, its XML;
// and the whole lists of unanswered payouts and refusals. A message id is any text of the
// clearing house's (not a UUID), so a message's page names it in the query string.

type Unanswered = Reply<Ops['rails']['unanswered']>
type Payout = Unanswered['payouts'][number]
type Message = Reply<Ops['rails']['messages']>['messages'][number]
type MessageShown = Reply<Ops['rails']['message']>
type Payment = MessageShown['payments'][number]
type Refusal = Reply<Ops['rails']['refusals']>['refusals'][number]

/** Rows of each list on the rail's first page, and per page of the lists of their own. */
export const rails_rows = 25
/** Refusals shown on the rail's first page (the rest on /rails/refusals). */
export const refusals_shown = 10

const directions = ['', 'out', 'in'] as const
const payment_types = ['', 'EFT', 'RTC'] as const
const message_kind = /^[a-z]{4}\.\d{3}(\.\d{3}\.\d{2})?$/

/** A message's page: its id (any text) and direction in the query string. */
export function messageHref(messageId: string, direction: string): string {
  return href('/rails/message', { id: messageId, direction })
}

/** An age in words: 45 s, 12 min, 4 h 1 min, 2 d 3 h. */
export function age(seconds: number): string {
  if (seconds < 60) return `${seconds} s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${minutes} min`
  const hours = Math.floor(minutes / 60)
  if (hours < 48) return `${hours} h ${minutes % 60} min`
  return `${Math.floor(hours / 24)} d ${hours % 24} h`
}

const payout_columns: ReadonlyArray<Column<Payout>> = [
  { label: 'Sent', cell: (p) => sast(p.sent_at) },
  { label: 'Waiting', cell: (p) => age(p.age_seconds) },
  { label: 'Type', cell: (p) => p.payment_type ?? '' },
  { label: 'Amount', cell: (p) => rand(p.amount), amount: true },
  { label: 'Recipient', cell: (p) => p.recipient_name },
  { label: 'Status', cell: (p) => p.status ?? 'none' },
  {
    label: 'Account',
    cell: (p) => (p.account_id ? idLink(`/accounts/${p.account_id}`, p.account_id,
      p.account_number) : p.account_number),
  },
  {
    label: 'Partner',
    cell: (p) => (p.partner_id ? idLink(`/partners/${p.partner_id}`, p.partner_id) : ''),
  },
  { label: 'Message', cell: (p) => idLink(messageHref(p.message_id, 'out'), p.message_id) },
  { label: 'Transaction', cell: (p) => html`<span class="id">${p.tx_id}</span>` },
]

function unansweredIntro(list: Unanswered): Html {
  const asked = list.older_than_minutes === list.after_minutes_setting ? ''
    : html` (asked for ${list.older_than_minutes} minutes here)`
  return html`<p>
    Payouts sent to the clearing house with no final answer after
    ${list.after_minutes_setting} minutes (<code>BANK_RAIL_UNANSWERED_AFTER_MINUTES</code>)${asked}:
    <strong>${list.total}</strong>, as of ${sast(list.as_of)}. They stay Pending, their money
    held, until the clearing house answers.
  </p>`
}

async function unansweredSection(r: PageRequest): Promise<Html> {
  const list = await r.client.rails.unanswered({ limit: rails_rows })
  const all = list.total > list.payouts.length
    ? html`<p><a href="/rails/unanswered">All ${list.total} unanswered payouts</a></p>` : ''
  return html`<h2 id="unanswered">Unanswered payouts</h2>
    ${unansweredIntro(list)}${table(list.payouts, payout_columns, 'None: every payout sent ' +
      'has its answer, or is younger than that.')}${all}`
}

const message_columns: ReadonlyArray<Column<Message>> = [
  { label: 'Time', cell: (m) => sast(m.created_at) },
  { label: 'Direction', cell: (m) => m.direction },
  { label: 'Kind', cell: (m) => m.kind },
  { label: 'Type', cell: (m) => m.payment_type ?? '' },
  { label: 'Payments', cell: (m) => m.transaction_count, amount: true },
  { label: 'Answered', cell: (m) => m.answered ?? '', amount: true },
  { label: 'Control sum', cell: (m) => (m.control_sum === null ? '' : rand(m.control_sum)),
    amount: true },
  { label: 'File', cell: (m) => m.file_name },
  { label: 'Message', cell: (m) => idLink(messageHref(m.message_id, m.direction), m.message_id) },
]

/** The messages' filters from the query string; what the bank would refuse is left out, said. */
function messageFilter(url: URL) {
  const kind = param(url, 'kind')
  const txId = param(url, 'tx_id')
  return {
    direction: choice(url, 'direction', directions, ''),
    kind: kind && message_kind.test(kind) ? kind : undefined,
    payment_type: choice(url, 'payment_type', payment_types, ''),
    tx_id: isUuid(txId) ? txId.toLowerCase() : undefined,
    cursor: param(url, 'cursor'),
    ignored: [kind && !message_kind.test(kind), txId && !isUuid(txId)].some(Boolean),
  }
}

async function messagesSection(r: PageRequest): Promise<Html> {
  const { ignored, ...f } = messageFilter(r.url)
  const list = await r.client.rails.messages({
    limit: rails_rows,
    ...(f.direction ? { direction: f.direction } : {}),
    ...(f.kind ? { kind: f.kind } : {}),
    ...(f.payment_type ? { payment_type: f.payment_type } : {}),
    ...(f.tx_id ? { tx_id: f.tx_id } : {}),
    ...(f.cursor ? { cursor: f.cursor } : {}),
  })
  const hint = ignored
    ? html`<p>A kind that is not like pacs.008, or a transaction id that is not a UUID, was left
        out of the filter.</p>` : ''
  const form = filterForm('/rails', [
    { name: 'direction', label: 'Direction', value: f.direction, options: directions },
    { name: 'kind', label: 'Kind (pacs.008, pacs.002.001.11…)', value: param(r.url, 'kind') },
    { name: 'payment_type', label: 'Payment type', value: f.payment_type, options: payment_types },
    { name: 'tx_id', label: 'Carrying the payout (tx_id)', value: param(r.url, 'tx_id') },
  ])
  return html`<h2 id="messages">Messages</h2>
    ${form}${hint}${table(list.messages, message_columns, 'No messages.')}
    ${cursorPager('/rails', f, list.next_cursor)}`
}

const refusal_columns: ReadonlyArray<Column<Refusal>> = [
  { label: 'Refused', cell: (x) => sast(x.refused_at) },
  { label: 'File', cell: (x) => x.file_name },
  { label: 'Reason', cell: (x) => x.reason },
  { label: 'SHA-256', cell: (x) => html`<code>${x.sha256}</code>` },
]

async function refusalsSection(r: PageRequest): Promise<Html> {
  const list = await r.client.rails.refusals({ limit: refusals_shown })
  const all = list.next_cursor
    ? html`<p><a href="/rails/refusals">Every refused file</a></p>` : ''
  return html`<h2 id="refusals">Refused files</h2>
    <p>Inbound files the bank refused whole: nothing of them was applied.</p>
    ${table(list.refusals, refusal_columns, 'None.')}${all}`
}

export async function railsPage(r: PageRequest): Promise<Rendered> {
  const [unanswered, messages, refusals] = await Promise.all([
    unansweredSection(r),
    messagesSection(r),
    refusalsSection(r),
  ])
  const reconcile = html`<p><a href="/rails/reconciliation">Reconciliation</a> of the
    settlement account against the clearing house's statements.</p>`
  return { title: 'Rails', current: '/rails',
    body: html`${reconcile}${unanswered}${messages}${refusals}` }
}

export async function unansweredPage(r: PageRequest): Promise<Rendered> {
  const partnerId = param(r.url, 'partner_id')
  const paymentType = choice(r.url, 'payment_type', payment_types, '')
  const cursor = param(r.url, 'cursor')
  const list = await r.client.rails.unanswered({
    limit: rails_rows,
    ...(isUuid(partnerId) ? { partner_id: partnerId.toLowerCase() } : {}),
    ...(paymentType ? { payment_type: paymentType } : {}),
    ...(cursor ? { cursor } : {}),
  })
  const form = filterForm('/rails/unanswered', [
    { name: 'partner_id', label: 'Partner id', value: partnerId },
    { name: 'payment_type', label: 'Payment type', value: paymentType, options: payment_types },
  ])
  const hint = partnerId && !isUuid(partnerId)
    ? html`<p>That is not a partner id; it was left out of the filter.</p>` : ''
  const kept = { partner_id: isUuid(partnerId) ? partnerId : undefined,
    payment_type: paymentType, cursor }
  return {
    title: 'Unanswered payouts',
    current: '/rails',
    body: html`${unansweredIntro(list)}${form}${hint}
      ${table(list.payouts, payout_columns, 'None.')}
      ${cursorPager('/rails/unanswered', kept, list.next_cursor)}
      <p><a href="/rails">Back to the rail</a></p>`,
  }
}

export async function refusalsPage(r: PageRequest): Promise<Rendered> {
  const cursor = param(r.url, 'cursor')
  const list = await r.client.rails.refusals({ limit: rails_rows, ...(cursor ? { cursor } : {}) })
  return {
    title: 'Refused files',
    current: '/rails',
    body: html`<p>Inbound files the bank refused whole, newest first.</p>
      ${table(list.refusals, refusal_columns, 'None.')}
      ${cursorPager('/rails/refusals', { cursor }, list.next_cursor)}
      <p><a href="/rails">Back to the rail</a></p>`,
  }
}

const payment_columns: ReadonlyArray<Column<Payment>> = [
  { label: 'Position', cell: (p) => p.position, amount: true },
  { label: 'Amount', cell: (p) => rand(p.amount), amount: true },
  { label: 'Status', cell: (p) => p.status ?? 'no answer' },
  { label: 'Reason', cell: (p) => p.reason_code ?? '' },
  { label: 'Answered', cell: (p) => sast(p.answered_at) },
  { label: 'Returned', cell: (p) => p.returned_reason_code ?? '' },
  { label: 'Source', cell: (p) => p.source },
  { label: 'Transaction', cell: (p) => html`<span class="id">${p.tx_id}</span>` },
]

function messageFacts(m: Message): Html {
  const row = (label: string, value: unknown) =>
    value === null || value === '' ? '' : html`<dt>${label}</dt><dd>${value}</dd>`
  return html`<dl>
    ${row('Direction', m.direction)}${row('Kind', m.kind)}${row('File', m.file_name)}
    ${row('Payment type', m.payment_type)}${row('Time', sast(m.created_at))}
    ${row('Settlement day', m.settlement_date)}${row('File written', sast(m.written_at))}
    ${row('Payments', m.transaction_count)}${row('Answered', m.answered)}
    ${row('Control sum', m.control_sum === null ? null : rand(m.control_sum))}
    ${row('SHA-256', m.sha256)}
  </dl>`
}

function bodyBlock(shown: MessageShown, showHref: string): Html {
  const body = shown.body
  if (!body) return html`<p><a href="${showHref}">Show the XML</a></p>`
  if (body.xml === null) return html`<p>No XML to show: ${body.note ?? ''}</p>`
  const cut = body.truncated ? html`<p>The XML is cut after its first characters.</p>` : ''
  const from = body.source === 'archive' ? 'the applied file in archive/'
    : 'made again from the bank\'s record (the same bytes as its file)'
  return html`<h2 id="xml">XML</h2>
    <p>From ${from}.</p>${cut}
    <pre class="xml">${body.xml}</pre>`
}

export async function railMessagePage(r: PageRequest): Promise<Rendered> {
  const id = param(r.url, 'id') ?? ''
  const direction = choice(r.url, 'direction', directions, '')
  const cursor = param(r.url, 'cursor')
  const withBody = r.url.searchParams.get('body') === '1'
  const shown = await r.client.rails.message({
    message_id: id,
    ...(direction ? { direction } : {}),
    include_body: withBody,
    limit: rails_rows,
    ...(cursor ? { cursor } : {}),
  })
  const m = shown.message
  const path = '/rails/message'
  const kept = { id: m.message_id, direction: m.direction }
  const payments = m.direction === 'out' && m.kind.startsWith('pacs.008')
    ? html`<h2 id="payments">Payouts</h2>
        ${table(shown.payments, payment_columns, 'None.')}
        ${cursorPager(path, { ...kept, cursor, body: withBody ? 1 : undefined },
          shown.next_cursor)}`
    : ''
  return {
    title: `Message ${m.message_id}`,
    current: '/rails',
    body: html`${messageFacts(m)}${payments}
      ${bodyBlock(shown, href(path, { ...kept, body: 1 }))}
      <p><a href="/rails">Back to the rail</a></p>`,
  }
}
