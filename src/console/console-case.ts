import { href, html, rand, sast, type Html } from './console-html.ts'
import {
  actionForm,
  doneAt,
  idLink,
  isUuid,
  notice,
  statusBadge,
  table,
  type Ops,
  type PageRequest,
  type Rendered,
  type Reply,
} from './console-kit.ts'
import { operatorName, reportsTable, undecided_statuses, type CaseView } from './console-cases.ts'
import { FormError } from './console-sandbox.ts'

// One monitoring case (`ops.monitoring.case`, audited: it shows the customer's payments): the
// customer with its accounts, the money its alerts hold and its recent money, the alerts, the
// notes, who it is assigned to, the decisions and the reports filed. Each action is one `ops.`
// call, as from the CLI: a note (`ops.monitoring.case.note`), an assignment
// (`.case.assign`), a decision (`.case.decide`). A decision to report asks a second operator
// (dual control, `str_filing`): the page says so, and another operator approves it here or on
// the Approvals page (`ops.approvals.approve`; the bank refuses the one who asked, 403).

type CaseDetail = Reply<Ops['monitoring']['case']>
type Alert = CaseDetail['alerts'][number]
type Movement = CaseDetail['recent_money'][number]
type Note = CaseDetail['notes'][number]
type Account = Reply<Ops['accounts']['list']>['accounts'][number]

const decision_words = {
  false_positive: 'closed as a false positive',
  escalate: 'escalated',
  report: 'a report asked for',
} as const
type Decision = keyof typeof decision_words
/** A note's or a reason's longest text (the operations'). */
export const note_chars_max = 2_000

function isUndecided(c: CaseView): boolean {
  return (undecided_statuses as readonly string[]).includes(c.status)
}

function summary(r: PageRequest, d: CaseDetail): Html {
  const c = d.case
  const decided = c.decision
    ? html`${decision_words[c.decision]} by ${operatorName(r, c.decided_by)}
        ${sast(c.decided_at)}: ${c.decision_reason}`
    : 'none yet'
  return html`<dl>
    <dt>Status</dt>
    <dd>${c.status}</dd>
    <dt>Customer</dt>
    <dd>
      <a href="/entities/${d.customer.entity_id}">${d.customer.name}</a>
      (${d.customer.entity_type})
    </dd>
    <dt>Partner</dt>
    <dd>${idLink(`/partners/${c.partner_id}`, c.partner_id)}</dd>
    <dt>Opened</dt>
    <dd>${sast(c.opened_at)}; last changed ${sast(c.updated_at)}</dd>
    <dt>Alerts</dt>
    <dd>${c.alerts_open} open of ${c.alerts} (${c.rules.join(', ')})</dd>
    <dt>Assigned to</dt>
    <dd>${operatorName(r, c.assigned_to)}</dd>
    <dt>Decision</dt>
    <dd>${decided}</dd>
  </dl>`
}

function accountsTable(accounts: readonly Account[]): Html {
  return table<Account>(
    accounts,
    [
      {
        label: 'Account',
        cell: (a) => html`<a href="/accounts/${a.account_id}">${a.account_number}</a>`,
      },
      { label: 'Kind', cell: (a) => a.kind },
      { label: 'Status', cell: (a) => statusBadge(a.status) },
      { label: 'Balance', cell: (a) => rand(a.balance), amount: true },
      { label: 'Available', cell: (a) => rand(a.available_balance), amount: true },
    ],
    'No accounts.',
  )
}

function alertsTable(alerts: readonly Alert[]): Html {
  return table<Alert>(
    alerts,
    [
      { label: 'Rule', cell: (a) => a.rule },
      { label: 'What it saw', cell: (a) => a.detail },
      { label: 'Status', cell: (a) => a.status },
      { label: 'Opened', cell: (a) => sast(a.opened_at) },
      { label: 'Last movement', cell: (a) => sast(a.last_tx_at) },
      { label: 'Movements', cell: (a) => a.tx_ids.length, amount: true },
      { label: 'Account', cell: (a) => idLink(`/accounts/${a.account_id}`, a.account_id) },
    ],
    'No alerts.',
  )
}

