import {
  accountPage, changeAccountStatus, entitiesPage, entityPage,
} from './console-accounts.ts'
import { closeAccount, placeHold, releaseHold } from './console-account-actions.ts'
import { approvalsPage, decideApproval } from './console-approvals.ts'
import { casesPage, reportDownload, reportsPage } from './console-cases.ts'
import { decideReview, screeningPage, screeningReviewPage } from './console-screening.ts'
import { addNote, assignCase, casePage, decideCase, decideFiling } from './console-case.ts'
import type { Download, PageRequest, Rendered } from './console-kit.ts'
import { ledgerCheckPage, overviewPage } from './console-overview.ts'
import { decideKyb, kybQueuePage, kybReviewPage } from './console-kyb.ts'
import {
  issueCredential,
  issueNatsCreds,
  partnerPage,
  partnersPage,
  revokeCredential,
  revokeNatsUser,
  suspendPartner,
} from './console-partners.ts'
import { debitOrdersPage, paymentsPage, runClearing, runDebit } from './console-payments.ts'
import { redeliver, resumeEndpoint, webhooksPage } from './console-webhooks.ts'
import { railMessagePage, railsPage, refusalsPage, unansweredPage } from './console-rails.ts'
import { reconciliationPage } from './console-reconciliation.ts'
import { statementPage } from './console-statements.ts'
import {
  advanceClock,
  cardAuthorize,
  cardRefund,
  cardSettle,
  messagesPage,
  sandboxPage,
  showOtp,
} from './console-sandbox.ts'

// The console's pages and actions, one row each: a path (ids as uuid groups) and what answers
// it. A GET renders a page; a POST (its CSRF token already checked) does one `ops.` call and
// answers with where to go next (a redirect: reloading it repeats nothing) or, for what must
// be shown once (a new token), a page.

const id = '([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})'

interface GetRoute {
  path: RegExp
  page(r: PageRequest, ids: string[]): Promise<Rendered | Download>
}

interface PostRoute {
  path: RegExp
  act(r: PageRequest, form: URLSearchParams, ids: string[]): Promise<string | Rendered>
}

const exact = (path: string) => new RegExp(`^${path}$`)

export const get_routes: readonly GetRoute[] = [
  { path: exact('/'), page: (r) => overviewPage(r) },
  { path: exact('/ledger-check'), page: (r) => ledgerCheckPage(r) },
  { path: exact('/partners'), page: (r) => partnersPage(r) },
  { path: exact(`/partners/${id}`), page: (r, [p]) => partnerPage(r, p!) },
  { path: exact(`/partners/${id}/entities`), page: (r, [p]) => entitiesPage(r, p!) },
  { path: exact(`/entities/${id}`), page: (r, [e]) => entityPage(r, e!) },
  { path: exact(`/accounts/${id}`), page: (r, [a]) => accountPage(r, a!) },
  { path: exact(`/accounts/${id}/statement`), page: (r, [a]) => statementPage(r, a!) },
  { path: exact('/payments'), page: (r) => paymentsPage(r) },
  { path: exact('/payments/debit-orders'), page: (r) => debitOrdersPage(r) },
  { path: exact('/rails'), page: (r) => railsPage(r) },
  { path: exact('/rails/unanswered'), page: (r) => unansweredPage(r) },
  { path: exact('/rails/refusals'), page: (r) => refusalsPage(r) },
  { path: exact('/rails/reconciliation'), page: (r) => reconciliationPage(r) },
  { path: exact('/rails/message'), page: (r) => railMessagePage(r) },
  { path: exact('/approvals'), page: (r) => approvalsPage(r) },
  { path: exact('/sandbox'), page: (r) => sandboxPage(r) },
  { path: exact('/sandbox/messages'), page: (r) => messagesPage(r) },
  { path: exact('/kyb'), page: (r) => kybQueuePage(r) },
  { path: exact('/webhooks'), page: (r) => webhooksPage(r) },
  { path: exact(`/kyb/${id}`), page: (r, [e]) => kybReviewPage(r, e!) },
  { path: exact('/cases'), page: (r) => casesPage(r) },
  { path: exact('/cases/reports'), page: (r) => reportsPage(r) },
  { path: exact(`/cases/reports/${id}/goaml`), page: (r, [p]) => reportDownload(r, p!) },
  { path: exact(`/cases/${id}`), page: (r, [c]) => casePage(r, c!) },
  { path: exact('/screening'), page: (r) => screeningPage(r) },
  { path: exact(`/screening/${id}`), page: (r, [v]) => screeningReviewPage(r, v!) },
]

