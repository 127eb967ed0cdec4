import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { after, before, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { expectApiError } from '../support/assertions.ts'
import { businessEntity, registrationNumber } from '../support/fixtures.ts'
import {
  onboardPartner,
  test_request_timeout_ms,
  useTestBank,
  type TestPartner,
} from '../support/harness.ts'
import { destroyBucketsAfter, epoch, jpeg, pdf, putObjects } from '../kyc/helpers.ts'
import { appendCommitted, partnerEvent, resourceId, startReceiver } from '../webhooks/helpers.ts'
import { cardOnNewAccount } from '../cards/rule-helpers.ts'
import { transferBody } from '../transfers/helpers.ts'
import {
  axeViolations,
  consoleBase,
  expectNotice,
  launchChromium,
  screenshot,
  signIn,
  watchRequests,
  keepPdfsOutOfViewer,
} from './browser.ts'

// The console's back-office pages in a real browser (Debian's Chromium through
// playwright-core): partners with their credentials and NATS identities, entities, accounts
// and transactions with the hash-chain check per row, payments with a clearing run, dual
// control, the sandbox tools and KYB review with the registry's directors. axe-core finds no
// serious or critical accessibility violation on any of them, and each action leaves its row
// in the audit log under the operator who signed in.

// Dual control at R1,000.00, so that a deposit above it waits for a second operator.
const tb = useTestBank({ env: { BANK_CONSOLE_PORT: '0', BANK_DUAL_CONTROL_CENTS: '100000' } })
destroyBucketsAfter(tb)
let browser: Browser
let page: Page
let partner: TestPartner
let poolAccountId: string
let kybEntityId: string
let base: string
const cspViolations: string[] = []

before(async () => {
  await tb.ready
  browser = await launchChromium()
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } })
  page = watchRequests(await context.newPage())
  await keepPdfsOutOfViewer(page)
  // As the test clients do (harness.ts): on a loaded machine a step waits for the bank.
  page.setDefaultTimeout(test_request_timeout_ms)
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text())
  })
  base = consoleBase(tb.bank.consolePort)
  partner = await onboardPartner(tb, { approve: true })
  const { accounts } = await tb.operator.accounts.list({ entity_id: partner.rootEntityId })
  poolAccountId = accounts[0]!.account_id
  await tb.operator.accounts.deposit({ account_id: poolAccountId, amount: 90_000, ref: 'float' })
  kybEntityId = await submittedBusiness()
  await signIn(page, base, tb.operatorToken)
})

after(async () => {
  await browser?.close()
})

/** A business whose KYB is submitted; registration numbers ending 07 have two directors. */
async function submittedBusiness(): Promise<string> {
  const registration = registrationNumber().slice(0, 10) + '07'
  const entity = await partner.client.entities.create(
    businessEntity({ registration_number: registration }),
  )
  const kyb = await partner.client.kyb.get({ entity_id: entity.id })
  const documents = [`business_registration_${epoch}`, `proof_of_address_${epoch}`]
  const objects: Record<string, Uint8Array> = {
    [documents[0]!]: pdf('CoR 14.3'),
    [documents[1]!]: jpeg(),
  }
  const directors: Record<string, string[]> = {}
  for (const d of kyb.directors) {
    directors[d.id] = [`director_id_front_${d.id}_${epoch}`]
    objects[`director_id_front_${d.id}_${epoch}`] = pdf(`id of ${d.name}`)
  }
  await putObjects(tb.nc, `kyb_dropbox_${entity.id}`, objects, 'scan.pdf')
  await partner.client.kyb.submit({ entity_id: entity.id, documents, directors })
  return entity.id
}

async function accessible(name: string, shot = true): Promise<void> {
  assert.deepEqual(
    await axeViolations(page),
    [],
    `${name}: serious or critical accessibility violations`,
  )
  if (shot) await screenshot(page, name)
}

async function main(): Promise<string> {
  return page.locator('main').innerText()
}

