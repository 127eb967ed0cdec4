import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { numberedPersonalEntity } from '../support/fixtures.ts'
import {
  onboardPartner,
  test_request_timeout_ms,
  useTestBank,
  type TestPartner,
} from '../support/harness.ts'
import { destroyBucketsAfter, kycNames, operatorCredentialId, putObjects } from '../kyc/helpers.ts'
import {
  axeViolations,
  consoleBase,
  consoleFetch,
  expectNotice,
  launchChromium,
  realPdf,
  realPng,
  screenshot,
  watchRequests,
  keepPdfsOutOfViewer,
} from './browser.ts'

// The operators' web console in a real browser (Debian's Chromium through playwright-core):
// sign in with the operator credential, review a KYC submission with its documents shown
// inline, approve it and find the decision in the audit log; axe-core finds no serious or
// critical accessibility violation on any page; a partner's credential, no credential and a
// forged cookie get nothing. The screenshots in docs/operators/console/ are made here.

const tb = useTestBank({ env: { BANK_CONSOLE_PORT: '0' } })
destroyBucketsAfter(tb)
let browser: Browser
let context: BrowserContext
let page: Page
let partner: TestPartner
let userId: string
let base: string
let operatorId: string
const cspViolations: string[] = []

before(async () => {
  await tb.ready
  browser = await launchChromium()
  context = await browser.newContext({ viewport: { width: 1200, height: 800 } })
  page = watchRequests(await context.newPage())
  await keepPdfsOutOfViewer(page)
  // As the test clients do (harness.ts): on a loaded machine a step waits for the bank.
  page.setDefaultTimeout(test_request_timeout_ms)
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text())
  })
  base = consoleBase(tb.bank.consolePort)
  partner = await onboardPartner(tb, { approve: true })
  userId = await submittedPerson()
  operatorId = await operatorCredentialId(tb)
})

after(async () => {
  await browser?.close()
})

/** A person whose KYC is submitted: a real PNG as the ID's front, a PDF as proof of residence. */
async function submittedPerson(): Promise<string> {
  const created = await partner.client.entities.create(numberedPersonalEntity())
  const id = created.user_id!
  const names = kycNames(id)
  await putObjects(
    tb.nc,
    `kyc_dropbox_${id}`,
    { [names.front]: realPng(), [names.proof]: realPdf('Proof of residence') },
    {
      [names.front]: 'id-front.png',
      [names.proof]: 'proof.pdf',
    },
  )
  await partner.client.users.uploadKycDocuments({
    user_id: id,
    id_document: names.front,
    proof_of_residence: names.proof,
  })
  return id
}

async function accessible(name: string): Promise<void> {
  assert.deepEqual(
    await axeViolations(page),
    [],
    `${name}: serious or critical accessibility violations`,
  )
  await screenshot(page, name)
}

test('console - an operator signs in and sees the overview', async () => {
  const response = await page.goto(`${base}/`)
  assert.equal(new URL(page.url()).pathname, '/sign-in', 'no session: the sign-in page')
  const headers = response!.headers()
  assert.match(headers['content-security-policy'] ?? '', /default-src 'self'/)
  assert.doesNotMatch(headers['content-security-policy'] ?? '', /unsafe-inline/)
  assert.equal(headers['x-frame-options'], 'DENY')
  await accessible('sign-in')
  await page.getByLabel('Operator credential').fill(tb.operatorToken)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(`${base}/`)
  assert.equal(page.url().includes(tb.operatorToken), false, 'the credential is in no URL')
  await page.getByRole('heading', { name: 'Overview' }).waitFor()
  // The test bank is a sandbox: every page says so (the bank answered its sandbox clock).
  assert.match(await page.locator('.sandbox-banner').innerText(), /Sandbox\. No money leaves/)
  const overview = await page.locator('main').innerText()
  assert.match(overview, /Balances/)
  assert.match(overview, /Payments per minute over the last hour/)
  const pendingLink = page.getByRole('link', { name: 'list them' })
  assert.equal(await pendingLink.getAttribute('href'), '/payments?rail=EFT#pending')
  // uPlot, served by the console under its own policy, drew the chart.
  await page.locator('#payments-chart canvas').waitFor()
  const cookie = (await context.cookies()).find((c) => c.name === 'bank_console')!
  assert.equal(cookie.httpOnly, true)
  assert.equal(cookie.sameSite, 'Strict')
  assert.equal(cookie.path, '/')
  assert.equal(cookie.domain, 'bank-console.localhost', 'host-only, on the console name')
  await accessible('overview')
  // The sign-in is in the audit trail, under the operator's own credential.
  const { entries } = await tb.operator.audit.list({ action: 'console.sign_in' })
  assert.equal(entries.length, 1)
  assert.equal(entries[0]!.actor, await operatorCredentialId(tb))
  assert.equal(entries[0]!.result, 'ok')
  assert.match(String(entries[0]!.details.session_id), /^[0-9a-f-]{36}$/)
  assert.match(String(entries[0]!.details.address), /127\.0\.0\.1/)
})