/** Movements of money; those an alert holds marked, in words (not by colour alone). */
function moneyTable(rows: readonly Movement[], flagged: ReadonlySet<string>, none: string) {
  return table<Movement>(
    rows,
    [
      { label: 'When', cell: (m) => sast(m.created_at) },
      { label: 'Transaction', cell: (m) => html`<span class="id">${m.tx_id}</span>` },
      { label: 'Account', cell: (m) => idLink(`/accounts/${m.account_id}`, m.account_id) },
      { label: 'Type', cell: (m) => m.tx_type },
      { label: 'Status', cell: (m) => m.status },
      { label: 'In', cell: (m) => (m.credit === '0' ? '' : rand(m.credit)), amount: true },
      { label: 'Out', cell: (m) => (m.debit === '0' ? '' : rand(m.debit)), amount: true },
      { label: 'Recipient', cell: (m) => `${m.recipient_name} ${m.recipient_account}`.trim() },
      { label: 'In an alert', cell: (m) => (flagged.has(m.tx_id) ? 'yes' : 'no') },
    ],
    none,
  )
}

function notesBlock(r: PageRequest, d: CaseDetail): Html {
  const notes = d.notes.map(
    (n: Note) => html`<li>
      <p><strong>${n.author_name}</strong>, ${sast(n.created_at)}</p>
      <pre>${n.text}</pre>
    </li>`,
  )
  return html`<h2 id="notes">Notes</h2>
    ${notes.length ? html`<ol class="notes">${notes}</ol>` : html`<p>No notes yet.</p>`}
    <form method="post" action="/cases/${d.case.case_id}/notes">
      <input type="hidden" name="csrf" value="${r.csrf}" />
      <label for="case-note">Add a note</label>
      <textarea id="case-note" name="text" rows="3" maxlength="${note_chars_max}"
        required></textarea>
      <p><button type="submit">Add the note</button></p>
    </form>`
}

function assignBlock(r: PageRequest, c: CaseView): Html {
  if (!isUndecided(c)) return html``
  const action = `/cases/${c.case_id}/assign`
  const mine = c.assigned_to === r.operator.credentialId
  return html`<h2>Assignment</h2>
    ${mine ? '' : actionForm(action, r.csrf, 'Assign to me', {
      assignee: r.operator.credentialId })}
    <form method="post" action="${action}" class="inline">
      <input type="hidden" name="csrf" value="${r.csrf}" />
      <label for="case-assignee">Operator's credential id</label>
      <input type="text" id="case-assignee" name="assignee" required />
      <button type="submit">Assign to this operator</button>
    </form>`
}

/** The decision form: one reason, a button per decision the case can still take. */
function decideBlock(r: PageRequest, c: CaseView): Html {
  if (!isUndecided(c)) return html``
  const escalate = c.status === 'open'
    ? html`<button type="submit" name="decision" value="escalate">Escalate</button>`
    : ''
  return html`<h2>Decision</h2>
    <form method="post" action="/cases/${c.case_id}/decide">
      <input type="hidden" name="csrf" value="${r.csrf}" />
      <label for="case-reason">Reason</label>
      <textarea id="case-reason" name="reason" rows="3" maxlength="${note_chars_max}"
        required></textarea>
      <p>
        <button type="submit" name="decision" value="false_positive">
          Close as false positive</button>
        ${escalate}
        <button type="submit" name="decision" value="report">File a report</button>
      </p>
      <p>
        Filing a report asks a second operator: it is filed with the FIC's goAML when another
        operator approves it.
      </p>
    </form>`
}

