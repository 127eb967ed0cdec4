import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { BankApiError } from '../../src/client/index.ts'
import { statementPage } from '../../src/console/console-statements.ts'
import type { Download, PageRequest, Rendered } from '../../src/console/console-kit.ts'
import { statement_inline_lines_max } from '../../src/statements/statements-contract.ts'
import { expectRefusal } from '../support/assertions.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { accountNumberOf, fund, newAccount } from '../transfers/helpers.ts'
import { consoleBase, consoleFetch } from './browser.ts'

// The console's statement of an account (src/console/console-statements.ts) and the operator's
// `ops.account.statement` behind it, against a real bank: the page's form, the file as a
// download (PDF and camt.053), bad dates and formats answered with the form and what is wrong
// (never a 500), a range too large for the reply refused with a 422 that says what to do and
// storing nothing, and one real HTTP request through the running console: a signed-in operator
// gets the PDF as an attachment with the console's security headers.

// 2026-11-23T08:00:00Z is Monday 10:00 SAST (the test clock).
const tb = useTestBank({ env: { BANK_CONSOLE_PORT: '0' } })
const today = '2026-11-23'

let p: TestPartner
let account: string
let accountNumber: string

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  account = await newAccount(p)
  accountNumber = await accountNumberOf(p, account)
  await fund(tb, account, 125_000, 'first deposit')
  await fund(tb, account, 2_500, 'second deposit')
})

function pageRequest(path: string): PageRequest {
  return { url: new URL(`http://console${path}`), client: tb.operator,
    operator: { credentialId: 'unused', name: 'unused' }, csrf: 'unused' }
}

async function statement(query: string, accountId = account): Promise<Rendered | Download> {
  return statementPage(pageRequest(`/accounts/${accountId}/statement${query}`), accountId)
}

async function rendered(query: string): Promise<Rendered & { text: string }> {
  const answer = await statement(query)
  assert.ok(!('download' in answer), `${query}: a page, not a file`)
  return { ...answer, text: String(answer.body) }
}

async function downloaded(query: string): Promise<Download['download']> {
  const answer = await statement(query)
  assert.ok('download' in answer, `${query}: a file`)
  return answer.download
}

test('console statement - the form, then the PDF and the camt.053 as files', async () => {
  const form = await rendered('')
  assert.equal(form.title, `Statement of account ${accountNumber}`)
  assert.equal(form.status, undefined)
  for (const name of ['from', 'to', 'format']) assert.match(form.text, new RegExp(`name="${name}"`))
  assert.match(form.text, new RegExp(`action="/accounts/${account}/statement"`))
  assert.doesNotMatch(form.text, /role="alert"/)

  const pdf = await downloaded(`?from=${today}&to=${today}&format=pdf`)
  assert.equal(pdf.content_type, 'application/pdf')
  assert.equal(pdf.file_name, `statement-${accountNumber}-${today}-${today}.pdf`)
  assert.equal(pdf.content.subarray(0, 5).toString('latin1'), '%PDF-')

  const camt = await downloaded(`?from=2026-11-01&to=${today}&format=camt053`)
  assert.equal(camt.content_type, 'application/xml')
  assert.equal(camt.file_name, `statement-${accountNumber}-2026-11-01-${today}.xml`)
  const xml = camt.content.toString('utf8')
  assert.match(xml, /camt\.053\.001\.08/)
  assert.equal(xml.match(/<Ntry>/g)?.length, 2, 'both deposits are lines')
  assert.match(xml, />1275\.00</, 'the closing balance, 1 250.00 + 25.00')
})

test('console statement - bad dates and formats give the form and what is wrong, never a 500', async () => {
  const cases: Array<[query: string, says: RegExp]> = [
    ['?from=2026-02-30&to=2026-03-01&format=pdf', /From: &quot;2026-02-30&quot; is not a real date/],
    ['?from=23/11/2026&to=2026-11-23&format=pdf', /From: &quot;23\/11\/2026&quot; is not a real date/],
    ['?from=2026-11-01&format=pdf', /To: a date is required/],
    ['?from=2026-11-20&to=2026-11-01&format=pdf', /To: must not be before From/],
    ['?from=2026-11-01&to=2026-11-02&format=docx', /Format: choose pdf or camt053/],
    // The bank's own refusals, in its words.
    ['?from=2026-11-01&to=2026-11-30&format=pdf', /refused it: .*must not be after today/],
    ['?from=2024-01-01&to=2026-11-01&format=pdf', /refused it: .*at most 366 days/],
  ]
  for (const [query, says] of cases) {
    const page = await rendered(query)
    assert.equal(page.status, 400, query)
    assert.match(page.text, says, query)
    assert.match(page.text, /role="alert"/, query)
    assert.match(page.text, /name="from"/, `${query}: the form again`)
  }
  // No such account: the bank's 404, which the console shows as its error page.
  await assert.rejects(statement(`?from=${today}&to=${today}&format=pdf`,
    '00000000-0000-4000-8000-000000000000'),
  (error: unknown) => error instanceof BankApiError && error.code === 404)
})