async function audited(action: string, subject?: string): Promise<void> {
  const { entries } = await tb.operator.audit.list({
    action,
    ...(subject ? { target: subject } : {}),
  })
  assert.ok(entries.length > 0, `an audit row for ${action}`)
  assert.equal(entries[0]!.result, 'ok')
}

test('console pages - partners: issue a credential (shown once) and revoke it; suspend and let back', async () => {
  await page.getByRole('link', { name: 'Partners', exact: true }).click()
  await page.waitForURL(`${base}/partners`)
  await accessible('partners')
  await page.locator(`a[href="/partners/${partner.partnerId}"]`).click()
  await page.waitForURL(`${base}/partners/${partner.partnerId}`)
  await accessible('partner')
  await page.getByLabel('Label', { exact: true }).fill('console issued')
  await page.getByRole('button', { name: 'Issue a credential' }).click()
  await expectNotice(page, 'It is shown this once')
  const token = await page.getByLabel('Secret').inputValue()
  assert.ok(token.length >= 32, 'the new token is shown')
  assert.equal(page.url().includes(token), false, 'the token is in no URL')
  await accessible('credential-issued', false)
  await page.goto(`${base}/partners/${partner.partnerId}`)
  const row = page.locator('tbody tr', { hasText: 'console issued' })
  await row.getByRole('button', { name: 'Revoke' }).click()
  await expectNotice(page, /Credential .* revoked\./)
  assert.match(await row.innerText(), /revoked/)
  await audited('credential.revoke')
  await page.getByRole('button', { name: 'Suspend the partner' }).click()
  await expectNotice(page, 'Partner suspended.')
  await expectApiError(partner.client.entities.list({}), 401)
  await page.getByRole('button', { name: 'Let the partner back' }).click()
  await expectNotice(page, 'Partner let back.')
  await audited('partner.suspend', partner.partnerId)
  await audited('partner.unsuspend', partner.partnerId)
})

test('console pages - entities, accounts and transactions, each row with its hash-chain check', async () => {
  await page.goto(`${base}/partners/${partner.partnerId}`)
  await page.getByRole('link', { name: 'Entities and accounts' }).click()
  await page.waitForURL(`${base}/partners/${partner.partnerId}/entities`)
  await accessible('entities')
  await page.goto(`${base}/entities/${partner.rootEntityId}`)
  await accessible('accounts')
  assert.match(await main(), /R900\.00/)
  await page.locator(`a[href="/accounts/${poolAccountId}"]`).click()
  await page.waitForURL(`${base}/accounts/${poolAccountId}`)
  const text = await main()
  assert.match(text, /float/)
  assert.match(text, /✓ intact/)
  assert.match(text, /Every row on this page passes the hash-chain check/)
  await accessible('transactions')
  await page.goto(`${base}/accounts/${poolAccountId}?status=Failed`)
  assert.doesNotMatch(await main(), /float/, 'filtered by status')
})

test('console pages - payments: a pending EFT is listed until a clearing run from the console', async () => {
  const eft = await partner.client.accounts.transfer(
    transferBody(poolAccountId, { amount: 12_345, name: 'Pending Supplier' }),
  )
  await page.getByRole('link', { name: 'Payments', exact: true }).click()
  await page.waitForURL(`${base}/payments`)
  const pending = () => page.locator('table').first().innerText()
  assert.match(await main(), /Pending payments/)
  assert.match(await pending(), new RegExp(eft.tx_id))
  assert.match(await pending(), /R123\.45.*R2\.50.*R125\.95/s)
  assert.match(await pending(), /Pending Supplier/)
  assert.match(await pending(), /\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} SAST/)
  await accessible('payments', false)
  // Filtered by query string: a linkable list.
  await page.goto(`${base}/payments?partner_id=${partner.partnerId}&rail=EFT&kind=transfer`)
  assert.match(await pending(), new RegExp(eft.tx_id))
  await page.goto(`${base}/payments?rail=RTC`)
  assert.match(await main(), /No pending payments\./)
  await page.goto(`${base}/payments`)
  await page.getByRole('button', { name: 'Run clearing now' }).click()
  await expectNotice(page, /Clearing cycle .*: settled \d+/)
  await audited('clearing.run')
  await page.reload()
  assert.doesNotMatch(await main(), new RegExp(eft.tx_id), 'cleared: no longer pending')
  assert.match(await main(), /EFT clearing runs/)
  // A second EFT waits for the next cycle: the picture shows both lists.
  await partner.client.accounts.transfer(
    transferBody(poolAccountId, { amount: 4_200, name: 'Next Cycle Supplier' }),
  )
  await page.reload()
  assert.match(await pending(), /Next Cycle Supplier/)
  await accessible('payments')
  await page.goto(`${base}/payments/debit-orders?partner_id=${partner.partnerId}`)
  await accessible('debit-orders', false)
})

