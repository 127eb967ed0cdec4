import { html, rand, sast } from './console-html.ts'
import {
  actionForm,
  choice,
  cursorPager,
  doneAt,
  filterForm,
  idLink,
  notice,
  param,
  table,
  type Ops,
  type PageRequest,
  type Rendered,
  type Reply,
} from './console-kit.ts'

// Dual control: deposits, reversals and releases of legal holds above the threshold wait
// here until a second operator approves them (`ops.approvals.*`). The bank refuses the
// requester's own approval (403), and the page says so. Each request shows what was asked:
// a deposit's reference, a reversal's transaction and reason, a hold release's hold and reason
// (its account's page lists the hold).

type Approval = Reply<Ops['approvals']['list']>['approvals'][number]

const approval_states = ['pending_approval', 'approved', 'rejected', 'expired'] as const
export const approval_rows = 50

const kind_words: Record<Approval['kind'], string> = {
  deposit: 'deposit',
  reversal: 'reversal',
  hold_release: 'legal hold release',
  unclaimed_pay: 'payment of unclaimed funds',
  str_filing: 'filing of a suspicious-transaction report',
}

/** What the requester asked, in words (the request's fields vary by kind). */
function asked(a: Approval) {
  const field = (name: string) => {
    const value = a.request[name]
    return typeof value === 'string' || typeof value === 'number' ? String(value) : ''
  }
  if (a.kind === 'hold_release') {
    return html`Release hold <span class="id">${field('hold_id')}</span>
      (<a href="/accounts/${a.account_id}#legal-holds">the account's holds</a>):
      ${field('reason')}`
  }
  if (a.kind === 'str_filing') {
    return html`File a report of case
      <a href="/cases/${field('case_id')}" class="id">${field('case_id')}</a>: ${field('reason')}`
  }
  if (a.kind === 'reversal') {
    return html`Reverse <span class="id">${field('tx_id')}</span>: ${field('reason')}`
  }
  return field('ref') ? `Reference ${field('ref')}` : ''
}

function decision(a: Approval, csrf: string) {
  if (a.state !== 'pending_approval') {
    return html`${a.state} by ${a.decided_by_name ?? ''} ${sast(a.decided_at)}
    ${a.reason ? `(${a.reason})` : ''}`
  }
  return html`${actionForm(`/approvals/${a.approval_id}/approve`, csrf, 'Approve')}
    <form method="post" action="/approvals/${a.approval_id}/reject" class="inline">
      <input type="hidden" name="csrf" value="${csrf}" />
      <label for="reason-${a.approval_id}">Reason</label>
      <input type="text" id="reason-${a.approval_id}" name="reason" maxlength="500" required />
      <button type="submit">Reject</button>
    </form>`
}

export async function approvalsPage(r: PageRequest): Promise<Rendered> {
  const state = choice(r.url, 'state', approval_states, 'pending_approval')
  const cursor = param(r.url, 'cursor')
  const list = await r.client.approvals.list({
    state,
    limit: approval_rows,
    ...(cursor ? { cursor } : {}),
  })
  const rows = table<Approval>(
    list.approvals,
    [
      { label: 'Asked', cell: (a) => sast(a.requested_at) },
      { label: 'Kind', cell: (a) => kind_words[a.kind] },
      { label: 'Request', cell: asked },
      { label: 'Amount', cell: (a) => rand(a.amount), amount: true },
      { label: 'Account', cell: (a) => idLink(`/accounts/${a.account_id}`, a.account_id) },
      { label: 'Asked by', cell: (a) => a.requested_by_name },
      { label: 'Expires', cell: (a) => sast(a.expires_at) },
      { label: 'Decision', cell: (a) => decision(a, r.csrf) },
    ],
    'No requests in this state.',
  )
  const filter = filterForm('/approvals', [
    { name: 'state', label: 'State', value: state, options: approval_states },
  ])
  return {
    title: 'Approvals',
    current: '/approvals',
    body: html`${notice(r.url)}
      <p>
        A deposit or reversal above the dual-control threshold moves no money until a second
        operator approves it; the release of a legal hold above it keeps the money held until
        then.
      </p>
      ${filter}${rows}${cursorPager('/approvals', { state, cursor }, list.next_cursor)}`,
  }
}

export async function decideApproval(
  r: PageRequest,
  form: URLSearchParams,
  approvalId: string,
  approve: boolean,
): Promise<string> {
  if (approve) {
    const done = await r.client.approvals.approve({ approval_id: approvalId })
    return doneAt('/approvals', `Approved: ${kind_words[done.kind]} of ${rand(done.amount)}.`, {
      state: 'approved',
    })
  }
  const reason = form.get('reason')?.trim() ?? ''
  const done = await r.client.approvals.reject({ approval_id: approvalId, reason })
  return doneAt('/approvals', `Rejected: ${kind_words[done.kind]} of ${rand(done.amount)}.`, {
    state: 'rejected',
  })
}