test('console statement - a range too large for the reply is a 422 saying what to do, and stores nothing', async () => {
  const busy = await newAccount(p)
  const width = 25
  for (let start = 0; start <= statement_inline_lines_max; start += width) {
    await Promise.all(Array.from({ length: width }, (_, k) =>
      fund(tb, busy, 100 + start + k, `deposit ${start + k}`)))
  }
  const stored = () => tb.bank.database.db.selectFrom('account_statements')
    .select((eb) => eb.fn.countAll<string>().as('n')).where('account_id', '=', busy)
    .executeTakeFirstOrThrow()
  const request = { account_id: busy, from: today, to: today, format: 'pdf' as const }
  const refused = await expectRefusal(tb.operator.accounts.statement(request), 422)
  assert.match(refused.message, /more than 500.*narrow the range.*partner/)
  const page = statementPage(pageRequest(`/accounts/${busy}/statement?from=${today}&to=${
    today}&format=camt053`), busy)
  const answer = await page
  assert.ok(!('download' in answer))
  assert.equal(answer.status, 422)
  assert.match(String(answer.body), /narrow the range/)
  assert.equal(Number((await stored()).n), 0, 'nothing stored or queued for the partner')
  // A range the reply holds is answered, and the operator's call is in the audit trail.
  const small = await tb.operator.accounts.statement({ ...request, account_id: account })
  assert.equal(small.status, 'ready')
  assert.equal(small.job_id, null)
  const { entries } = await tb.operator.audit.list({ action: 'account.statement' })
  assert.ok(entries.some((e) => e.targets.includes(account)),
    'the statement an operator made is audited, the account its target')
})

test('console statement - through the running console: the PDF as an attachment, security headers kept', async () => {
  const base = consoleBase(tb.bank.consolePort)
  const signInPage = await consoleFetch(`${base}/sign-in`, { redirect: 'manual' })
  const pre = /name="csrf" value="([^"]+)"/.exec(await signInPage.text())![1]!
  const signedIn = await consoleFetch(`${base}/sign-in`, {
    method: 'POST', redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded',
      cookie: `bank_console_pre=${pre}` },
    body: new URLSearchParams({ csrf: pre, token: tb.operatorToken }).toString(),
  })
  assert.equal(signedIn.status, 303)
  const session = signedIn.headers.getSetCookie().find((c) => c.startsWith('bank_console='))!
  const cookie = session.split(';')[0]!
  const get = (path: string) => consoleFetch(`${base}${path}`, { redirect: 'manual',
    headers: { cookie } })

  const accountPage = await (await get(`/accounts/${account}`)).text()
  assert.match(accountPage, new RegExp(`href="/accounts/${account}/statement">Statement</a>`))

  const file = await get(`/accounts/${account}/statement?from=${today}&to=${today}&format=pdf`)
  assert.equal(file.status, 200)
  const bytes = Buffer.from(await file.arrayBuffer())
  assert.equal(bytes.subarray(0, 5).toString('latin1'), '%PDF-')
  assert.equal(file.headers.get('content-type'), 'application/pdf')
  assert.equal(file.headers.get('content-length'), String(bytes.length))
  assert.equal(file.headers.get('content-disposition'),
    `attachment; filename="statement-${accountNumber}-${today}-${today}.pdf"`)
  assert.equal(file.headers.get('x-content-type-options'), 'nosniff')
  assert.equal(file.headers.get('cache-control'), 'no-store')
  assert.equal(file.headers.get('x-frame-options'), 'DENY')
  assert.match(file.headers.get('content-security-policy') ?? '', /default-src 'self'/)

  const bad = await get(`/accounts/${account}/statement?from=2026-02-30&to=${today}&format=pdf`)
  assert.equal(bad.status, 400)
  assert.match(bad.headers.get('content-type') ?? '', /^text\/html/)
  assert.match(await bad.text(), /is not a real date/)

  const camt = await get(`/accounts/${account}/statement?from=${today}&to=${today}&format=camt053`)
  assert.equal(camt.status, 200, 'the camt.053 too')
  assert.equal(camt.headers.get('content-type'), 'application/xml')
  assert.match(camt.headers.get('content-disposition') ?? '', /\.xml"$/)
  const anonymous = await consoleFetch(`${base}/accounts/${account}/statement?from=${today}&to=${
    today}&format=pdf`, { redirect: 'manual' })
  assert.equal(anonymous.status, 303, 'no session: sent to sign in, no file')
  assert.equal(anonymous.headers.get('location'), '/sign-in')
})
