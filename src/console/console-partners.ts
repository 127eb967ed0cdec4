import { BankApiError } from '../client/transport.ts'
import { html, sast, type Html } from './console-html.ts'
import {
  actionForm,
  doneAt,
  filterForm,
  idLink,
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

// Partners: the list, and one partner's credentials and NATS identities with the buttons
// that issue, revoke and suspend them (`ops.credential.*`, `ops.partner.nats_*`,
// `ops.partner.suspend`). A new token or credentials file is shown once, in the reply to
// the POST that made it: never in a URL, never stored by the console.

type Partner = Reply<Ops['partners']['list']>['partners'][number]
type Credential = Reply<Ops['credentials']['list']>['credentials'][number]
type NatsUsers = Reply<Ops['partners']['natsUsers']>
type NatsUser = NatsUsers['users'][number]

const permissions = ['read', 'write', 'payments', 'card_details'] as const

export async function partnersPage(r: PageRequest): Promise<Rendered> {
  const q = param(r.url, 'q')
  const { partners } = await r.client.partners.list()
  const found = matching(partners, q, (p) => `${p.name} ${p.email} ${p.partner_id}`)
  const pageNo = pageNumber(r.url)
  const { rows, more } = slicePage(found, pageNo)
  const list = table<Partner>(
    rows,
    [
      { label: 'Partner', cell: (p) => html`<a href="/partners/${p.partner_id}">${p.name}</a>` },
      { label: 'E-mail', cell: (p) => p.email },
      { label: 'Id', cell: (p) => html`<span class="id">${p.partner_id}</span>` },
      { label: 'Onboarded', cell: (p) => sast(p.created_at) },
    ],
    q ? 'No partner matches.' : 'No partners yet.',
  )
  const filter = filterForm('/partners', [{ name: 'q', label: 'Name, e-mail or id', value: q }])
  return {
    title: 'Partners',
    current: '/partners',
    body: html`${filter}${list}${pager('/partners', { q }, pageNo, more)}`,
  }
}

async function partnerOf(r: PageRequest, partnerId: string): Promise<Partner | undefined> {
  const { partners } = await r.client.partners.list()
  return partners.find((p) => p.partner_id === partnerId)
}

function credentialRows(partnerId: string, list: Credential[], csrf: string): Html {
  return table<Credential>(
    list,
    [
      { label: 'Label', cell: (c) => c.label },
      { label: 'Id', cell: (c) => html`<span class="id">${c.id}</span>` },
      { label: 'Permissions', cell: (c) => c.permissions.join(', ') },
      { label: 'Issued', cell: (c) => sast(c.created_at) },
      { label: 'Expires', cell: (c) => sast(c.expires_at) || 'never' },
      {
        label: 'State',
        cell: (c) =>
          c.revoked_at
            ? `revoked ${sast(c.revoked_at)}`
            : actionForm(`/partners/${partnerId}/credentials/${c.id}/revoke`, csrf, 'Revoke'),
      },
    ],
    'No credentials.',
  )
}

function natsRows(partnerId: string, users: NatsUser[], csrf: string): Html {
  return table<NatsUser>(
    users,
    [
      { label: 'Label', cell: (u) => u.label },
      { label: 'Public key', cell: (u) => html`<span class="id">${u.public_key}</span>` },
      { label: 'Issued', cell: (u) => sast(u.created_at) },
      { label: 'Expires', cell: (u) => sast(u.expires_at) || 'never' },
      {
        label: 'State',
        cell: (u) =>
          u.revoked_at
            ? `revoked ${sast(u.revoked_at)}`
            : actionForm(`/partners/${partnerId}/nats/${u.id}/revoke`, csrf, 'Revoke'),
      },
    ],
    'No NATS users (the bank runs without NATS identities for partners).',
  )
}

function natsForm(partnerId: string, csrf: string): Html {
  return html`<form method="post" action="/partners/${partnerId}/nats">
    <input type="hidden" name="csrf" value="${csrf}" />
    <label for="nats-label">Label of the NATS user</label>
    <input type="text" id="nats-label" name="label" maxlength="100" />
    <p><button type="submit">Issue a NATS credentials file</button></p>
  </form>`
}

function issueForms(partnerId: string, csrf: string, nats: boolean): Html {
  const boxes = permissions.map(
    (p) =>
      html`<label class="check"
        ><input
          type="checkbox"
          name="permissions"
          value="${p}"
          ${p === 'card_details' ? '' : html`checked`}
        />
        ${p}</label
      >`,
  )
  return html`<div class="decide">
    <form method="post" action="/partners/${partnerId}/credentials">
      <input type="hidden" name="csrf" value="${csrf}" />
      <fieldset>
        <legend>Permissions</legend>
        ${boxes}
      </fieldset>
      <label for="cred-label">Label</label>
      <input type="text" id="cred-label" name="label" maxlength="100" />
      <p><button type="submit">Issue a credential</button></p>
    </form>
    ${nats ? natsForm(partnerId, csrf) : ''}
  </div>`
}

/**
 * The partner's NATS users. A bank on an open NATS server (no `bank nats init`) issues no NATS
 * identities and answers 409: the page then says so, and offers both standing buttons (the
 * standing is read from the NATS identities' reply only).
 */
async function natsUsersOf(r: PageRequest, partnerId: string): Promise<NatsUsers | undefined> {
  try {
    return await r.client.partners.natsUsers({ partner_id: partnerId })
  } catch (error) {
    if (error instanceof BankApiError && error.code === 409) return undefined
    throw error
  }
}

function suspension(partnerId: string, nats: NatsUsers | undefined, csrf: string): Html {
  if (!nats) {
    return html`<p>The standing shows with NATS identities, which this bank does not issue.</p>
      ${actionForm(`/partners/${partnerId}/suspend`, csrf, 'Suspend the partner')}
      ${actionForm(`/partners/${partnerId}/unsuspend`, csrf, 'Let the partner back')}`
  }
  return nats.suspended
    ? html`<p><strong class="problem">Suspended.</strong> Its tokens and NATS users are refused.</p>
        ${actionForm(`/partners/${partnerId}/unsuspend`, csrf, 'Let the partner back')}`
    : html`<p>Active.</p>
        ${actionForm(`/partners/${partnerId}/suspend`, csrf, 'Suspend the partner')}`
}

export async function partnerPage(r: PageRequest, partnerId: string): Promise<Rendered> {
  const [partner, creds, nats] = await Promise.all([
    partnerOf(r, partnerId),
    r.client.credentials.list({ partner_id: partnerId }),
    natsUsersOf(r, partnerId),
  ])
  if (!partner)
    return {
      title: 'Not found',
      current: '/partners',
      body: html`<p>No such partner.</p>`,
      status: 404,
    }
  const body = html`${notice(r.url)}
    <dl>
      <dt>Id</dt>
      <dd class="id">${partner.partner_id}</dd>
      <dt>E-mail</dt>
      <dd>${partner.email}</dd>
      <dt>Root entity</dt>
      <dd>${idLink(`/entities/${partner.root_entity_id}`, partner.root_entity_id)}</dd>
    </dl>
    <p>
      <a href="/partners/${partnerId}/entities">Entities and accounts</a> ·
      <a href="/payments/debit-orders?partner_id=${partnerId}">Debit orders</a> ·
      <a href="/webhooks?partner_id=${partnerId}">Webhook deliveries</a> ·
      <a href="/audit?target=${partnerId}">Audit trail</a>
    </p>
    <h2>Standing</h2>
    ${suspension(partnerId, nats, r.csrf)}
    <h2>Credentials</h2>
    ${credentialRows(partnerId, creds.credentials, r.csrf)}
    <h2>NATS identities</h2>
    ${
      nats
        ? natsRows(partnerId, nats.users, r.csrf)
        : html`<p>This bank runs on an open NATS server: it issues no NATS identities.</p>`
    }
    <h2>Issue</h2>
    ${issueForms(partnerId, r.csrf, nats !== undefined)}`
  return { title: partner.name, current: '/partners', body }
}

function shownOnce(title: string, what: string, secret: string, back: string): Rendered {
  return {
    title,
    current: '/partners',
    body: html`<p class="notice" role="status">
        ${what} It is shown this once: the bank keeps only its hash. Copy it now.
      </p>
      <label for="secret">Secret</label>
      <textarea id="secret" readonly rows="${secret.includes('\n') ? 14 : 2}">${secret}</textarea>
      <p><a href="${back}">Back to the partner</a></p>`,
  }
}

export async function issueCredential(r: PageRequest, form: URLSearchParams, partnerId: string) {
  const asked = form
    .getAll('permissions')
    .filter((p) => (permissions as readonly string[]).includes(p))
  const label = form.get('label')?.trim()
  const made = await r.client.credentials.create({
    partner_id: partnerId,
    permissions: asked as Array<(typeof permissions)[number]>,
    ...(label ? { label } : {}),
  })
  return shownOnce(
    'Credential issued',
    `Credential ${made.id} issued.`,
    made.token,
    `/partners/${partnerId}`,
  )
}

export async function issueNatsCreds(r: PageRequest, form: URLSearchParams, partnerId: string) {
  const label = form.get('label')?.trim()
  const made = await r.client.partners.natsCreds({
    partner_id: partnerId,
    ...(label ? { label } : {}),
  })
  return shownOnce(
    'NATS credentials issued',
    `NATS user ${made.public_key} issued.`,
    made.creds,
    `/partners/${partnerId}`,
  )
}

export async function revokeCredential(r: PageRequest, partnerId: string, credentialId: string) {
  await r.client.credentials.revoke({ credential_id: credentialId })
  return doneAt(`/partners/${partnerId}`, `Credential ${credentialId} revoked.`)
}

export async function revokeNatsUser(r: PageRequest, partnerId: string, userId: string) {
  await r.client.partners.natsRevoke({ partner_id: partnerId, user_id: userId })
  return doneAt(`/partners/${partnerId}`, `NATS user ${userId} revoked.`)
}

export async function suspendPartner(r: PageRequest, partnerId: string, suspend: boolean) {
  if (suspend) await r.client.partners.suspend({ partner_id: partnerId })
  else await r.client.partners.unsuspend({ partner_id: partnerId })
  return doneAt(`/partners/${partnerId}`, suspend ? 'Partner suspended.' : 'Partner let back.')
}
