import type { OperatorClient } from '../client/operator-client.ts'
import { bytes, href, html, rand, sast, type Html } from './console-html.ts'
import type { Rendered } from './console-kit.ts'

// The console's pages, each rendered from the replies of `ops.` calls made with the signed-in
// operator's own client. Nothing here reads the database: the bank's rules, permissions and
// audit trail hold for every page as they do for the CLI.

type Reply<F> = F extends (...args: never[]) => Promise<infer R> ? R : never
type KycList = Reply<OperatorClient['kyc']['list']>
type KycShow = Reply<OperatorClient['kyc']['show']>
type AuditList = Reply<OperatorClient['audit']['list']>
type DocumentView = KycShow['documents'][number]
type AuditEntry = AuditList['entries'][number]

export type { Rendered } from './console-kit.ts'

/** Rows shown per page of a list the bank returns whole (the KYC queue). */
export const page_rows = 25
export const kyc_states = ['pending', 'approved', 'rejected'] as const
export type KycState = (typeof kyc_states)[number]

export function signInBody(pre: string, problem?: string): Html {
  const error = problem ? html`<p class="error" role="alert">${problem}</p>` : ''
  return html`${error}
    <p>
      Sign in with your operator credential (the token the CLI reads from
      <code>BANK_OPERATOR_TOKEN</code> or <code>&lt;data dir&gt;/operator-token</code>).
    </p>
    <form method="post" action="/sign-in">
      <input type="hidden" name="csrf" value="${pre}" />
      <label for="token">Operator credential</label>
      <input type="password" id="token" name="token" autocomplete="off" required />
      <p><button type="submit">Sign in</button></p>
    </form>`
}

export function kycListBody(list: KycList, state: KycState, pageNo: number): Html {
  const filters = kyc_states.map((s) => {
    const mark = s === state ? html` aria-current="true"` : ''
    return html`<li><a href="${href('/kyc', { state: s })}" ${mark}>${s}</a></li>`
  })
  const rows = list.applications.slice((pageNo - 1) * page_rows, pageNo * page_rows).map(
    (a) =>
      html`<tr>
        <td><a href="/kyc/${a.user_id}">${a.name}</a></td>
        <td>${a.kyc_status}</td>
        <td>${sast(a.submitted_at)}</td>
        <td class="amount">${a.documents}</td>
        <td class="id">${a.partner_id}</td>
      </tr>`,
  )
  const table = rows.length
    ? html`<table>
        <thead>
          <tr>
            <th scope="col">User</th>
            <th scope="col">KYC status</th>
            <th scope="col">Submitted</th>
            <th scope="col" class="amount">Documents</th>
            <th scope="col">Partner</th>
          </tr>
        </thead>
        <tbody>
          ${rows}
        </tbody>
      </table>`
    : html`<p>No ${state} submissions.</p>`
  const more = list.applications.length > pageNo * page_rows
  return html`<nav aria-label="Filter by state">
      <ul class="pager">
        ${filters}
      </ul>
    </nav>
    ${table}${pager('/kyc', { state }, pageNo, more)}`
}

function pager(path: string, params: Record<string, string>, pageNo: number, more: boolean): Html {
  const previous =
    pageNo > 1 ? html`<a href="${href(path, { ...params, page: pageNo - 1 })}">Previous</a>` : ''
  const next = more ? html`<a href="${href(path, { ...params, page: pageNo + 1 })}">Next</a>` : ''
  return html`<p class="pager">${previous} <span>Page ${pageNo}</span> ${next}</p>`
}

function documentViewer(doc: DocumentView): Html {
  const url = `/documents/${doc.document_id}`
  const label = `${doc.doc_type} (${doc.original_filename ?? doc.name})`
  if (doc.deleted_at) return html`<p>Its bytes were deleted on ${sast(doc.deleted_at)}.</p>`
  if (doc.content_type.startsWith('image/')) return html`<img src="${url}" alt="${label}" />`
  if (doc.content_type === 'application/pdf') {
    return html`<iframe src="${url}" title="${label}"></iframe>`
  }
  return html`<p><a href="${url}">Download ${label}</a></p>`
}

export function documentBlock(doc: DocumentView): Html {
  const decision = doc.decision ?? 'not decided'
  const reason = doc.rejection_reason ? html` (${doc.rejection_reason})` : ''
  return html`<section class="document" aria-label="${doc.doc_type}">
    <h3>${doc.doc_type}</h3>
    <p>
      ${doc.original_filename ?? doc.name} · ${doc.content_type} · ${bytes(doc.size)} · submitted
      ${sast(doc.submitted_at)} · ${decision}${reason}
    </p>
    <p>SHA-256 <code>${doc.sha256}</code></p>
    ${documentViewer(doc)}
    <p><a href="/documents/${doc.document_id}">Open ${doc.doc_type} on its own</a></p>
  </section>`
}

/**
 * What approving does: a person's KYC is their personal entity's, so approving it approves
 * the entity and opens its first account (when it has none); a business's user is verified
 * alone, and the business's first account opens with its KYB approval.
 */
