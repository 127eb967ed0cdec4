import { href, html, sast, type Html } from './console-html.ts'
import {
  choice,
  filterForm,
  isUuid,
  matching,
  notice,
  pageNumber,
  pager,
  param,
  slicePage,
  table,
  type Ops,
  type PageRequest,
  type Rendered,
  type Reply,
} from './console-kit.ts'
import { documentBlock } from './console-pages.ts'

// KYB review: business entities waiting for review (`ops.kyb.list`), one entity's submission
// with its documents inline and the directors the company registry names, each with their
// own documents (`ops.kyb.show`), and the decision (`ops.kyb.decide`): overall, with each
// director marked approved and verified on approval.

type KybList = Reply<Ops['kyb']['list']>
type Application = KybList['applications'][number]
type KybShow = Reply<Ops['kyb']['show']>
type Director = KybShow['directors'][number]

const kyb_states = ['submitted', 'approved', 'rejected'] as const
/** The most applications one list call returns (the operation's limit). */
const kyb_list_max = 500

export async function kybQueuePage(r: PageRequest): Promise<Rendered> {
  const state = choice(r.url, 'state', kyb_states, 'submitted')
  const partnerId = param(r.url, 'partner_id')
  const q = param(r.url, 'q')
  const list = await r.client.kyb.list({
    state,
    limit: kyb_list_max,
    ...(isUuid(partnerId) ? { partner_id: partnerId } : {}),
  })
  const found = matching(list.applications, q, (a) => `${a.name} ${a.registration_number}`)
  const pageNo = pageNumber(r.url)
  const { rows, more } = slicePage(found, pageNo)
  const body = table<Application>(
    rows,
    [
      { label: 'Business', cell: (a) => html`<a href="/kyb/${a.entity_id}">${a.name}</a>` },
      { label: 'Registration', cell: (a) => a.registration_number },
      { label: 'State', cell: (a) => a.state },
      { label: 'Submitted', cell: (a) => sast(a.submitted_at) },
      { label: 'Documents', cell: (a) => a.documents, amount: true },
      { label: 'Partner', cell: (a) => html`<span class="id">${a.partner_id}</span>` },
    ],
    `No ${state} applications.`,
  )
  const filter = filterForm('/kyb', [
    { name: 'state', label: 'State', value: state, options: kyb_states },
    { name: 'q', label: 'Name or registration number', value: q },
    { name: 'partner_id', label: 'Partner id', value: partnerId },
  ])
  return {
    title: 'KYB review',
    current: '/kyb',
    body: html`${filter}${body}${pager('/kyb', { state, q, partner_id: partnerId }, pageNo, more)}`,
  }
}

function directorBlock(d: Director): Html {
  return html`<section class="document" aria-label="Director ${d.name}">
    <h3>${d.full_name ?? d.name}</h3>
    <p>
      ${d.id_type} · ${d.email ?? 'no e-mail'} · approved ${d.approved ? 'yes' : 'no'} · verified
      ${d.verified ? 'yes' : 'no'}
    </p>
    ${d.documents.map(documentBlock)}
  </section>`
}

function decideForms(shown: KybShow, csrf: string): Html {
  const action = `/kyb/${shown.entity_id}/decide`
  const directors = shown.directors.map(
    (d) =>
      html`<label class="check"
        ><input type="checkbox" name="director" value="${d.director_id}" checked />
        ${d.full_name ?? d.name} approved and verified</label
      >`,
  )
  return html`<h2>Decision</h2>
    <div class="decide">
      <form method="post" action="${action}">
        <input type="hidden" name="csrf" value="${csrf}" />
        <input type="hidden" name="decision" value="approve" />
        ${directors}
        <p>Approving opens the business's first account.</p>
        <button type="submit">Approve</button>
      </form>
      <form method="post" action="${action}">
        <input type="hidden" name="csrf" value="${csrf}" />
        <input type="hidden" name="decision" value="reject" />
        <label for="kyb-reason">Reason for rejecting</label>
        <textarea id="kyb-reason" name="reason" rows="3" maxlength="500" required></textarea>
        <p><button type="submit">Reject</button></p>
      </form>
    </div>`
}

export async function kybReviewPage(r: PageRequest, entityId: string): Promise<Rendered> {
  const shown = await r.client.kyb.show({ entity_id: entityId })
  const sub = shown.submission
  const company = shown.documents.filter((d) => d.director_id === null)
  return {
    title: `KYB: ${shown.name}`,
    current: '/kyb',
    body: html`${notice(r.url)}
      <dl>
        <dt>Registration</dt>
        <dd>${shown.registration_number}</dd>
        <dt>State</dt>
        <dd>${shown.state}${shown.rejection_reason ? ` (${shown.rejection_reason})` : ''}</dd>
        <dt>Submitted</dt>
        <dd>${sub ? sast(sub.submitted_at) : 'nothing submitted'}</dd>
        <dt>Partner</dt>
        <dd><a href="/partners/${shown.partner_id}" class="id">${shown.partner_id}</a></dd>
      </dl>
      <h2>Company documents</h2>
      ${company.length ? company.map(documentBlock) : html`<p>None.</p>`}
      <h2>Directors (from the company registry)</h2>
      ${shown.directors.length ? shown.directors.map(directorBlock) : html`<p>None listed.</p>`}
      ${sub?.state === 'pending' ? decideForms(shown, r.csrf) : ''}
      <p><a href="${href('/audit', { subject_id: entityId })}">This entity's audit trail</a></p>`,
  }
}

export async function decideKyb(
  r: PageRequest,
  form: URLSearchParams,
  entityId: string,
): Promise<string> {
  const decision = form.get('decision') === 'reject' ? 'reject' : 'approve'
  const reason = form.get('reason')?.trim()
  const directors = form
    .getAll('director')
    .slice(0, 100)
    .map((director_id) => ({ director_id, approved: true, verified: true }))
  await r.client.kyb.decide({
    entity_id: entityId,
    decision,
    ...(reason ? { reason } : {}),
    ...(decision === 'approve' && directors.length ? { directors } : {}),
  })
  return href(`/kyb/${entityId}`, { done: `Decision recorded: ${decision}.` })
}