/** A report waiting for its second operator: who may approve it, and the forms if it is not you. */
function filingBlock(r: PageRequest, c: CaseView): Html {
  if (c.status !== 'report_pending' || !c.approval_id) return html``
  const waits = html`<p class="pending" role="status">
    The report awaits a second operator's approval (request
    <span class="id">${c.approval_id}</span>, also on the
    <a href="/approvals">Approvals</a> page).
  </p>`
  if (c.decided_by === r.operator.credentialId) {
    return html`<h2>Filing</h2>
      ${waits}
      <p>You asked for it: another operator approves it.</p>`
  }
  const base = `/cases/${c.case_id}/filing`
  return html`<h2>Filing</h2>
    ${waits}
    ${actionForm(`${base}/approve`, r.csrf, 'Approve the filing')}
    <form method="post" action="${base}/reject" class="inline">
      <input type="hidden" name="csrf" value="${r.csrf}" />
      <label for="filing-reason">Reason</label>
      <input type="text" id="filing-reason" name="reason" maxlength="500" required />
      <button type="submit">Reject the filing</button>
    </form>`
}

export async function casePage(r: PageRequest, caseId: string): Promise<Rendered> {
  const d = await r.client.monitoring.case({ case_id: caseId })
  const { accounts } = await r.client.accounts.list({ entity_id: d.customer.entity_id })
  const flagged = new Set(d.alerts.flatMap((a) => a.tx_ids))
  return {
    title: `Case of ${d.customer.name}`,
    current: '/cases',
    body: html`${notice(r.url)}${summary(r, d)}
      ${filingBlock(r, d.case)}
      <h2>The customer's accounts</h2>
      ${accountsTable(accounts)}
      <h2>Alerts</h2>
      ${alertsTable(d.alerts)}
      <h2>Money in the alerts</h2>
      ${moneyTable(d.alert_money, flagged, 'None.')}
      <h2>Recent money</h2>
      <p>The newest movements of the customer's accounts.</p>
      ${moneyTable(d.recent_money, flagged, 'None.')}
      ${notesBlock(r, d)}${assignBlock(r, d.case)}${decideBlock(r, d.case)}
      <h2>Reports filed</h2>
      ${reportsTable(r, d.reports)}
      <p><a href="${href('/audit', { target: caseId })}">This case's audit trail</a></p>`,
  }
}

export async function addNote(r: PageRequest, form: URLSearchParams, caseId: string) {
  const text = form.get('text')?.trim() ?? ''
  if (text.length > note_chars_max) {
    throw new FormError(`A note is at most ${note_chars_max} characters.`)
  }
  await r.client.monitoring.note({ case_id: caseId, text })
  return doneAt(`/cases/${caseId}`, 'Note added.')
}

export async function assignCase(r: PageRequest, form: URLSearchParams, caseId: string) {
  const assignee = form.get('assignee')?.trim()
  if (!isUuid(assignee)) throw new FormError("Give an operator's credential id (a uuid).")
  const c = await r.client.monitoring.assign({ case_id: caseId, assignee })
  return doneAt(`/cases/${caseId}`, `Assigned to ${operatorName(r, c.assigned_to)}.`)
}

export async function decideCase(r: PageRequest, form: URLSearchParams, caseId: string) {
  const decision = form.get('decision') ?? ''
  if (!Object.hasOwn(decision_words, decision)) throw new FormError('Choose a decision.')
  const reason = form.get('reason')?.trim() ?? ''
  const done = await r.client.monitoring.decide({ case_id: caseId,
    decision: decision as Decision, reason })
  const what = done.approval_id
    ? 'A report was asked for: it awaits a second operator.'
    : `The case is ${decision_words[decision as Decision]}.`
  return doneAt(`/cases/${caseId}`, what)
}

/** Approves or rejects the filing the case waits for (its own request, never a form's id). */
export async function decideFiling(r: PageRequest, form: URLSearchParams, caseId: string,
    approve: boolean) {
  const { case: c } = await r.client.monitoring.case({ case_id: caseId })
  if (c.status !== 'report_pending' || !c.approval_id) {
    throw new FormError('No report of this case awaits approval.')
  }
  if (approve) {
    await r.client.approvals.approve({ approval_id: c.approval_id })
    return doneAt(`/cases/${caseId}`, 'Approved: the report is filed.')
  }
  const reason = form.get('reason')?.trim() ?? ''
  await r.client.approvals.reject({ approval_id: c.approval_id, reason })
  return doneAt(`/cases/${caseId}`, 'Rejected: no report is filed.')
}