test('console pages - dual control: a deposit above the threshold waits, and is rejected here', async () => {
  const asked = await tb.operator.accounts.deposit({ account_id: poolAccountId, amount: 500_000 })
  assert.equal(asked.status, 'pending_approval')
  await page.getByRole('link', { name: 'Approvals', exact: true }).click()
  await page.waitForURL(`${base}/approvals`)
  assert.match(await main(), /R5,000\.00/)
  await accessible('approvals')
  await page.getByLabel('Reason').fill('not expected')
  await page.getByRole('button', { name: 'Reject' }).click()
  await expectNotice(page, 'Rejected: deposit of R5,000.00.')
  await audited('approvals.reject')
})

test('console pages - sandbox: the clock moves forward; messages and card tools are there', async () => {
  await page.getByRole('link', { name: 'Sandbox', exact: true }).click()
  await page.waitForURL(`${base}/sandbox`)
  await accessible('sandbox')
  const before = (await tb.operator.sandbox.clock()).now
  await page.getByLabel('Move forward by').fill('2h')
  await page.getByRole('button', { name: 'Move the clock' }).click()
  await expectNotice(page, /The clock is at .*; \d+ jobs ran\./)
  const after = (await tb.operator.sandbox.clock()).now
  assert.equal(Date.parse(after) - Date.parse(before), 2 * 3600_000)
  await audited('sandbox.clock.advance')
  await page.getByLabel('Move forward by').fill('soon')
  await page.getByRole('button', { name: 'Move the clock' }).click()
  await expectNotice(page, 'move forward by: give e.g. 90m, 12h or 3d')
  await page.goto(`${base}/sandbox/messages`)
  await accessible('sandbox-messages', false)
  await page.goto(`${base}/sandbox`)
  await page.getByLabel('Card id', { exact: true }).fill('00000000-0000-4000-8000-000000000000')
  await page.getByLabel('Amount (rand)', { exact: true }).fill('12.50')
  await page.getByRole('button', { name: /Authorize/ }).click()
  await page
    .getByText(/not_found|No such/i)
    .first()
    .waitFor()
  // A merchant's refund to a real card credits its account.
  const { s: card, cardId } = await cardOnNewAccount(tb, partner, {}, 0)
  await page.goto(`${base}/sandbox`)
  await page.getByLabel('Card id to refund').fill(cardId)
  await page.getByLabel('Refund (rand)').fill('12.50')
  await page.getByRole('button', { name: 'Refund' }).click()
  await expectNotice(page, `Refunded R12.50 to card ${cardId}`)
  const details = await partner.client.accounts.getDetails({ account_id: card.accountId })
  assert.equal(details.balance, '1250')
  await audited('sandbox.card.refund', cardId)
})

test('console pages - KYB: the registry directors with their documents; approve', async () => {
  await page.getByRole('link', { name: 'KYB review', exact: true }).click()
  await page.waitForURL(`${base}/kyb`)
  await accessible('kyb-queue')
  await page.locator(`a[href="/kyb/${kybEntityId}"]`).click()
  await page.waitForURL(`${base}/kyb/${kybEntityId}`)
  const text = await main()
  assert.match(text, /Directors \(from the company registry\)/)
  assert.equal(await page.locator('section[aria-label^="Director"]').count(), 2)
  assert.ok((await page.locator('iframe[src^="/documents/"]').count()) >= 3, 'PDFs framed')
  await accessible('kyb-review')
  await page.getByRole('button', { name: 'Approve' }).click()
  await expectNotice(page, 'Decision recorded: approve.')
  const shown = await tb.operator.kyb.show({ entity_id: kybEntityId })
  assert.equal(shown.state, 'approved')
  assert.deepEqual(
    shown.directors.map((d) => [d.approved, d.verified]),
    [
      [true, true],
      [true, true],
    ],
  )
  await audited('kyb.decide', kybEntityId)
})

