import { html, rand, sast } from './console-html.ts'
import {
  doneAt,
  filterForm,
  notice,
  param,
  table,
  type Ops,
  type PageRequest,
  type Rendered,
  type Reply,
} from './console-kit.ts'

// Sandbox tools (`ops.sandbox.*`, refused with 403 by a bank in production mode): the bank's
// clock and moving it forward, what the notifier sent, a batch's one-time PIN, and the card
// network's simulations. Reading messages and PINs is audited by the bank, so they are
// fetched only when asked for, never on the way to another page.

type Message = Reply<Ops['sandbox']['messages']>['messages'][number]
type Authorization = Reply<Ops['cardNetwork']['authorize']>

/** A form's mistake the console catches before asking the bank (shown with 400). */
export class FormError extends Error {
  /** 400, or 413 for a form larger than the console takes. */
  constructor(message: string, readonly status: 400 | 413 = 400) {
    super(message)
  }
}

/** Rand as typed (`1234.56`, `R1,234.50`) to integer cents; anything else is a FormError. */
export function centsOf(text: string | null, field = 'amount'): number {
  const plain = (text ?? '').trim().replace(/^R/i, '').replaceAll(',', '')
  const m = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(plain)
  if (!m) throw new FormError(`${field}: give rand and cents, e.g. 125.50`)
  return Number(m[1]) * 100 + Number((m[2] ?? '0').padEnd(2, '0'))
}

const messages_shown = 50

function clockForm(csrf: string) {
  return html`<form method="post" action="/sandbox/advance" class="filters">
    <input type="hidden" name="csrf" value="${csrf}" />
    <label for="advance-by">Move forward by (e.g. 90m, 12h, 3d)</label>
    <input type="text" id="advance-by" name="by" />
    <label for="advance-to">or to (RFC 3339, e.g. 2026-12-01T08:00:00+02:00)</label>
    <input type="text" id="advance-to" name="to" />
    <p><button type="submit">Move the clock</button></p>
  </form>`
}

function otpForm(csrf: string) {
  return html`<form method="post" action="/sandbox/otp" class="filters">
    <input type="hidden" name="csrf" value="${csrf}" />
    <label for="otp-batch">Bulk payment id</label>
    <input type="text" id="otp-batch" name="bulk_payment_id" required />
    <p><button type="submit">Show its one-time PIN</button></p>
  </form>`
}

function field(id: string, label: string, name: string, extra = '') {
  return html`<label for="${id}">${label}</label
    ><input type="text" id="${id}" name="${name}" ${extra ? html`value="${extra}"` : ''} />`
}

function cardForms(csrf: string) {
  const hidden = html`<input type="hidden" name="csrf" value="${csrf}" />`
  return html`<div class="decide">
    <form method="post" action="/sandbox/card/authorize">
      ${hidden}${field('card-id', 'Card id', 'card_id')}
      ${field('card-amount', 'Amount (rand)', 'amount')}
      ${field('card-merchant', 'Merchant', 'merchant_name', 'Sandbox Store')}
      ${field('card-mcc', 'MCC', 'mcc', '5411')}
      ${field('card-country', 'Merchant country', 'merchant_country', 'ZAF')}
      <p><button type="submit">Authorize (point of sale, chip)</button></p>
    </form>
    <form method="post" action="/sandbox/card/settle">
      ${hidden}${field('auth-id', 'Authorization id', 'authorization_id')}
      ${field('auth-amount', 'Amount (rand; blank reverses all)', 'amount')}
      <label for="auth-step">Step</label>
      <select id="auth-step" name="step">
        <option value="clear">clear</option>
        <option value="reverse">reverse</option>
        <option value="increment">increment</option>
      </select>
      <p><button type="submit">Send</button></p>
    </form>
    <form method="post" action="/sandbox/card/refund">
      ${hidden}${field('refund-card-id', 'Card id to refund', 'card_id')}
      ${field('refund-amount', 'Refund (rand)', 'amount')}
      ${field('refund-merchant', 'Refunding merchant', 'merchant_name', 'Sandbox Store')}
      <p><button type="submit">Refund</button></p>
    </form>
  </div>`
}

export async function sandboxPage(r: PageRequest, shown: unknown = ''): Promise<Rendered> {
  const clock = await r.client.sandbox.clock()
  return {
    title: 'Sandbox',
    current: '/sandbox',
    body: html`${notice(r.url)}${shown}
      <h2>Clock</h2>
      <p>The bank's time: <strong>${sast(clock.now)}</strong></p>
      ${clockForm(r.csrf)}
      <h2>One-time PINs</h2>
      ${otpForm(r.csrf)}
      <h2>Card network</h2>
      ${cardForms(r.csrf)}
      <p><a href="/sandbox/messages">What the notifier sent</a></p>`,
  }
}

