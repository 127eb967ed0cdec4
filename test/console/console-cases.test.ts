import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { after, before, test } from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { numberedPersonalEntity } from '../support/fixtures.ts'
import {
  onboardPartner,
  secondOperator,
  test_request_timeout_ms,
  useTestBank,
  type TestPartner,
} from '../support/harness.ts'
import { operatorCredentialId } from '../kyc/helpers.ts'
import { fund, transferBody } from '../transfers/helpers.ts'
import {
  axeViolations,
  consoleBase,
  consoleFetch,
  expectNotice,
  launchChromium,
  screenshot,
  signIn,
  watchRequests,
} from './browser.ts'

// Transaction-monitoring cases in the console, in a real browser (Debian's Chromium through
// playwright-core) with a second operator in a browser of their own: the queue oldest first
// with its filters, a case's page (the customer, its accounts, the alerts' money and its
// recent money), a note, an assignment, a close as a false positive, and a report asked by
// one operator and approved by the other, whose goAML XML downloads. axe-core finds no
// serious or critical violation; each action is in the audit trail; bad input is a 4xx that
// changes nothing.

const tb = useTestBank({ env: { BANK_CONSOLE_PORT: '0', BANK_GOAML_RENTITY_ID: '4242',
  BANK_GOAML_REPORTING_USER: 'MLRO01', BANK_GOAML_LOCATION: '1 Bank Street, Johannesburg' } })
let browser: Browser
let page: Page
let checkerContext: BrowserContext
let checkerPage: Page
let partner: TestPartner
let base: string
let maker: string
let checker: string
/** The customers' cases: the first opened first. */
const cases: Array<{ caseId: string; name: string; accountId: string }> = []
const cspViolations: string[] = []

async function newPage(context: BrowserContext): Promise<Page> {
  const opened = watchRequests(await context.newPage())
  opened.setDefaultTimeout(test_request_timeout_ms)
  opened.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text())
  })
  return opened
}

/** A customer with a case: two payments in an hour, with the velocity rule at one an hour. */
async function customerWithCase(): Promise<(typeof cases)[number]> {
  const entity = await partner.client.entities.create(numberedPersonalEntity())
  await tb.operator.entities.review({ entity_id: entity.id, decision: 'approve' })
  const { account_id: accountId } = await partner.client.accounts.create({ entity_id: entity.id })
  await fund(tb, accountId, 500_000)
  for (const name of ['First Payee', 'Second Payee']) {
    await partner.client.accounts.transfer(transferBody(accountId, { amount: 10_000, name }))
  }
  await tb.operator.monitoring.run({})
  const { cases: found } = await tb.operator.monitoring.cases({ partner_id: partner.partnerId,
    limit: 500 })
  const mine = found.filter((c) => c.entity_id === entity.id)
  assert.equal(mine.length, 1)
  const { customer } = await tb.operator.monitoring.case({ case_id: mine[0]!.case_id })
  return { caseId: mine[0]!.case_id, name: customer.name, accountId }
}

before(async () => {
  await tb.ready
  browser = await launchChromium()
  page = await newPage(await browser.newContext({ viewport: { width: 1200, height: 800 } }))
  checkerContext = await browser.newContext({ viewport: { width: 1200, height: 800 } })
  checkerPage = await newPage(checkerContext)
  base = consoleBase(tb.bank.consolePort)
  partner = await onboardPartner(tb, { approve: true })
  maker = await operatorCredentialId(tb)
  const second = await secondOperator(tb)
  checker = second.id
  await second.client.close()
  await tb.operator.monitoring.setRule({ rule: 'velocity', params: { count_per_hour: 1 } })
  cases.push(await customerWithCase())
  tb.clock.advance(60_000)
  cases.push(await customerWithCase())
  await signIn(page, base, tb.operatorToken)
  await signIn(checkerPage, base, second.token)
})

after(async () => {
  await browser?.close()
})

async function accessible(on: Page, name: string, shot = true): Promise<void> {
  assert.deepEqual(await axeViolations(on), [], `${name}: serious or critical violations`)
  if (shot) await screenshot(on, name)
}

async function main(on: Page = page): Promise<string> {
  return on.locator('main').innerText()
}

async function audited(action: string, target: string): Promise<void> {
  const { entries } = await tb.operator.audit.list({ action, target })
  assert.ok(entries.length > 0, `an audit row for ${action}`)
  assert.equal(entries[0]!.result, 'ok')
}