test('console - the KYC queue lists the submission; its documents are shown inline', async () => {
  await page.getByRole('link', { name: 'KYC review', exact: true }).click()
  await page.waitForURL(`${base}/kyc`)
  const link = page.locator(`a[href="/kyc/${userId}"]`)
  await link.waitFor()
  await accessible('kyc-queue')
  await link.click()
  await page.waitForURL(`${base}/kyc/${userId}`)
  const image = page.locator('img[src^="/documents/"]')
  await image.waitFor()
  // Page-side expressions as text: the test's TypeScript has no DOM types.
  const img = 'document.querySelector(\'img[src^="/documents/"]\')'
  await page.waitForFunction(`${img}.complete && ${img}.naturalWidth > 0`)
  assert.equal(await page.evaluate(`${img}.naturalWidth`), 240, 'the image decoded')
  assert.equal(await page.locator('iframe[src^="/documents/"]').count(), 1, 'the PDF in a frame')
  await accessible('kyc-review')
})

test('console - approving the submission is recorded, and shows in the audit log', async () => {
  await page.getByRole('button', { name: 'Approve' }).click()
  await page.waitForURL(`${base}/kyc/${userId}?decided=approve`)
  await expectNotice(page, 'Decision recorded: approve.')
  const shown = await tb.operator.kyc.show({ user_id: userId })
  assert.equal(shown.submission?.state, 'approved')
  await page.getByRole('link', { name: "This user's audit trail" }).click()
  await page.getByRole('heading', { name: 'Audit log' }).waitFor()
  // The user's own trail: the decision, by the operator who signed in.
  const row = page.locator('tbody tr', { hasText: 'kyc.approved' })
  await row.first().waitFor()
  assert.match(await row.first().innerText(), new RegExp(operatorId))
  // The whole log: the operator's call itself, and the documents the review page fetched.
  await page.goto(`${base}/audit`)
  const log = await page.locator('main').innerText()
  assert.match(log, /kyc\.decide/)
  assert.match(log, /document\.get/)
  await accessible('audit')
  assert.deepEqual(cspViolations, [], 'no resource of the console is blocked by its own policy')
})

/** A request outside the browser: status, where it was sent, and the body. */
async function request(path: string, init: RequestInit = {}) {
  const response = await consoleFetch(`${base}${path}`, { redirect: 'manual', ...init })
  return {
    status: response.status,
    location: response.headers.get('location'),
    body: await response.text(),
    headers: response.headers,
  }
}

const form = (fields: Record<string, string>, cookie?: string): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
  body: new URLSearchParams(fields).toString(),
})

/** Every page of the console, with ids of the test's partner where a page needs one. */
function consolePaths(): string[] {
  const some = '00000000-0000-4000-8000-000000000000'
  return [
    '/',
    '/kyc',
    `/kyc/${userId}`,
    '/audit',
    `/documents/${some}`,
    '/ledger-check',
    '/partners',
    `/partners/${partner.partnerId}`,
    `/partners/${partner.partnerId}/entities`,
    `/entities/${partner.rootEntityId}`,
    `/accounts/${some}`,
    '/payments',
    '/payments/debit-orders',
    '/kyb',
    `/kyb/${some}`,
    '/webhooks',
    '/approvals',
    '/sandbox',
    '/sandbox/messages',
  ]
}