function approvalNote(entityHolder: boolean): Html {
  return entityHolder
    ? html`<p>
        Approving approves this person's entity too and, when it has no account yet, opens
        its first account.
      </p>`
    : html`<p>
        Approving verifies this user of a business only: it opens no account (the business's
        first account opens when its KYB is approved).
      </p>`
}

function decideForms(userId: string, entityHolder: boolean, csrf: string): Html {
  const action = `/kyc/${userId}/decide`
  return html`<h2>Decision</h2>
    <div class="decide">
      <form method="post" action="${action}">
        <input type="hidden" name="csrf" value="${csrf}" /><input
          type="hidden"
          name="decision"
          value="approve"
        />
        ${approvalNote(entityHolder)}
        <button type="submit">Approve</button>
      </form>
      <form method="post" action="${action}">
        <input type="hidden" name="csrf" value="${csrf}" /><input
          type="hidden"
          name="decision"
          value="reject"
        />
        <label for="reason">Reason for rejecting</label>
        <textarea id="reason" name="reason" rows="3" maxlength="500" required></textarea>
        <p><button type="submit">Reject</button></p>
      </form>
    </div>`
}

export function kycShowBody(shown: KycShow, csrf: string, notice?: string): Html {
  const u = shown.user
  const sub = shown.submission
  const submission = sub
    ? html`<p>
        Submission <span class="id">${sub.submission_id}</span>: ${sub.state}, submitted
        ${sast(sub.submitted_at)}${sub.decided_at ? html`, decided ${sast(sub.decided_at)}` : ''}
        ${sub.rejection_reason ? html` (${sub.rejection_reason})` : ''}
      </p>`
    : html`<p>Nothing submitted.</p>`
  const decide = sub?.state === 'pending' ? decideForms(u.id, shown.entity_holder, csrf) : ''
  return html`${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
    <dl>
      <dt>Name</dt>
      <dd>${u.title} ${u.first_name} ${u.last_name}</dd>
      <dt>User</dt>
      <dd class="id">${u.id}</dd>
      <dt>Entity</dt>
      <dd class="id">${u.entity_id}</dd>
      <dt>Partner</dt>
      <dd class="id">${shown.partner_id}</dd>
      <dt>ID</dt>
      <dd>${u.id_type} ${u.id_number}</dd>
      <dt>KYC status</dt>
      <dd>${u.kyc_status}</dd>
    </dl>
    ${submission}
    <h2>Documents</h2>
    ${shown.documents.map(documentBlock)} ${decide}
    <p><a href="${href('/audit', { subject_id: u.id })}">This user's audit trail</a></p>`
}

export function auditTable(entries: AuditEntry[]): Html {
  if (entries.length === 0) return html`<p>No entries.</p>`
  const rows = entries.map(
    (e) =>
      html`<tr>
        <td>${sast(e.at)}</td>
        <td>${e.action}</td>
        <td>${e.actor_name} <span class="id">${e.actor}</span></td>
        <td class="id">${e.subject_id ?? ''}</td>
        <td>${e.result}</td>
        <td><code>${summary(e.details)}</code></td>
      </tr>`,
  )
  return html`<table>
    <thead>
      <tr>
        <th scope="col">At</th>
        <th scope="col">Action</th>
        <th scope="col">Operator</th>
        <th scope="col">Subject</th>
        <th scope="col">Result</th>
        <th scope="col">Details</th>
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`
}

function summary(details: Record<string, unknown>): string {
  const text = JSON.stringify(details)
  return text.length > 160 ? `${text.slice(0, 159)}…` : text
}

export interface AuditFilter {
  action?: string | undefined
  subject_id?: string | undefined
  actor?: string | undefined
  target?: string | undefined
  cursor?: string | undefined
}

export function auditBody(list: AuditList, filter: AuditFilter): Html {
  const { cursor: _cursor, ...kept } = filter
  const next = list.next_cursor
    ? html`<a href="${href('/audit', { ...kept, cursor: list.next_cursor })}">Older entries</a>`
    : ''
  const first = filter.cursor ? html`<a href="${href('/audit', kept)}">Newest entries</a>` : ''
  return html`<form method="get" action="/audit" class="filters">
      <label for="action">Action</label
      ><input type="text" id="action" name="action" value="${filter.action ?? ''}" />
      <label for="subject_id">Subject (a user, entity or document id)</label>
      <input type="text" id="subject_id" name="subject_id" value="${filter.subject_id ?? ''}" />
      <label for="actor">Operator (a credential id)</label>
      <input type="text" id="actor" name="actor" value="${filter.actor ?? ''}" />
      <label for="target">Any id the action touched (a partner, account, approval)</label>
      <input type="text" id="target" name="target" value="${filter.target ?? ''}" />
      <p><button type="submit">Filter</button></p>
    </form>
    ${auditTable(list.entries)}
    <p class="pager">${first} ${next}</p>`
}

export function errorBody(message: string): Html {
  return html`<p class="error" role="alert">${message}</p>
    <p><a href="/">Back to the overview</a></p>`
}