test('console cases - the queue: oldest first, open alerts counted, filtered by a link', async () => {
  await page.getByRole('link', { name: 'Cases', exact: true }).click()
  await page.waitForURL(`${base}/cases`)
  const rows = await page.locator('tbody tr').allInnerTexts()
  const at = cases.map((c) => rows.findIndex((row) => row.includes(c.caseId)))
  assert.ok(at[0]! >= 0 && at[1]! > at[0]!, 'both listed, the older first')
  assert.match(rows[at[0]!]!, /open\s+1\s+1\s+velocity\s+nobody/)
  await accessible(page, 'cases')
  const filtered = `${base}/cases?status=open&partner_id=${partner.partnerId}&rule=velocity`
  await page.goto(`${filtered}&older_than_hours=0&assigned_to=`)
  assert.match(await main(), new RegExp(cases[1]!.caseId))
  await page.goto(`${base}/cases?rule=structuring&partner_id=${partner.partnerId}`)
  assert.match(await main(), /No cases match\./)
  await page.goto(`${base}/cases?assigned_to=me`)
  assert.match(await main(), /No cases match\./, 'none assigned to me yet')
})

test('console cases - a case: the customer, its money and alerts; a note, assignment, and a close as a false positive', async () => {
  const { caseId, name, accountId } = cases[0]!
  await page.goto(`${base}/cases`)
  await page.locator(`a[href="/cases/${caseId}"]`).click()
  await page.waitForURL(`${base}/cases/${caseId}`)
  const text = await main()
  assert.match(text, new RegExp(`Case of ${name}`))
  assert.match(await page.locator(`a[href="/accounts/${accountId}"]`).first().innerText(), /\d/)
  assert.match(text, /velocity/)
  const inAlerts = page.locator('h2:text("Money in the alerts") + table')
  assert.equal(await inAlerts.locator('tbody tr').count(), 2, 'the two payments')
  assert.match(await inAlerts.innerText(), /R100\.00.*Second Payee/s)
  const recent = page.locator('h2:text("Recent money") ~ table').first()
  assert.equal(await recent.locator('tbody tr').count(), 3, 'the deposit and the payments')
  assert.match(await recent.innerText(), /R5,000\.00.*no/s)
  await audited('monitoring.case', caseId)
  await accessible(page, 'case')
  await page.getByLabel('Add a note').fill('Called the customer: <b>rent</b> & a deposit.')
  await page.getByRole('button', { name: 'Add the note' }).click()
  await expectNotice(page, 'Note added.')
  assert.match(await page.locator('ol.notes').innerText(), /<b>rent<\/b> & a deposit\./)
  await audited('monitoring.case.note', caseId)
  await page.getByRole('button', { name: 'Assign to me' }).click()
  await expectNotice(page, 'Assigned to you')
  await page.goto(`${base}/cases?assigned_to=me`)
  assert.match(await main(), new RegExp(caseId))
  await page.goto(`${base}/cases/${caseId}`)
  await page.getByLabel("Operator's credential id").fill(checker)
  await page.getByRole('button', { name: 'Assign to this operator' }).click()
  await expectNotice(page, `Assigned to ${checker}.`)
  await audited('monitoring.case.assign', caseId)
  await page.getByLabel('Reason', { exact: true }).fill('Rent and a deposit: expected')
  await page.getByRole('button', { name: 'Close as false positive' }).click()
  await expectNotice(page, 'The case is closed as a false positive.')
  const after = await tb.operator.monitoring.case({ case_id: caseId })
  assert.deepEqual([after.case.status, after.case.alerts_open, after.case.assigned_to],
    ['closed', 0, checker])
  assert.equal(await page.getByRole('button', { name: 'File a report' }).count(), 0)
  await audited('monitoring.case.decide', caseId)
})

