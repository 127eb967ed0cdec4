import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { businessEntity } from '../support/fixtures.ts'
import { onboardPartner, secondOperator, test_request_timeout_ms, useTestBank,
  type TestPartner } from '../support/harness.ts'
import { fixture, uploadList } from '../screening/list-upload.ts'
import { axeViolations, consoleBase, consoleFetch, expectNotice, launchChromium, screenshot,
  signIn, watchRequests } from './browser.ts'

// Sanctions screening reviews in the console, in a real browser (Debian's Chromium) with a
// second operator in a browser of their own: the queue of held customers, a review's page with
// what was screened and the list entries it came close to, a clearing asked by one operator
// and made by the other (the best score is above the confirm score), after which the
// customer's first account opens. axe-core finds no serious or critical violation; each
// decision is in the audit trail; a bad decision is a 4xx that changes nothing.

const tb = useTestBank({ env: { BANK_CONSOLE_PORT: '0' } })
let browser: Browser
let page: Page
let checkerPage: Page
let partner: TestPartner
let base: string
let entityId: string
let reviewId: string

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } })
  const opened = watchRequests(await context.newPage())
  opened.setDefaultTimeout(test_request_timeout_ms)
  return opened
}

before(async () => {
  await tb.ready
  browser = await launchChromium()
  page = await newPage()
  checkerPage = await newPage()
  base = consoleBase(tb.bank.consolePort)
  partner = await onboardPartner(tb, { approve: true })
  await uploadList(tb, fixture('ofac-sdn.xml'))
  const created = await partner.client.entities.create(businessEntity({
    name: 'Northern Star Petroleum', trading_name: 'Northern Star' }))
  assert.equal(created.screening_status, 'review')
  entityId = created.id
  const { reviews } = await tb.operator.screening.reviews({ entity_id: entityId })
  reviewId = reviews[0]!.id
  const second = await secondOperator(tb)
  await second.client.close()
  await signIn(page, base, tb.operatorToken)
  await signIn(checkerPage, base, second.token)
})

after(async () => {
  await browser?.close()
})

async function main(on: Page): Promise<string> {
  return on.locator('main').innerText()
}

test('console screening - the queue lists the held customer; its review shows what was screened and the entries it came close to', async () => {
  await page.getByRole('link', { name: 'Screening', exact: true }).click()
  await page.waitForURL(`${base}/screening`)
  const row = (await page.locator('tbody tr').allInnerTexts()).find((r) => r.includes(reviewId))
  assert.ok(row, 'the review is queued')
  assert.match(row, /open[\s\S]*Northern Star Petroleum[\s\S]*entity \(create\)/)
  assert.deepEqual(await axeViolations(page), [])
  await screenshot(page, 'screening')
  await page.getByRole('link', { name: reviewId.slice(0, 8) }).first().click()
  await page.waitForURL(`${base}/screening/${reviewId}`)
  const text = await main(page)
  assert.match(text, /990003/)
  assert.match(text, /NORTHERN STAR PETROLEUM LLC/)
  assert.match(text, /clearing takes two operators/)
  assert.deepEqual(await axeViolations(page), [])
  await screenshot(page, 'screening-review')
})

test('console screening - one operator asks to clear, another clears; the first account then opens', async () => {
  await page.goto(`${base}/screening/${reviewId}`)
  await page.getByLabel('Reason').fill('Registered in Gauteng since 2004')
  await page.getByRole('button', { name: 'Clear (false positive)' }).click()
  await expectNotice(page, 'Clearing asked: it awaits a second operator.')
  assert.match(await main(page), /another operator must clear it/)
  await page.getByLabel('Reason').fill('again')
  await page.getByRole('button', { name: 'Clear (false positive)' }).click()
  await expectNotice(page, /another operator must clear it/)
  assert.equal((await tb.operator.screening.review({ review_id: reviewId })).status,
    'clear_pending')

  await checkerPage.goto(`${base}/screening/${reviewId}`)
  await checkerPage.getByLabel('Reason').fill('Agreed: not the listed company')
  await checkerPage.getByRole('button', { name: 'Clear (false positive)' }).click()
  await expectNotice(checkerPage, 'The review is cleared.')
  assert.doesNotMatch(await main(checkerPage), /Confirm the hit/, 'no form once decided')
  const { entries } = await tb.operator.audit.list({ action: 'screening.review.decide',
    target: reviewId })
  assert.ok(entries.length >= 2, 'each decision audited')
  const approved = await tb.operator.entities.review({ entity_id: entityId, decision: 'approve' })
  assert.ok(approved.account)
})

test('console screening - a decision without a reason, or of an unknown review, is refused and changes nothing', async () => {
  const cookies = await page.context().cookies()
  const cookie = cookies.map((c) => `${c.name}=${c.value}`).join('; ')
  const html = await (await consoleFetch(`${base}/screening`, { headers: { cookie } })).text()
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!
  const post = (path: string, body: Record<string, string>) => consoleFetch(`${base}${path}`, {
    method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded',
      origin: base }, body: new URLSearchParams({ csrf, ...body }).toString() })
  const unknown = await post(`/screening/${crypto.randomUUID()}/decide`,
    { decision: 'confirm', reason: 'x' })
  assert.equal(unknown.status, 404)
  const bare = await post(`/screening/${reviewId}/decide`, { decision: 'confirm', reason: '' })
  assert.equal(bare.status, 400)
  const odd = await post(`/screening/${reviewId}/decide`, { decision: 'maybe', reason: 'x' })
  assert.equal(odd.status, 400)
  assert.equal((await tb.operator.screening.review({ review_id: reviewId })).status, 'cleared')
  assert.equal((await consoleFetch(`${base}/screening/not-a-uuid`, { headers: { cookie } }))
    .status, 404)
})