test('console pages - webhooks: a delivery the receiver refused (HTTP 500) is found and redelivered', async () => {
  // A partner of its own, whose earlier events are settled (failed: it had no endpoint) before
  // it sets one: the endpoint's breaker counts this event's failures only. Another lane
  // failing there first would pause the endpoint (a day of failures) before this delivery's
  // own day ran out, leaving it pending, unattempted.
  const payee = await onboardPartner(tb, { approve: true })
  await handOver()
  await tb.bank.services.jobRunner.runDue()
  const receiver = await startReceiver()
  try {
    receiver.respond = () => 500
    await payee.client.webhooks.setEndpoint({ url: receiver.url })
    const [eventId] = await appendCommitted(tb, [
      partnerEvent(tb, payee.partnerId, resourceId(), { type: 'payment.failed' }),
    ])
    // Handed over now (a delivery row and its job), then a day of retries on the bank's clock,
    // run as the sandbox runs them: then it is failed.
    await handOver()
    await tb.operator.sandbox.advance({ seconds: 25 * 3600 })
    // An attempt this instance's delivery pool took as the advance ended ends first (on a
    // loaded machine it was still running when the deliveries were read: 'pending').
    await tb.bank.services.jobRunner.runDue()
    const { deliveries } = await tb.operator.webhooks.deliveries({ partner_id: payee.partnerId })
    assert.equal(deliveries.find((d) => d.event_id === eventId)?.state, 'failed')
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click()
    await page.waitForURL(`${base}/webhooks`)
    await page.getByLabel('State').selectOption('failed')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(`${base}/webhooks?partner_id=&state=failed&event_type=`)
    const row = page.locator('tbody tr', { hasText: eventId! })
    assert.match(await row.innerText(), /HTTP 500/)
    // A day of failures paused the endpoint (its circuit breaker); the redelivery resumes it.
    assert.match(await page.locator('tbody tr', { hasText: receiver.url }).innerText(), /paused/)
    await accessible('webhooks')
    receiver.respond = () => 200
    await row.getByRole('button', { name: 'Redeliver' }).click()
    await expectNotice(page, `Event ${eventId} sent again: pending.`)
    assert.match(page.url(), /state=failed/, 'back on the list the button was on')
    await delivered(payee.partnerId, eventId!)
    assert.ok(receiver.received.some((r) => r.id === eventId && r.status === 200))
    await page.goto(`${base}/webhooks?state=delivered&partner_id=${payee.partnerId}`)
    assert.match(await page.locator('tbody tr', { hasText: eventId! }).innerText(), /HTTP 200/)
    await audited('webhook.redeliver', eventId)
    assert.equal(await page.locator('tbody tr', { hasText: receiver.url }).count(), 0,
      'resumed: no longer listed')
  } finally {
    await receiver.close()
  }
})

/** Hands every committed event over (up to a batch per call), until the outbox is empty. */
async function handOver(): Promise<void> {
  while ((await tb.bank.services.events.dispatchPending()) > 0) {
    // The next batch.
  }
}

/** Runs the bank's due jobs until the event's delivery is delivered (the redelivery is due now). */
async function delivered(partnerId: string, eventId: string): Promise<void> {
  for (let round = 0; round < 50; round++) {
    await tb.bank.services.jobRunner.runDue()
    const { deliveries } = await tb.operator.webhooks.deliveries({ partner_id: partnerId })
    if (deliveries.find((d) => d.event_id === eventId)?.state === 'delivered') return
  }
  assert.fail(`the redelivery of ${eventId} was not delivered`)
}

