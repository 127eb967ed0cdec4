import { html, rand, sast } from './console-html.ts'
import {
  closeSection, holdsSection, lifecycleOf, statusHeader, type Problems,
} from './console-account-sections.ts'
import {
  choice,
  doneAt,
  cursorPager,
  filterForm,
  idLink,
  matching,
  pageNumber,
  pager,
  param,
  slicePage,
  statusBadge,
  table,
  notice,
  type Ops,
  type PageRequest,
  type Rendered,
  type Reply,
} from './console-kit.ts'

// Entities → accounts → transactions, of any partner (`ops.entity.list`, `ops.account.list`,
// `ops.account.show`, `ops.account.transactions`). Each transaction row shows the bank's own
// check of its hash chain (`verified`: its `tx_sha` recomputed from the row and the one
// before it), so a tampered row stands out where it is listed. An account's status is a
// badge wherever it is shown: the entity's list takes it from the `ops.account.show` it
// already makes per listed account (for the balances; at most a page of 25), so the badge
// costs no call of its own. The account page adds its status's history line, legal holds
// and closure (console-account-sections.ts).

type Entity = Reply<Ops['entities']['list']>['entities'][number]
type AccountShown = Reply<Ops['accounts']['show']>
type Transaction = Reply<Ops['accounts']['transactions']>['transactions'][number]

const review_states = ['', 'pending', 'approved', 'rejected'] as const
const tx_statuses = ['', 'Pending', 'Successful', 'Failed', 'Reversed', 'Invalid'] as const
/** Transactions per page of an account (the bank's keyset paging, newest first). */
export const transaction_rows = 50

function entityName(e: Entity): string {
  return e.entity_type === 'Business' ? e.name || e.trading_name : `${e.first_name} ${e.last_name}`
}

export async function entitiesPage(r: PageRequest, partnerId: string): Promise<Rendered> {
  const q = param(r.url, 'q')
  const review = choice(r.url, 'review', review_states, '')
  const { entities } = await r.client.entities.list({ partner_id: partnerId })
  const reviewed = review ? entities.filter((e) => e.review_status === review) : entities
  const found = matching(
    reviewed,
    q,
    (e) => `${entityName(e)} ${e.registration_number} ${e.id_number} ${e.id}`,
  )
  const pageNo = pageNumber(r.url)
  const { rows, more } = slicePage(found, pageNo)
  const list = table<Entity>(
    rows,
    [
      { label: 'Entity', cell: (e) => html`<a href="/entities/${e.id}">${entityName(e)}</a>` },
      { label: 'Type', cell: (e) => `${e.entity_type}${e.is_root ? ' (root)' : ''}` },
      { label: 'Review', cell: (e) => e.review_status },
      { label: 'Registration or ID', cell: (e) => e.registration_number || e.id_number },
      { label: 'Created', cell: (e) => sast(e.created_at) },
    ],
    'No entities match.',
  )
  const path = `/partners/${partnerId}/entities`
  const filter = filterForm(path, [
    { name: 'q', label: 'Name, number or id', value: q },
    { name: 'review', label: 'Review state', value: review, options: review_states },
  ])
  return {
    title: 'Entities',
    current: '/partners',
    body: html`<p>Partner ${idLink(`/partners/${partnerId}`, partnerId)}</p>
      ${filter}${list}${pager(path, { q, review }, pageNo, more)}`,
  }
}

export async function entityPage(r: PageRequest, entityId: string): Promise<Rendered> {
  const { accounts } = await r.client.accounts.list({ entity_id: entityId })
  const pageNo = pageNumber(r.url)
  const { rows, more } = slicePage(accounts, pageNo)
  // One call per account shown (at most a page's worth) for its balances.
  const shown = await Promise.all(
    rows.map((a) => r.client.accounts.show({ account_id: a.account_id })),
  )
  const partnerId = shown[0]?.partner_id ?? accounts[0]?.partner_id
  const list = table<AccountShown>(
    shown,
    [
      {
        label: 'Account',
        cell: (a) => html`<a href="/accounts/${a.account_id}">${a.account_number}</a>`,
      },
      { label: 'Kind', cell: (a) => a.kind },
      { label: 'Status', cell: (a) => statusBadge(a.status) },
      { label: 'Balance', cell: (a) => rand(a.balance), amount: true },
      { label: 'Available', cell: (a) => rand(a.available_balance), amount: true },
      { label: 'Opened', cell: (a) => sast(a.created_at) },
    ],
    'No accounts yet (one opens when the entity is approved).',
  )
  const up = partnerId
    ? html`<p>Partner ${idLink(`/partners/${partnerId}/entities`, partnerId)}</p>`
    : ''
  return {
    title: 'Accounts',
    current: '/partners',
    body: html`<p>Entity <span class="id">${entityId}</span></p>
      ${up}${list}${pager(`/entities/${entityId}`, {}, pageNo, more)}
      <p><a href="/audit?target=${entityId}">This entity's audit trail</a></p>`,
  }
}

function chainCell(t: Transaction) {
  return t.verified
    ? html`<span class="ok" title="${t.tx_sha}">✓ intact</span>`
    : html`<span class="problem" title="${t.tx_sha}">✗ broken</span>`
}

