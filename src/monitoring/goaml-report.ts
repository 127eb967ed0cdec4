// A suspicious-transaction report (STR) in the FIC's goAML XML: the `report` element of the
// goAML schema (5.0.1, test/fixtures/goaml/), its header (the bank as reporting entity, the
// report's reference and date, the reporting office), the reason, and one `transaction` per
// movement of the case: the bank's customer's account on one side (`t_from_my_client` for
// money out, `t_to_my_client` for money in) and the counterparty's account on the other.
// Codes from the schema's lookup lists: submission E (electronic), report STR, currency ZAR,
// country ZA; funds, conduction, account type and status are the FIC's lookups, which goAML
// issues to reporting entities with the schema; the generic `-` (unknown) stands where the
// bank has no code of its own yet. Countries are goAML's two-letter codes: the bank's
// three-letter ones (ISO 3166-1 alpha-3) converted by i18n-iso-countries.

import countries from 'i18n-iso-countries'

export interface GoamlSettings {
  rentityId: number
  reportingUser: string
  address: string
  city: string
}

export interface GoamlPerson {
  first_name: string
  last_name: string
  birthdate: Date | null
  id_number: string | null
  /** ISO 3166-1 alpha-3, as the bank keeps it. */
  country: string
  /** The phone number as the bank has it (digits; a leading + and country code dropped). */
  phone: string
}

export interface GoamlAccount {
  account_id: string
  account_number: string
  opened: Date
  balance: bigint
  status: string
}

export interface GoamlMovement {
  tx_id: string
  account_id: string
  created_at: Date
  tx_type: string
  amount: bigint
  credit: bigint
  ref: string
  recipient_name: string
  recipient_account: string
  recipient_branch: string
}

export interface GoamlInput {
  settings: GoamlSettings
  institution: { name: string; branchCode: string }
  reference: string
  reason: string
  action: string
  reportedAt: Date
  customer: { entity_id: string; name: string; persons: GoamlPerson[] }
  accounts: GoamlAccount[]
  movements: GoamlMovement[]
}

/** The report's XML, as filed. */
export function goamlReport(input: GoamlInput): string {
  const accounts = new Map(input.accounts.map((a) => [a.account_id, a]))
  const s = input.settings
  const header = [
    el('rentity_id', String(s.rentityId)),
    el('rentity_branch', input.institution.branchCode),
    el('submission_code', 'E'),
    el('report_code', 'STR'),
    el('entity_reference', input.reference),
    el('report_date', sqlDate(input.reportedAt)),
    el('currency_code_local', 'ZAR'),
    el('reporting_user_code', s.reportingUser),
    el('location', [el('address_type', '-'), el('address', s.address), el('city', s.city),
      el('country_code', 'ZA')]),
    el('reason', input.reason),
    el('action', input.action),
  ]
  const transactions = input.movements.map((m) =>
    transaction(input, m, accounts.get(m.account_id)!))
  const indicators = el('report_indicators', [el('indicator', '-')])
  return '<?xml version="1.0" encoding="UTF-8"?>\n'
    + el('report', [...header, ...transactions, indicators]) + '\n'
}

function transaction(input: GoamlInput, m: GoamlMovement, account: GoamlAccount): string {
  const incoming = m.credit > 0n
  const mine = myAccount(input, account)
  const theirs = otherAccount(m)
  const [from, to] = incoming
    ? [el('t_from', [el('from_funds_code', '-'), el('from_account', theirs),
      el('from_country', 'ZA')]),
    el('t_to_my_client', [el('to_funds_code', '-'), el('to_account', mine),
      el('to_country', 'ZA')])]
    : [el('t_from_my_client', [el('from_funds_code', '-'), el('from_account', mine),
      el('from_country', 'ZA')]),
    el('t_to', [el('to_funds_code', '-'), el('to_account', theirs), el('to_country', 'ZA')])]
  return el('transaction', [
    el('transactionnumber', m.tx_id),
    el('internal_ref_number', m.tx_id),
    el('transaction_location', input.institution.name),
    el('transaction_description', `${m.tx_type}${m.ref ? `: ${m.ref}` : ''}`),
    el('date_transaction', sqlDate(m.created_at)),
    el('transmode_code', '-'),
    el('amount_local', rands(m.amount)),
    from,
    to,
  ])
}

function myAccount(input: GoamlInput, account: GoamlAccount): string[] {
  return [
    el('institution_name', input.institution.name),
    el('institution_code', input.institution.branchCode),
    el('branch', input.institution.branchCode),
    el('account', account.account_number),
    el('currency_code', 'ZAR'),
    el('account_name', input.customer.name),
    el('client_number', clientNumber(input.customer.entity_id)),
    el('personal_account_type', '-'),
    ...input.customer.persons.map((p, i) => el('signatory', [
      ...(i === 0 ? [el('is_primary', '1')] : []),
      el('t_person', person(p)),
      el('role', '-'),
    ])),
    el('opened', sqlDate(account.opened)),
    el('balance', rands(account.balance)),
    el('status_code', '-'),
    el('comments', `entity ${input.customer.entity_id}`),
  ]
}

/** The customer's entity id in base64url: goAML's `client_number` takes at most 30 characters. */
function clientNumber(entityId: string): string {
  return Buffer.from(entityId.replaceAll('-', ''), 'hex').toString('base64url')
}

function person(p: GoamlPerson): string[] {
  return [
    el('first_name', p.first_name),
    el('last_name', p.last_name),
    ...(p.birthdate ? [el('birthdate', sqlDate(p.birthdate))] : []),
    ...(p.id_number ? [el('ssn', p.id_number)] : []),
    el('nationality1', alpha2(p.country)),
    el('residence', alpha2(p.country)),
    el('phones', [el('phone', [el('tph_contact_type', '-'), el('tph_communication_type', '-'),
      el('tph_country_prefix', '27'), el('tph_number', p.phone || '-')])]),
    // The bank does not record customers' occupations: goAML's unknown.
    el('occupation', '-'),
  ]
}

function otherAccount(m: GoamlMovement): string[] {
  return [
    el('institution_name', m.recipient_branch ? `branch ${m.recipient_branch}` : 'unknown'),
    el('institution_code', m.recipient_branch || '-'),
    el('account', m.recipient_account || '-'),
    el('account_name', m.recipient_name || '-'),
  ]
}

/** goAML's two-letter country code; `-` (unknown) for none. */
function alpha2(alpha3: string): string {
  return countries.alpha3ToAlpha2(alpha3) ?? '-'
}

/** goAML's `sql_date`: an xs:dateTime without a zone, in UTC. */
function sqlDate(at: Date): string {
  return at.toISOString().slice(0, 19)
}

function rands(cents: bigint): string {
  const sign = cents < 0n ? '-' : ''
  const abs = cents < 0n ? -cents : cents
  return `${sign}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`
}

function el(name: string, content: string | string[]): string {
  const inner = Array.isArray(content) ? content.join('') : escape(content)
  return `<${name}>${inner}</${name}>`
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;').replace(/'/g, '&apos;')
}