export async function messagesPage(r: PageRequest): Promise<Rendered> {
  const to = param(r.url, 'to')
  const { messages } = await r.client.sandbox.messages({
    limit: messages_shown,
    ...(to ? { to } : {}),
  })
  const list = table<Message>(
    messages,
    [
      { label: 'Sent', cell: (m) => sast(m.created_at) },
      { label: 'To', cell: (m) => m.to },
      { label: 'Subject', cell: (m) => m.subject },
      { label: 'Text', cell: (m) => html`<pre>${m.text}</pre>` },
    ],
    'Nothing sent.',
  )
  return {
    title: 'Messages',
    current: '/sandbox',
    body: html`${filterForm('/sandbox/messages', [{ name: 'to', label: 'Recipient', value: to }])}
      <p>The newest ${messages_shown}.</p>
      ${list}`,
  }
}

/** `3d`, `12h`, `90m`, `45s` or seconds. */
function secondsOf(text: string): number {
  const m = /^(\d{1,8})\s*([smhd]?)$/.exec(text.trim())
  if (!m) throw new FormError('move forward by: give e.g. 90m, 12h or 3d')
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 }[m[2] as '' | 's' | 'm' | 'h' | 'd']
  return Number(m[1]) * unit
}

export async function advanceClock(r: PageRequest, form: URLSearchParams): Promise<string> {
  const by = form.get('by')?.trim()
  const to = form.get('to')?.trim()
  if (!by === !to) throw new FormError('give either how far to move the clock, or to when')
  const report = await r.client.sandbox.advance(by ? { seconds: secondsOf(by) } : { to: to! })
  return doneAt('/sandbox', `The clock is at ${sast(report.now)}; ${report.jobs_run} jobs ran.`)
}

export async function showOtp(r: PageRequest, form: URLSearchParams): Promise<Rendered> {
  const id = form.get('bulk_payment_id')?.trim() ?? ''
  const otp = await r.client.sandbox.otp({ bulk_payment_id: id })
  const shown = html`<p class="notice" role="status">
    Batch <span class="id">${id}</span>: one-time PIN <strong>${otp.otp}</strong>, expires
    ${sast(otp.expires_at)}.
  </p>`
  return sandboxPage(r, shown)
}

function authorizationNotice(a: Authorization) {
  const verdict = a.approved ? 'approved' : `declined (${a.decline_reason ?? ''})`
  return html`<p class="notice" role="status">
    Authorization <span class="id">${a.authorization_id}</span> ${verdict}: ${a.status},
    ${rand(a.amount)} held ${rand(a.held)}, cleared ${rand(a.cleared)}.
  </p>`
}

export async function cardAuthorize(r: PageRequest, form: URLSearchParams): Promise<Rendered> {
  const a = await r.client.cardNetwork.authorize({
    card_id: form.get('card_id')?.trim() ?? '',
    amount: centsOf(form.get('amount')),
    merchant_name: form.get('merchant_name')?.trim() ?? '',
    mcc: form.get('mcc')?.trim() ?? '',
    merchant_country: form.get('merchant_country')?.trim() ?? '',
    channel: 'pos',
    entry_mode: 'chip',
  })
  return sandboxPage(r, authorizationNotice(a))
}

export async function cardSettle(r: PageRequest, form: URLSearchParams): Promise<Rendered> {
  const authorization_id = form.get('authorization_id')?.trim() ?? ''
  const step = form.get('step')
  const typed = form.get('amount')?.trim()
  const net = r.client.cardNetwork
  let a: Authorization
  if (step === 'reverse') {
    a = await net.reverse({ authorization_id, ...(typed ? { amount: centsOf(typed) } : {}) })
  } else if (step === 'increment') {
    a = await net.increment({ authorization_id, amount: centsOf(typed ?? '') })
  } else {
    a = await net.clear({ authorization_id, amount: centsOf(typed ?? '') })
  }
  return sandboxPage(r, authorizationNotice(a))
}

/** A merchant's refund to a card: credits its account (a completed transaction). */
export async function cardRefund(r: PageRequest, form: URLSearchParams): Promise<Rendered> {
  const refund = await r.client.cardNetwork.refund({
    card_id: form.get('card_id')?.trim() ?? '',
    amount: centsOf(form.get('amount')),
    merchant_name: form.get('merchant_name')?.trim() ?? '',
  })
  const shown = html`<p class="notice" role="status">
    Refunded ${rand(refund.amount)} to card <span class="id">${refund.card_id}</span>: transaction
    <span class="id">${refund.tx_id}</span> on account
    <a href="/accounts/${refund.account_id}">${refund.account_id}</a>.
  </p>`
  return sandboxPage(r, shown)
}