test('console pages - the full ledger check, a page that does not exist and a refusal pass axe too', async () => {
  await page.getByRole('link', { name: 'Overview', exact: true }).click()
  await page.getByRole('link', { name: 'Run the full ledger check' }).click()
  await page.waitForURL(`${base}/ledger-check`)
  assert.match(await main(), /Ledger check/)
  await accessible('ledger-check', false)
  const missing = await page.goto(`${base}/no-such-page`)
  assert.equal(missing!.status(), 404)
  await accessible('not-found', false)
  // The bank refuses an unknown account: its code and message, never a 500.
  const unknown = await page.goto(`${base}/accounts/00000000-0000-4000-8000-000000000000`)
  assert.equal(unknown!.status(), 404)
  assert.match(await main(), /not_found/)
  await accessible('refused', false)
})

/**
 * A payout sent whose file the clearing house never gets (taken out of outbound/ before the
 * simulator's next pass): nothing answers it, so it stays Pending and unanswered.
 */
async function unansweredPayout(): Promise<{ txId: string; messageId: string }> {
  const body = transferBody(poolAccountId, { amount: 7_777, name: 'Unanswered Supplier' })
  const { tx_id: txId } = await partner.client.accounts.transfer(body)
  const { account_number } = await tb.operator.accounts.show({ account_id: poolAccountId })
  const iso = tb.bank.services.isoRail
  const messageId = await iso.submitEft([{ tx_id: txId, source: 'transfer', amount: 7_777n,
    ref: body.ref, debtor: { name: 'Console Payer', account_number },
    creditor: { name: body.name, account_number: body.account_number,
      branch_code: body.branch_code } }], '2026-11-23')
  await fs.rm(path.join(iso.folder.outbound, `pacs.008.${messageId}.xml`))
  return { txId, messageId }
}

test('console pages - rails: an unanswered payout first, with the age setting; its message with its payouts and XML; the messages and refusals', async () => {
  const { txId, messageId } = await unansweredPayout()
  tb.clock.advance(241 * 60_000)
  await page.getByRole('link', { name: 'Rails', exact: true }).click()
  await page.waitForURL(`${base}/rails`)
  const unanswered = () => page.locator('table').first().innerText()
  assert.match(await main(), /after 240 minutes \(BANK_RAIL_UNANSWERED_AFTER_MINUTES\)/)
  assert.match(await unanswered(), new RegExp(txId))
  assert.match(await unanswered(), /R77\.77.*Unanswered Supplier/s)
  assert.match(await unanswered(), /4 h 1 min/)
  assert.match(await main(), /Messages/)
  assert.match(await main(), /pacs\.002\.001\.11/, 'the status reports of earlier runs')
  assert.match(await main(), /Refused files/)
  await accessible('rails', false)
  await page.getByRole('link', { name: messageId }).first().click()
  await page.waitForURL(/\/rails\/message\?/)
  assert.match(await main(), new RegExp(`${txId}`))
  assert.match(await main(), /no answer/)
  await page.getByRole('link', { name: 'Show the XML' }).click()
  assert.match(await page.locator('pre.xml').innerText(), new RegExp(`<MsgId>${messageId}</MsgId>`))
  await accessible('rails-message', false)
  await audited('rails.message')
  await page.goto(`${base}/rails?direction=in&kind=pacs.002`)
  const messages = await page.locator('h2#messages ~ table').first().innerText()
  assert.match(messages, /pacs\.002\.001\.11/)
  assert.doesNotMatch(messages, new RegExp(messageId), 'filtered: inbound only')
  await page.goto(`${base}/rails/unanswered?payment_type=RTC`)
  assert.doesNotMatch(await main(), new RegExp(txId), 'filtered: RTCs only')
  await page.goto(`${base}/rails/refusals`)
  await accessible('rails-refusals', false)
})

test('console pages - no resource of any page is blocked by the console’s own policy', () => {
  assert.deepEqual(cspViolations, [])
})
