import { html, rand, sast, type Html } from './console-html.ts'
import { statusBadge, type Ops, type PageRequest, type Reply } from './console-kit.ts'

// The account page's status header, its legal holds and its closure (`ops.account.status`,
// `ops.account.holds`, `ops.account.hold.place`, `ops.account.hold.release`,
// `ops.account.close`): what the page shows and the forms it offers. The forms' actions are
// in console-account-actions.ts; a refusal comes back here as `Problems` shown beside the
// form that caused it, with what the operator typed kept.

export type AccountShown = Reply<Ops['accounts']['show']>
export type StatusView = Reply<Ops['accounts']['status']>
export type Hold = Reply<Ops['accounts']['holds']>['holds'][number]
type Approval = Reply<Ops['approvals']['list']>['approvals'][number]
type Payee = Reply<Ops['accounts']['list']>['accounts'][number]

/** What a refused form brings back to the account page: its message and the typed values. */
export interface Problems {
  holds?: Html
  close?: Html
  /** The form as it was sent, to fill the close form again. */
  form?: URLSearchParams
  /** The HTTP status of the page (400 for the form's mistake, the bank's 400 or 422). */
  status?: number
}

/** What the sections need beyond the account itself, fetched together. */
export interface Lifecycle {
  status: StatusView
  holds: Hold[]
  /** The waiting release requests of this account's holds, by hold id. */
  releases: Map<string, Approval>
  /** The customer's other accounts, for the closing payout. */
  payees: Payee[]
  /** Whether released holds are shown too (`?holds=all`). */
  all: boolean
}

/** The newest waiting approvals read to find the releases of this account's holds. */
const approvals_read = 100

export async function lifecycleOf(r: PageRequest, account: AccountShown): Promise<Lifecycle> {
  const all = r.url.searchParams.get('holds') === 'all'
  const id = account.account_id
  const [status, { holds }, { accounts }] = await Promise.all([
    r.client.accounts.status({ account_id: id }),
    r.client.accounts.holds({ account_id: id, ...(all ? { all: true } : {}) }),
    r.client.accounts.list({ entity_id: account.entity_id }),
  ])
  const releases = new Map<string, Approval>()
  if (holds.some((h) => h.released_at === null)) {
    const waiting = await r.client.approvals.list({ state: 'pending_approval',
      limit: approvals_read })
    for (const a of waiting.approvals) {
      if (a.kind === 'hold_release' && a.account_id === id) {
        releases.set(String(a.request.hold_id), a)
      }
    }
  }
  const payees = accounts.filter((a) => a.account_id !== id)
  return { status, holds, releases, payees, all }
}

const changed_by_words = { partner: 'the partner', operator: 'an operator',
  system: 'the bank itself' } as const

/** The status under the page's heading: badge, since when, by whom, why. */
export function statusHeader(s: StatusView): Html {
  const since = s.changed_at ? html` since ${sast(s.changed_at)}` : ''
  const by = s.changed_by ? html`, by ${changed_by_words[s.changed_by]}` : ''
  const why = s.reason ? html` (${s.reason})` : ''
  return html`<p class="account-status">Status: ${statusBadge(s.status)}${since}${by}${why}</p>`
}

function holdState(h: Hold, accountId: string, life: Lifecycle, csrf: string): Html {
  if (h.released_at !== null) {
    const by = h.released_by === 'system' ? 'the bank (expired)' : h.released_by
    return html`Released ${sast(h.released_at)} by <span class="id">${by}</span>:
      ${h.release_reason}`
  }
  const waiting = life.releases.get(h.hold_id)
  if (waiting) {
    return html`<span class="pending">Release waiting for a second operator</span>
      (<a href="/approvals">Approvals</a>; asked by ${waiting.requested_by_name}
      ${sast(waiting.requested_at)}: ${String(waiting.request.reason ?? '')})`
  }
  const field = `release-${h.hold_id}`
  return html`<form method="post" action="/accounts/${accountId}/holds/${h.hold_id}/release"
      class="inline">
    <input type="hidden" name="csrf" value="${csrf}" />
    <label for="${field}">Reason to release</label>
    <input type="text" id="${field}" name="reason" maxlength="200" required />
    <button type="submit">Release</button>
  </form>`
}

function holdRows(accountId: string, life: Lifecycle, csrf: string): Html {
  if (life.holds.length === 0) {
    return html`<p>${life.all ? 'No legal holds, ever.' : 'No legal hold stands.'}</p>`
  }
  const rows = life.holds.map((h) => html`<tr>
      <td>${h.reference}</td>
      <td class="amount">${rand(h.amount)}</td>
      <td>${sast(h.placed_at)} by <span class="id">${h.placed_by}</span></td>
      <td>${h.expires_at ? sast(h.expires_at) : 'never'}</td>
      <td>${holdState(h, accountId, life, csrf)}</td>
    </tr>`)
  return html`<table>
    <thead><tr>
      <th scope="col">Reference</th><th scope="col" class="amount">Amount</th>
      <th scope="col">Placed</th><th scope="col">Expires</th><th scope="col">Release</th>
    </tr></thead>
    <tbody>${rows}</tbody>
  </table>`
}

function placeHoldForm(accountId: string, csrf: string): Html {
  return html`<form method="post" action="/accounts/${accountId}/holds" class="filters">
    <input type="hidden" name="csrf" value="${csrf}" />
    <label for="hold-amount">Amount to hold (rand)</label>
    <input type="text" id="hold-amount" name="amount" inputmode="decimal" required />
    <label for="hold-reference">Reference (the order it serves)</label>
    <input type="text" id="hold-reference" name="reference" maxlength="100" required />
    <label for="hold-expires">Expires (SAST, optional)</label>
    <input type="datetime-local" id="hold-expires" name="expires_at" />
    <p><button type="submit">Place the hold</button></p>
  </form>`
}