test('console cases - filing a report: asked by one operator, approved by another, its goAML XML downloaded', async () => {
  const { caseId } = cases[1]!
  await page.goto(`${base}/cases/${caseId}`)
  await page.getByLabel('Reason', { exact: true }).fill('Two payments within minutes')
  await page.getByRole('button', { name: 'File a report' }).click()
  await expectNotice(page, 'A report was asked for: it awaits a second operator.')
  assert.match(await main(), /awaits a second operator's approval/)
  assert.match(await main(), /You asked for it: another operator approves it\./)
  assert.equal(await page.getByRole('button', { name: 'Approve the filing' }).count(), 0)
  await accessible(page, 'case-filing', false)
  await checkerPage.getByRole('link', { name: 'Approvals', exact: true }).click()
  const request = checkerPage.locator('tbody tr', { hasText: caseId })
  assert.match(await request.innerText(), /suspicious-transaction report.*Two payments/s)
  await request.locator(`a[href="/cases/${caseId}"]`).click()
  await checkerPage.waitForURL(`${base}/cases/${caseId}`)
  await checkerPage.getByRole('button', { name: 'Approve the filing' }).click()
  await expectNotice(checkerPage, 'Approved: the report is filed.')
  const { reports, case: filed } = await tb.operator.monitoring.case({ case_id: caseId })
  assert.equal(filed.status, 'reported')
  assert.deepEqual(reports.map((r) => [r.requested_by, r.approved_by]), [[maker, checker]])
  const reference = reports[0]!.reference
  await audited('approvals.approve', filed.approval_id!)
  await page.reload()
  const link = page.getByRole('link', { name: `${reference}.xml` })
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()])
  assert.equal(download.suggestedFilename(), `${reference}.xml`)
  const xml = await fs.readFile((await download.path())!, 'utf8')
  assert.match(xml, new RegExp(`<entity_reference>${reference}</entity_reference>`))
  assert.equal(xml.match(/<transaction>/g)?.length, 2)
  await audited('monitoring.report', reports[0]!.report_id)
  await page.getByRole('link', { name: 'Cases', exact: true }).click()
  await page.getByRole('link', { name: 'Reports filed' }).click()
  await page.waitForURL(`${base}/cases/reports`)
  assert.match(await main(), new RegExp(`${reference}.*${caseId}`, 's'))
  await accessible(page, 'case-reports', false)
})

/** The signed-in browser's session cookie and the CSRF token its forms carry. */
async function sessionOf(on: Page): Promise<{ cookie: string; csrf: string }> {
  const found = (await on.context().cookies()).find((c) => c.name === 'bank_console')!
  await on.goto(`${base}/cases`)
  const csrf = await on.locator('input[name="csrf"]').first().inputValue()
  return { cookie: `bank_console=${found.value}`, csrf }
}

function post(cookie: string, fields: Record<string, string>): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams(fields).toString(),
  }
}

test('console cases - an unknown case, another form\'s CSRF token, an oversized note and an unknown decision are 4xx and change nothing', async () => {
  const { cookie, csrf } = await sessionOf(page)
  const other = await sessionOf(checkerPage)
  const unknown = '00000000-0000-4000-8000-000000000000'
  const { caseId } = cases[1]!
  const notes = async () => (await tb.operator.monitoring.case({ case_id: caseId })).notes.length
  const before = await notes()
  const get = (path: string) => consoleFetch(`${base}${path}`, { headers: { cookie } })
  assert.equal((await get(`/cases/${unknown}`)).status, 404)
  assert.equal((await get('/cases/not-a-case')).status, 404)
  assert.equal((await get(`/cases/reports/${unknown}/goaml`)).status, 404)
  const send = (path: string, fields: Record<string, string>) =>
    consoleFetch(`${base}${path}`, post(cookie, fields))
  assert.equal((await send(`/cases/${unknown}/notes`, { csrf, text: 'lost' })).status, 404)
  const forged = await send(`/cases/${caseId}/notes`, { csrf: other.csrf, text: 'forged' })
  assert.equal(forged.status, 403, "the other operator's session's token")
  const signInForm = await (await consoleFetch(`${base}/sign-in`)).text()
  const preSession = /name="csrf" value="([^"]+)"/.exec(signInForm)![1]!
  const signInToken = await send(`/cases/${caseId}/notes`, { csrf: preSession, text: 'forged' })
  assert.equal(signInToken.status, 403, "the sign-in form's token")
  const long = await send(`/cases/${caseId}/notes`, { csrf, text: 'x'.repeat(2_001) })
  assert.equal(long.status, 400)
  assert.match(await long.text(), /at most 2000 characters/)
  const full = await send(`/cases/${caseId}/notes`, { csrf, text: 'x'.repeat(2_000) })
  assert.equal(full.status, 303, 'at the limit: added')
  const decided = await send(`/cases/${cases[0]!.caseId}/decide`, { csrf, decision: 'maybe',
    reason: 'x' })
  assert.equal(decided.status, 400)
  const twice = await send(`/cases/${cases[0]!.caseId}/decide`, { csrf,
    decision: 'false_positive', reason: 'again' })
  assert.equal(twice.status, 409, 'decided already')
  const assign = await send(`/cases/${caseId}/assign`, { csrf, assignee: 'someone' })
  assert.equal(assign.status, 400)
  assert.equal(await notes(), before + 1, 'only the note at the limit')
})

test('console cases - no resource of any page is blocked by the console’s own policy', () => {
  assert.deepEqual(cspViolations, [])
})