const transaction_columns = [
  { label: 'Date', cell: (t: Transaction) => sast(t.date) },
  { label: 'Type', cell: (t: Transaction) => `${t.tx_type} ${t.tx_payment_type}` },
  { label: 'Reference', cell: (t: Transaction) => t.ref },
  { label: 'Recipient', cell: (t: Transaction) => t.recipient_name },
  { label: 'Debit', cell: (t: Transaction) => rand(t.debit), amount: true },
  { label: 'Credit', cell: (t: Transaction) => rand(t.credit), amount: true },
  { label: 'Fee', cell: (t: Transaction) => rand(t.fee), amount: true },
  { label: 'Balance', cell: (t: Transaction) => rand(t.running_balance), amount: true },
  { label: 'Status', cell: (t: Transaction) => t.status },
  { label: 'Hash chain', cell: chainCell },
  { label: 'Id', cell: (t: Transaction) => html`<span class="id">${t.tx_id}</span>` },
]

/** The account's transactions, one page by the bank's cursor, filtered on that page. */
async function transactionsPart(r: PageRequest, accountId: string) {
  const cursor = param(r.url, 'cursor')
  const status = choice(r.url, 'status', tx_statuses, '')
  const q = param(r.url, 'q')
  const page = await r.client.accounts.transactions({
    account_id: accountId,
    limit: transaction_rows,
    ...(cursor ? { cursor } : {}),
  })
  const byStatus = status ? page.transactions.filter((t) => t.status === status) : page.transactions
  const rows = matching(byStatus, q, (t) => `${t.ref} ${t.recipient_name} ${t.tx_id}`)
  const broken = page.transactions.filter((t) => !t.verified).length
  const path = `/accounts/${accountId}`
  const filter = filterForm(path, [
    { name: 'q', label: 'Reference, recipient or id (this page)', value: q },
    { name: 'status', label: 'Status (this page)', value: status, options: tx_statuses },
  ])
  const chain = broken
    ? html`<p class="error" role="alert">${broken} rows on this page fail the hash-chain check.</p>`
    : html`<p class="ok">Every row on this page passes the hash-chain check.</p>`
  return html`${chain}${filter}${table(rows, transaction_columns, 'No transactions.')}
    ${cursorPager(path, { q, status, cursor }, page.next_cursor)}`
}

/**
 * An account: its status, balances, status form, legal holds, closure and transactions.
 * `problems` is a refused form's message and values (shown beside that form, with its status).
 */
export async function accountPage(r: PageRequest, accountId: string,
    problems: Problems = {}): Promise<Rendered> {
  const [account, transactions] = await Promise.all([
    r.client.accounts.show({ account_id: accountId }),
    transactionsPart(r, accountId),
  ])
  const life = await lifecycleOf(r, account)
  const held = BigInt(account.balance) - BigInt(account.available_balance)
  return {
    title: `Account ${account.account_number}`,
    current: '/partners',
    ...(problems.status === undefined ? {} : { status: problems.status }),
    body: html`${statusHeader(life.status)}${notice(r.url)}
      <ul class="figures">
        <li>Balance<strong>${rand(account.balance)}</strong></li>
        <li>Available<strong>${rand(account.available_balance)}</strong></li>
        <li>Held<strong>${rand(held)}</strong></li>
        <li>Kind<strong>${account.kind}</strong></li>
      </ul>
      ${statusForm(accountId, r.csrf)}
      <p><a href="/accounts/${accountId}/statement">Statement</a> (PDF or camt.053)</p>
      <p>
        Entity ${idLink(`/entities/${account.entity_id}`, account.entity_id)} · partner
        ${idLink(`/partners/${account.partner_id}`, account.partner_id)}
      </p>
      ${holdsSection(account, life, r.csrf, problems)}
      ${closeSection(account, life, r.csrf, problems)}
      <h2>Transactions</h2>
      ${transactions}`,
  }
}

const status_actions = ['freeze', 'unfreeze', 'block', 'reactivate'] as const

/** The bank's status changes of an account, each with its reason (`ops.account.*`). */
function statusForm(accountId: string, csrf: string) {
  const options = status_actions.map((a) => html`<option value="${a}">${a}</option>`)
  return html`<form method="post" action="/accounts/${accountId}/status" class="inline">
    <input type="hidden" name="csrf" value="${csrf}" />
    <label for="status-action">Change the status</label>
    <select id="status-action" name="action">${options}</select>
    <label for="status-reason">Reason</label>
    <input type="text" id="status-reason" name="reason" maxlength="200" required />
    <button type="submit">Change</button>
  </form>`
}

/** Freezes, unfreezes, blocks or reactivates the account as the bank, with the form's reason. */
export async function changeAccountStatus(r: PageRequest, form: URLSearchParams,
    accountId: string): Promise<string> {
  const action = form.get('action') ?? ''
  const request = { account_id: accountId, reason: form.get('reason')?.trim() ?? '' }
  const path = `/accounts/${accountId}`
  if (action === 'freeze') {
    return doneAt(path, `Status: ${(await r.client.accounts.freeze(request)).status}.`)
  }
  if (action === 'unfreeze') {
    return doneAt(path, `Status: ${(await r.client.accounts.unfreeze(request)).status}.`)
  }
  if (action === 'block') {
    return doneAt(path, `Status: ${(await r.client.accounts.block(request)).status}.`)
  }
  if (action === 'reactivate') {
    return doneAt(path, `Status: ${(await r.client.accounts.reactivate(request)).status}.`)
  }
  return doneAt(path, 'No such status change.')
}