export const post_routes: readonly PostRoute[] = [
  { path: exact(`/partners/${id}/credentials`), act: (r, f, [p]) => issueCredential(r, f, p!) },
  {
    path: exact(`/partners/${id}/credentials/${id}/revoke`),
    act: (r, _f, [p, c]) => revokeCredential(r, p!, c!),
  },
  { path: exact(`/partners/${id}/nats`), act: (r, f, [p]) => issueNatsCreds(r, f, p!) },
  {
    path: exact(`/partners/${id}/nats/${id}/revoke`),
    act: (r, _f, [p, u]) => revokeNatsUser(r, p!, u!),
  },
  { path: exact(`/partners/${id}/suspend`), act: (r, _f, [p]) => suspendPartner(r, p!, true) },
  { path: exact(`/partners/${id}/unsuspend`), act: (r, _f, [p]) => suspendPartner(r, p!, false) },
  { path: exact(`/accounts/${id}/status`), act: (r, f, [a]) => changeAccountStatus(r, f, a!) },
  { path: exact(`/accounts/${id}/holds`), act: (r, f, [a]) => placeHold(r, f, a!) },
  {
    path: exact(`/accounts/${id}/holds/${id}/release`),
    act: (r, f, [a, h]) => releaseHold(r, f, a!, h!),
  },
  { path: exact(`/accounts/${id}/close`), act: (r, f, [a]) => closeAccount(r, f, a!) },
  { path: exact('/payments/clearing'), act: (r) => runClearing(r) },
  { path: exact('/payments/debit-run'), act: (r) => runDebit(r) },
  { path: exact(`/approvals/${id}/approve`), act: (r, f, [a]) => decideApproval(r, f, a!, true) },
  { path: exact(`/approvals/${id}/reject`), act: (r, f, [a]) => decideApproval(r, f, a!, false) },
  { path: exact('/sandbox/advance'), act: (r, f) => advanceClock(r, f) },
  { path: exact('/sandbox/otp'), act: (r, f) => showOtp(r, f) },
  { path: exact('/sandbox/card/authorize'), act: (r, f) => cardAuthorize(r, f) },
  { path: exact('/sandbox/card/settle'), act: (r, f) => cardSettle(r, f) },
  { path: exact('/sandbox/card/refund'), act: (r, f) => cardRefund(r, f) },
  { path: exact(`/kyb/${id}/decide`), act: (r, f, [e]) => decideKyb(r, f, e!) },
  { path: exact(`/cases/${id}/notes`), act: (r, f, [c]) => addNote(r, f, c!) },
  { path: exact(`/cases/${id}/assign`), act: (r, f, [c]) => assignCase(r, f, c!) },
  { path: exact(`/cases/${id}/decide`), act: (r, f, [c]) => decideCase(r, f, c!) },
  { path: exact(`/screening/${id}/decide`), act: (r, f, [v]) => decideReview(r, f, v!) },
  {
    path: exact(`/cases/${id}/filing/approve`),
    act: (r, f, [c]) => decideFiling(r, f, c!, true),
  },
  {
    path: exact(`/cases/${id}/filing/reject`),
    act: (r, f, [c]) => decideFiling(r, f, c!, false),
  },
  { path: exact(`/webhooks/${id}/redeliver`), act: (r, f, [e]) => redeliver(r, f, e!) },
  {
    path: exact(`/webhooks/endpoints/${id}/resume`),
    act: (r, f, [p]) => resumeEndpoint(r, f, p!),
  },
]

/** The route whose path matches, and the ids it names. */
export function route<R extends { path: RegExp }>(routes: readonly R[], pathname: string) {
  for (const candidate of routes) {
    const m = candidate.path.exec(pathname)
    if (m) return { route: candidate, ids: m.slice(1) }
  }
  return undefined
}