/** The legal holds: the list (released ones on request), a release form each, a new one. */
export function holdsSection(account: AccountShown, life: Lifecycle, csrf: string,
    problems: Problems): Html {
  const id = account.account_id
  const toggle = life.all
    ? html`<a href="/accounts/${id}#legal-holds">Only the holds standing now</a>`
    : html`<a href="/accounts/${id}?holds=all#legal-holds">Released holds too</a>`
  const place = account.status === 'closed'
    ? html`<p>A closed account takes no new hold.</p>`
    : placeHoldForm(id, csrf)
  return html`<h2 id="legal-holds">Legal holds</h2>
    <p>
      A legal hold (a garnishee order, say) keeps its amount out of the available balance until
      it is released or expires. A release above the dual-control threshold waits for a second
      operator. ${toggle}
    </p>
    ${holdRows(id, life, csrf)}${problems.holds ?? ''}${place}`
}

function kept(form: URLSearchParams | undefined, name: string): string {
  return form?.get(name)?.trim() ?? ''
}

function textField(id: string, label: string, name: string, form: URLSearchParams | undefined,
    max: number): Html {
  return html`<label for="${id}">${label}</label>
    <input type="text" id="${id}" name="${name}" maxlength="${max}"
      value="${kept(form, name)}" />`
}

function radio(value: string, label: string, chosen: string): Html {
  const checked = value === chosen ? html`checked` : ''
  return html`<label class="check choice"><input type="radio" name="payout" value="${value}"
    ${checked} /> ${label}</label>`
}

function payeeSelect(payees: readonly Payee[], form: URLSearchParams | undefined): Html {
  if (payees.length === 0) return html`<p>The customer has no other account.</p>`
  const chosen = kept(form, 'pay_to_account_id')
  const options = payees.map((p) => html`<option value="${p.account_id}"
    ${p.account_id === chosen ? html`selected` : ''}>${p.account_number} (${p.kind})</option>`)
  return html`<label for="close-to">Account of the same customer</label>
    <select id="close-to" name="pay_to_account_id">${options}</select>`
}

function payoutChoice(account: AccountShown, life: Lifecycle, form?: URLSearchParams): Html {
  const balance = BigInt(account.balance)
  const d = balance === 0n ? 'none' : life.payees.length > 0 ? 'account' : 'eft'
  const chosen = kept(form, 'payout') || d
  return html`<fieldset>
    <legend>Pay the balance of ${rand(account.balance)} out</legend>
    ${radio('account', 'To another account of the same customer (at once)', chosen)}
    ${payeeSelect(life.payees, form)}
    ${radio('eft', 'To another bank by EFT (with the next clearing cycle)', chosen)}
    ${textField('close-eft-number', 'Account number', 'eft_account_number', form, 20)}
    ${textField('close-eft-branch', 'Branch code', 'eft_branch_code', form, 6)}
    ${textField('close-eft-name', 'Account holder', 'eft_name', form, 100)}
    ${textField('close-eft-ref', 'Reference', 'eft_ref', form, 30)}
    ${radio('none', 'Nothing to pay out (the balance is nil)', chosen)}
  </fieldset>`
}

/** Closing the account: why, where its balance goes, and a confirmation. */
export function closeSection(account: AccountShown, life: Lifecycle, csrf: string,
    problems: Problems): Html {
  const id = account.account_id
  if (account.status === 'closed') {
    return html`<h2 id="close">Close the account</h2><p>The account is closed.</p>`
  }
  const form = problems.form
  return html`<h2 id="close">Close the account</h2>
    <p>
      Closing is final: the balance is paid out without a fee, the account's cards and the
      debit orders into it are cancelled, and payments to it are sent back. The bank refuses
      while payments are pending or a legal hold stands, and says so here.
    </p>
    ${problems.close ?? ''}
    <form method="post" action="/accounts/${id}/close" class="payout">
      <input type="hidden" name="csrf" value="${csrf}" />
      ${textField('close-reason', 'Reason for closing', 'reason', form, 200)}
      ${payoutChoice(account, life, form)}
      <label class="check"><input type="checkbox" name="confirm" value="yes" required />
        I mean to close this account for good</label>
      <p><button type="submit">Close the account</button></p>
    </form>`
}

const obstacle_words: Record<string, string> = {
  pending_transactions: 'Pending transactions',
  legal_holds: 'Legal holds',
  payout_missing: 'No payout named',
  payout_refused: 'Payout refused',
}

/** A refusal's `details` ({obstacle or field, message}) as a list; empty when it has none. */
export function detailList(details: readonly unknown[]): Html {
  const items = details.flatMap((d) => {
    if (typeof d !== 'object' || d === null || !('message' in d)) return []
    const { obstacle, field, message } = d as { obstacle?: unknown; field?: unknown;
      message: unknown }
    const name = typeof obstacle === 'string' ? obstacle_words[obstacle] ?? obstacle
      : typeof field === 'string' ? field : undefined
    return [html`<li>${name ? html`<strong>${name}</strong>: ` : ''}${String(message)}</li>`]
  })
  return items.length > 0 ? html`<ul class="problems">${items}</ul>` : html``
}

/** A refusal shown beside its form: a sentence, and the bank's list of what stands in the way. */
export function refusal(what: string, message: string, details: readonly unknown[] = []): Html {
  const list = detailList(details)
  const said = list.text ? html`<p>${what}:</p>${list}` : html`<p>${what}: ${message}</p>`
  return html`<div class="error" role="alert">${said}</div>`
}
