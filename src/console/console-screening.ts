import { html, sast, type Html } from './console-html.ts'
import {
  choice,
  doneAt,
  filterForm,
  idLink,
  isUuid,
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
import { note_chars_max } from './console-case.ts'
import { FormError } from './console-sandbox.ts'

// Sanctions screening reviews (RULINGS "Financial crime controls"): the queue of customers and
// payments held by a hit (`ops.screening.reviews`), one review's page with what was screened
// and the list entries it came close to (`ops.screening.review`), and its decision
// (`ops.screening.review.decide`): clear (two operators above the confirm score: the page
// says who asked) or confirm. Each is one `ops.` call, audited as from the CLI.

type Review = Reply<Ops['screening']['reviews']>['reviews'][number]
type Hit = Review['hits'][number]

const queue_statuses =
  ['undecided', 'open', 'clear_pending', 'cleared', 'confirmed', 'any'] as const
/** The most reviews one list call returns (the operation's limit). */
const reviews_max = 500

async function queued(r: PageRequest, status: (typeof queue_statuses)[number],
    partnerId: string | undefined): Promise<Review[]> {
  const asked = { limit: reviews_max, ...(isUuid(partnerId) ? { partner_id: partnerId } : {}) }
  if (status === 'any') return (await r.client.screening.reviews(asked)).reviews
  const statuses = status === 'undecided' ? ['open', 'clear_pending'] as const : [status]
  const lists = await Promise.all(statuses.map((one) =>
    r.client.screening.reviews({ ...asked, status: one })))
  // Oldest first: the longest waiting is the first to decide.
  return lists.flatMap((list) => list.reviews)
    .sort((a, b) => Date.parse(a.opened_at) - Date.parse(b.opened_at))
}

export async function screeningPage(r: PageRequest): Promise<Rendered> {
  const status = choice(r.url, 'status', queue_statuses, 'undecided')
  const partnerId = param(r.url, 'partner_id')
  const pageNo = pageNumber(r.url)
  const { rows, more } = slicePage(await queued(r, status, partnerId), pageNo)
  const filter = filterForm('/screening', [
    { name: 'status', label: 'Status', value: status, options: queue_statuses },
    { name: 'partner_id', label: 'Partner id', value: partnerId },
  ])
  const list = table<Review>(rows, [
    { label: 'Review', cell: (v) => idLink(`/screening/${v.id}`, v.id) },
    { label: 'Opened', cell: (v) => sast(v.opened_at) },
    { label: 'Status', cell: (v) => v.status },
    { label: 'Screened', cell: (v) => v.screened.map((s) => s.name).join('; ') },
    { label: 'Of', cell: (v) => `${v.subject} (${v.cause})` },
    { label: 'Best score', cell: (v) => v.top_score.toFixed(2), amount: true },
    { label: 'Customer', cell: (v) => idLink(`/entities/${v.entity_id}`, v.entity_id) },
    { label: 'Partner', cell: (v) => idLink(`/partners/${v.partner_id}`, v.partner_id) },
  ], 'No reviews match.')
  return {
    title: 'Screening',
    current: '/screening',
    body: html`${notice(r.url)}
      <p>
        Customers and payments whose names came close to a name on a sanctions list, oldest
        first. A held customer opens no account and its accounts are frozen until its reviews
        are cleared.
      </p>
      ${filter}${list}${pager('/screening', { status, partner_id: partnerId }, pageNo, more)}`,
  }
}

function hitsTable(hits: readonly Hit[]): Html {
  return table<Hit>(hits, [
    { label: 'List', cell: (h) => h.source },
    { label: 'Entry', cell: (h) => h.list_ref },
    { label: 'Kind', cell: (h) => h.kind },
    { label: 'Matched name', cell: (h) => h.matched_name },
    { label: 'Score', cell: (h) => h.score.toFixed(3), amount: true },
    { label: 'Name score', cell: (h) => h.name_score.toFixed(3), amount: true },
    { label: 'Date of birth', cell: (h) => h.date_of_birth },
    { label: 'ID number', cell: (h) => h.id_number },
  ], 'No hits.')
}

function decideBlock(r: PageRequest, v: Review): Html {
  if (v.status !== 'open' && v.status !== 'clear_pending') return html``
  const waiting = v.status === 'clear_pending'
    ? html`<p class="pending" role="status">
        Clearing asked by ${v.clear_requested_by}: the best score is at or above the confirm
        score, so another operator must clear it.
      </p>`
    : v.needs_second_operator
      ? html`<p>The best score is at or above the confirm score: clearing takes two operators.</p>`
      : html``
  return html`<h2>Decision</h2>${waiting}
    <form method="post" action="/screening/${v.id}/decide">
      <input type="hidden" name="csrf" value="${r.csrf}" />
      <label for="review-reason">Reason</label>
      <textarea id="review-reason" name="reason" rows="3" maxlength="${note_chars_max}"
        required></textarea>
      <p>
        <button type="submit" name="decision" value="clear">Clear (false positive)</button>
        <button type="submit" name="decision" value="confirm">Confirm the hit</button>
      </p>
    </form>`
}

export async function screeningReviewPage(r: PageRequest, reviewId: string): Promise<Rendered> {
  const v = await r.client.screening.review({ review_id: reviewId })
  const decided = v.decided_by
    ? html`${v.status} by ${v.decided_by} ${sast(v.decided_at)}: ${v.reason}` : 'not yet'
  return {
    title: `Screening review ${v.id.slice(0, 8)}`,
    current: '/screening',
    body: html`${notice(r.url)}
      <dl>
        <dt>Status</dt><dd>${v.status}</dd>
        <dt>Of</dt><dd>${v.subject} <span class="id">${v.subject_id}</span> (${v.cause})</dd>
        <dt>Customer</dt><dd>${idLink(`/entities/${v.entity_id}`, v.entity_id)}</dd>
        <dt>Partner</dt><dd>${idLink(`/partners/${v.partner_id}`, v.partner_id)}</dd>
        <dt>Opened</dt><dd>${sast(v.opened_at)}</dd>
        <dt>Decided</dt><dd>${decided}</dd>
      </dl>
      <h2>Screened</h2>
      <ul>${v.screened.map((s) => html`<li>${s.name} (${s.kind}${s.date_of_birth
        ? `, born ${s.date_of_birth}` : ''}${s.id_number ? `, ID ${s.id_number}` : ''})</li>`)}</ul>
      <h2>Hits</h2>${hitsTable(v.hits)}${decideBlock(r, v)}`,
  }
}

export async function decideReview(r: PageRequest, form: URLSearchParams, reviewId: string) {
  const decision = form.get('decision') ?? ''
  if (decision !== 'clear' && decision !== 'confirm') throw new FormError('Choose a decision.')
  const reason = form.get('reason')?.trim() ?? ''
  if (reason === '') throw new FormError('Give a reason.')
  const done = await r.client.screening.decide({ review_id: reviewId, decision, reason })
  const what = done.status === 'clear_pending'
    ? 'Clearing asked: it awaits a second operator.' : `The review is ${done.status}.`
  return doneAt(`/screening/${reviewId}`, what)
}