test('console - a partner credential, no credential and a forged cookie get nothing', async () => {
  const signIn = await request('/sign-in')
  const pre = /name="csrf" value="([^"]+)"/.exec(signIn.body)![1]!
  const preCookie = `bank_console_pre=${pre}`
  const refused = await request('/sign-in', form({ csrf: pre, token: partner.token }, preCookie))
  assert.equal(refused.status, 401, 'a partner credential is refused')
  assert.equal(
    refused.headers.getSetCookie().some((c) => c.startsWith('bank_console=')),
    false,
  )
  const empty = await request('/sign-in', form({ csrf: pre, token: '' }, preCookie))
  assert.equal(empty.status, 401, 'no credential is refused')
  const noCsrf = await request('/sign-in', form({ token: tb.operatorToken }, preCookie))
  assert.equal(noCsrf.status, 403, "a sign-in without the form's token is refused")
  const forged = 'bank_console=' + Buffer.alloc(32, 1).toString('base64url')
  for (const path of consolePaths()) {
    for (const headers of [{}, { cookie: forged }] as Array<Record<string, string>>) {
      const got = await request(path, { headers })
      assert.equal(got.status, 303, `${path}: sent to sign in`)
      assert.equal(got.location, '/sign-in')
      assert.equal(got.body, '')
    }
  }
  const post = await request(
    `/kyc/${userId}/decide`,
    form({ decision: 'reject', reason: 'x' }, forged),
  )
  assert.equal(post.status, 403)
  assert.doesNotMatch(post.body, new RegExp(userId))
})

test('console - actions with a forged cookie or none reach no ops. subject: nothing runs or changes', async () => {
  const forged = 'bank_console=' + Buffer.alloc(32, 2).toString('base64url')
  const some = '00000000-0000-4000-8000-000000000000'
  for (const [path, fields] of [
    ['/payments/clearing', {}],
    [`/partners/${partner.partnerId}/suspend`, {}],
    [`/partners/${partner.partnerId}/credentials`, { permissions: 'read' }],
    [`/webhooks/${some}/redeliver`, {}],
    ['/sandbox/advance', { by: '1d' }],
  ] as Array<[string, Record<string, string>]>) {
    for (const cookie of [forged, undefined]) {
      const got = await request(path, form(fields, cookie))
      assert.equal(got.status, 403, `${path}: refused`)
    }
  }
  for (const action of ['clearing.run', 'partner.suspend', 'credential.create']) {
    const { entries } = await tb.operator.audit.list({ action })
    assert.deepEqual(entries, [], `no ${action} was made`)
  }
  const { credentials } = await tb.operator.credentials.list({ partner_id: partner.partnerId })
  assert.equal(credentials.length, 1, 'no credential was issued')
})

test("console - a POST without the session's CSRF token is refused; signing out ends the session", async () => {
  const session = (await context.cookies()).find((c) => c.name === 'bank_console')!
  const cookie = `bank_console=${session.value}`
  const bare = await request(
    `/kyc/${userId}/decide`,
    form({ decision: 'reject', reason: 'forged' }, cookie),
  )
  assert.equal(bare.status, 403)
  assert.match(bare.body, /CSRF/)
  assert.equal((await tb.operator.kyc.show({ user_id: userId })).submission?.state, 'approved')
  assert.equal((await request('/audit', { headers: { cookie } })).status, 200)
  await page.getByRole('button', { name: 'Sign out' }).click()
  await page.waitForURL(`${base}/sign-in`)
  const after = await request('/audit', { headers: { cookie } })
  assert.equal(after.status, 303, 'the old session id gets nothing')
  // The sign-out is in the audit trail too, paired with the sign-in by the session's id; the
  // refused sign-ins (a partner's credential, none) left no row.
  const signIns = (await tb.operator.audit.list({ action: 'console.sign_in' })).entries
  const signOuts = (await tb.operator.audit.list({ action: 'console.sign_out' })).entries
  assert.equal(signIns.length, 1)
  assert.equal(signOuts.length, 1)
  assert.equal(signOuts[0]!.actor, await operatorCredentialId(tb))
  assert.deepEqual(signOuts[0]!.details, {
    session_id: signIns[0]!.details.session_id,
    reason: 'signed_out',
  })
})
