import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { expiryOf } from '../../src/console/console-account-actions.ts'
import { assertLedgerClean } from '../support/assertions.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { accountNumberOf, balances, fund, newAccount } from '../transfers/helpers.ts'
import {
  axeViolations, consoleBase, consoleFetch, expectNotice, launchChromium, screenshot,
  signIn as browserSignIn, watchRequests,
} from './browser.ts'

// The account page's status badges, legal holds and closure (src/console/
// console-account-sections.ts, console-account-actions.ts) and the approvals page's hold
// releases, through the running console over real HTTP against a real bank: a signed-in
// operator's forms with the session's CSRF token, each POST answered with a redirect (done)
// or the account page again with the refusal beside its form (400, 422). A hold lowers the
// available balance the page shows and its release gives it back; a release above the
// dual-control threshold waits, is shown waiting, and a second operator approves it on the
// approvals page; a closure pays the balance to another account of the customer; the
// obstacles to one are listed; the badges are on the entity's list and the account's header.
// Last, the same forms in a real browser (Debian's Chromium), found by their labels, with
// axe-core finding no serious or critical accessibility violation on the pages they lead to.

// Dual control at R1,000.00: a hold above it waits for a second operator to be released.
const tb = useTestBank({ env: { BANK_CONSOLE_PORT: '0', BANK_DUAL_CONTROL_CENTS: '100000' } })

let p: TestPartner
let base: string
let maker: Session
let checker: Session
let browser: Browser | undefined

interface Session {
  cookie: string
  csrf: string
}

interface Answer {
  status: number
  location: string | null
  body: string
}

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  base = consoleBase(tb.bank.consolePort)
  maker = await signIn(tb.operatorToken)
  const issued = await tb.bank.services.credentials.issue(tb.bank.database.db,
    { partnerId: null, permissions: [], label: 'checker' })
  checker = await signIn(issued.token)
})

after(async () => {
  await browser?.close()
})

async function request(path: string, init: RequestInit = {}): Promise<Answer> {
  const response = await consoleFetch(`${base}${path}`, { redirect: 'manual', ...init })
  return { status: response.status, location: response.headers.get('location'),
    body: await response.text() }
}

/** A console session: its cookie, and the CSRF token its pages' forms carry. */
async function signIn(token: string): Promise<Session> {
  const page = await request('/sign-in')
  const pre = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!
  const response = await consoleFetch(`${base}/sign-in`, {
    method: 'POST', redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded',
      cookie: `bank_console_pre=${pre}` },
    body: new URLSearchParams({ csrf: pre, token }).toString(),
  })
  assert.equal(response.status, 303, 'signed in')
  const session = response.headers.getSetCookie().find((c) => c.startsWith('bank_console='))!
  const cookie = session.split(';')[0]!
  const overview = await request('/', { headers: { cookie } })
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(overview.body)![1]! }
}

async function get(path: string, as = maker): Promise<Answer> {
  const got = await request(path, { headers: { cookie: as.cookie } })
  assert.equal(got.status, 200, `${path}: ${got.body.slice(0, 300)}`)
  return got
}

/** A form POSTed as the console's own (the session's CSRF token). */
async function post(path: string, fields: Record<string, string>, as = maker): Promise<Answer> {
  return request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: as.cookie },
    body: new URLSearchParams({ csrf: as.csrf, ...fields }).toString(),
  })
}

/** A POST that is done: redirected to `to`, whose page shows `notice`. */
async function done(answer: Answer, to: string, notice: RegExp, as = maker): Promise<string> {
  assert.equal(answer.status, 303, answer.body.slice(0, 500))
  const location = new URL(answer.location ?? '', base)
  assert.equal(location.pathname, to)
  assert.ok(location.searchParams.has('done'), `a notice: ${answer.location}`)
  const page = await get(`${location.pathname}${location.search}`, as)
  assert.match(/<p class="notice" role="status">([^<]*)<\/p>/.exec(page.body)?.[1] ?? '', notice)
  return page.body
}

function figure(body: string, name: string): string | undefined {
  return new RegExp(`<li>${name}<strong>([^<]+)</strong>`).exec(body)?.[1]
}

const badge = (status: string) => `<span class="badge badge-${status}">${status}</span>`

/** A new account with `cents` in it, deposited R1,000.00 at a time (the threshold). */
async function fundedAccount(cents: number): Promise<string> {
  const account = await newAccount(p)
  for (let left = cents; left > 0; left -= 100_000) {
    await fund(tb, account, Math.min(left, 100_000))
  }
  return account
}

test('console account - status badges on the entity\'s account list and the account page header', async () => {
  const frozen = await newAccount(p)
  const blocked = await newAccount(p)
  await tb.operator.accounts.freeze({ account_id: frozen, reason: 'Court order 12' })
  await tb.operator.accounts.block({ account_id: blocked, reason: 'Fraud suspected' })
  const list = (await get(`/entities/${p.rootEntityId}`)).body
  assert.match(list, /<th scope="col" class="">Status<\/th>/)
  for (const [id, status] of [[frozen, 'frozen'], [blocked, 'blocked']]) {
    const number = await accountNumberOf(p, id!)
    const row = new RegExp(`<a href="/accounts/${id}">${number}</a>[\\s\\S]*?</tr>`).exec(list)
    assert.ok(row?.[0].includes(badge(status!)), `${status}: its row has its badge`)
  }
  assert.ok(list.includes(badge('active')), 'the pool account is active')

  const page = (await get(`/accounts/${frozen}`)).body
  assert.match(page, new RegExp(`<p class="account-status">Status: ${badge('frozen')} since ` +
    '\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2} SAST, by an operator \\(Court order 12\\)</p>'))
  // Each status has its own style in the console's sheet.
  const css = await (await consoleFetch(`${base}/console.css`)).text()
  for (const status of ['active', 'frozen', 'blocked', 'dormant', 'closed']) {
    assert.match(css, new RegExp(`\\.badge-${status} \\{[^}]*background: #[0-9a-f]{3,6};`))
  }
  // The status form changes it, and the page says so.
  const changed = await post(`/accounts/${frozen}/status`, { action: 'unfreeze',
    reason: 'Order lifted' })
  const after = await done(changed, `/accounts/${frozen}`, /^Status: active\.$/)
  assert.ok(after.includes(`Status: ${badge('active')}`))
})

test('console account - a hold placed lowers the available balance on the page; released, it is back', async () => {
  const account = await fundedAccount(100_000)
  const path = `/accounts/${account}`
  const before = (await get(path)).body
  assert.deepEqual([figure(before, 'Balance'), figure(before, 'Available'), figure(before, 'Held')],
    ['R1,000.00', 'R1,000.00', 'R0.00'])
  assert.match(before, /No legal hold stands\./)

  const placed = await post(`${path}/holds`, { amount: '600.00', reference: 'Garnishee 2026/118',
    expires_at: '2026-12-31T17:00' })
  const held = await done(placed, path, /^Legal hold of R600\.00 placed \(Garnishee 2026\/118\)\.$/)
  assert.deepEqual([figure(held, 'Balance'), figure(held, 'Available'), figure(held, 'Held')],
    ['R1,000.00', 'R400.00', 'R600.00'])
  const [hold] = (await tb.operator.accounts.holds({ account_id: account })).holds
  assert.equal(hold?.expires_at, '2026-12-31T15:00:00Z', '17:00 SAST is 15:00 UTC')
  assert.match(held, /<td>Garnishee 2026\/118<\/td>\s*<td class="amount">R600\.00<\/td>/)
  assert.match(held, /2026-12-31 17:00:00 SAST/)
  assert.ok(held.includes(`action="${path}/holds/${hold!.hold_id}/release"`), 'a release form')

  const released = await post(`${path}/holds/${hold!.hold_id}/release`,
    { reason: 'Order withdrawn' })
  const back = await done(released, path, /^The legal hold of R600\.00 \(Garnishee 2026\/118\) is released\.$/)
  assert.deepEqual([figure(back, 'Available'), figure(back, 'Held')], ['R1,000.00', 'R0.00'])
  assert.match(back, /No legal hold stands\./)
  const all = (await get(`${path}?holds=all`)).body
  assert.match(all, /Garnishee 2026\/118[\s\S]*Released 2026-\d\d-\d\d [\d:]+ SAST by[\s\S]*Order withdrawn/)
  assert.match(all, /Only the holds standing now/)
  const audit = await tb.operator.audit.list({ target: account })
  const actions = audit.entries.map((e) => e.action)
  assert.ok(actions.some((a) => /hold/.test(a)), `audited: ${actions.join(', ')}`)
  await assertLedgerClean(tb)
})

test('console account - a hold the form or the bank refuses is the page again, with why', async () => {
  const account = await fundedAccount(10_000)
  const path = `/accounts/${account}`
  const cases: Array<[fields: Record<string, string>, status: number, says: RegExp]> = [
    [{ amount: 'lots', reference: 'x' }, 400, /amount: give rand and cents/],
    [{ amount: '10', reference: 'x', expires_at: '2026-02-30T10:00' }, 400,
      /expires: &quot;2026-02-30T10:00&quot; is not a time/],
    [{ amount: '10', reference: 'x', expires_at: '2026-01-01T10:00' }, 400,
      /expires_at.*must be in the future/],
    [{ amount: '100.01', reference: 'Too much' }, 422, /10000 cents available/],
    [{ amount: '10', reference: '' }, 400, /reference/],
  ]
  for (const [fields, status, says] of cases) {
    const answer = await post(`${path}/holds`, fields)
    assert.equal(answer.status, status, JSON.stringify(fields))
    assert.match(answer.body, /<div class="error" role="alert"><p>The hold was not placed/)
    assert.match(answer.body, says, JSON.stringify(fields))
    assert.match(answer.body, /id="legal-holds"/, 'the account page again')
  }
  assert.deepEqual(await balances(p, account), { balance: '10000', available: '10000' })
  assert.equal(expiryOf(' 2027-01-31 17:00:30 '), '2027-01-31T15:00:30Z')
  assert.equal(expiryOf(''), undefined)
})

test('console account - a release above the threshold waits, is shown waiting, and a second operator approves it on the approvals page', async () => {
  const account = await fundedAccount(200_000)
  const path = `/accounts/${account}`
  const hold = await tb.operator.accounts.placeHold({ account_id: account, amount: 150_000,
    reference: 'Court order 55' })
  const asked = await post(`${path}/holds/${hold.hold_id}/release`, { reason: 'Debt paid' })
  const waiting = await done(asked, path,
    /^The release of the legal hold of R1,500\.00 \(Court order 55\) waits for a second operator&#39;s approval/)
  assert.equal(figure(waiting, 'Available'), 'R500.00', 'still held')
  assert.match(waiting, /<span class="pending">Release waiting for a second operator<\/span>/)
  assert.match(waiting, /asked by bootstrap\s+[\d-]+ [\d:]+ SAST: Debt paid/)
  assert.ok(!waiting.includes(`${path}/holds/${hold.hold_id}/release`), 'no second release form')

  const approvals = (await get('/approvals', checker)).body
  const [approval] = (await tb.operator.approvals.list({})).approvals
    .filter((a) => a.kind === 'hold_release' && a.account_id === account)
  assert.ok(approval)
  const cell = '(?:(?!</tr>)[\\s\\S])*'
  const row = new RegExp(`<tr>${cell}${approval.approval_id}${cell}</tr>`)
    .exec(approvals)?.[0] ?? ''
  assert.match(row, /legal hold release/)
  assert.match(row, new RegExp(`Release hold <span class="id">${hold.hold_id}</span>`))
  assert.match(row, /Debt paid/)
  assert.match(row, /R1,500\.00/)
  assert.match(row, new RegExp(`href="/accounts/${account}#legal-holds"`))

  // The operator who asked cannot approve it; the second operator does.
  const own = await post(`/approvals/${approval.approval_id}/approve`, {})
  assert.equal(own.status, 403)
  const approved = await post(`/approvals/${approval.approval_id}/approve`, {}, checker)
  await done(approved, '/approvals', /^Approved: legal hold release of R1,500\.00\.$/, checker)
  const after = (await get(path)).body
  assert.equal(figure(after, 'Available'), 'R2,000.00')
  assert.match(after, /No legal hold stands\./)
  await assertLedgerClean(tb)
})

test('console account - closing pays the balance to another account of the customer; the page shows it closed', async () => {
  const account = await fundedAccount(25_000)
  const keep = await newAccount(p)
  const keepNumber = await accountNumberOf(p, keep)
  const path = `/accounts/${account}`
  const form = (await get(path)).body
  assert.match(form, /<legend>Pay the balance of R250\.00 out<\/legend>/)
  assert.ok(form.includes(`<option value="${keep}"`), 'the customer\'s other accounts offered')
  assert.ok(!form.includes(`<option value="${account}"`), 'not the account itself')

  const unconfirmed = await post(`${path}/close`, { reason: 'Customer leaves', payout: 'account',
    pay_to_account_id: keep })
  assert.equal(unconfirmed.status, 400)
  assert.match(unconfirmed.body, /tick &quot;I mean to close this account for good&quot;/)
  assert.equal((await tb.operator.accounts.status({ account_id: account })).status, 'active')

  const closed = await post(`${path}/close`, { reason: 'Customer leaves', payout: 'account',
    pay_to_account_id: keep, confirm: 'yes' })
  const page = await done(closed, path, new RegExp('^The account is closed; its balance of ' +
    `R250\\.00 was paid to account ${keepNumber} \\(Successful\\)\\.$`))
  assert.ok(page.includes(`Status: ${badge('closed')}`))
  assert.match(page, /Customer leaves/)
  assert.match(page, /<p>The account is closed\.<\/p>/)
  assert.doesNotMatch(page, /Place the hold/, 'a closed account takes no new hold')
  assert.deepEqual([figure(page, 'Balance'), figure(page, 'Available')], ['R0.00', 'R0.00'])
  assert.deepEqual(await balances(p, keep), { balance: '25000', available: '25000' })
  const list = (await get(`/entities/${p.rootEntityId}`)).body
  const number = await accountNumberOf(p, account)
  const row = new RegExp(`<a href="/accounts/${account}">${number}</a>[\\s\\S]*?</tr>`).exec(list)
  assert.ok(row?.[0].includes(badge('closed')), 'closed on the entity\'s list too')
  await assertLedgerClean(tb)
})

test('console account - a refused closure lists its obstacles and keeps what was typed; by EFT it goes with the next cycle', async () => {
  const account = await fundedAccount(50_000)
  const path = `/accounts/${account}`
  const hold = await tb.operator.accounts.placeHold({ account_id: account, amount: 1_000,
    reference: 'Order 9' })
  const refused = await post(`${path}/close`, { reason: 'Customer moved abroad', payout: 'none',
    confirm: 'yes' })
  assert.equal(refused.status, 422)
  const alert = /<div class="error" role="alert">([\s\S]*?)<\/div>/.exec(refused.body)?.[1] ?? ''
  assert.match(alert, /The bank did not close the account:/)
  const items = [...alert.matchAll(/<li><strong>([^<]+)<\/strong>: ([^<]+)<\/li>/g)]
    .map((m) => [m[1], m[2]])
  assert.deepEqual(items.map(([name]) => name), ['Legal holds', 'No payout named'])
  assert.match(items[0]![1]!, /1 legal hold/)
  assert.match(items[1]![1]!, /balance of 50000 cents/)
  assert.match(refused.body, /id="close-reason" name="reason" maxlength="200"\s+value="Customer moved abroad"/)
  assert.equal((await tb.operator.accounts.status({ account_id: account })).status, 'active')

  // The bank's own refusal of a field: its name and message.
  const bad = await post(`${path}/close`, { reason: 'Leaves', payout: 'eft', confirm: 'yes',
    eft_account_number: '123456789', eft_branch_code: 'x', eft_name: 'A', eft_ref: 'B' })
  assert.equal(bad.status, 400)
  assert.match(bad.body, /<li><strong>pay_by_eft\.branch_code<\/strong>: /)

  await tb.operator.accounts.releaseHold({ hold_id: hold.hold_id, reason: 'done' })
  const closed = await post(`${path}/close`, { reason: 'Leaves', payout: 'eft', confirm: 'yes',
    eft_account_number: '123456789', eft_branch_code: '250655', eft_name: 'Ann Other',
    eft_ref: 'Closing' })
  const page = await done(closed, path, new RegExp('^The account is closed; its balance of ' +
    'R500\\.00 goes by EFT to Ann Other \\(123456789\\) with the next clearing cycle ' +
    '\\(Pending\\)\\.$'))
  assert.ok(page.includes(`Status: ${badge('closed')}`))
  assert.deepEqual([figure(page, 'Balance'), figure(page, 'Available')], ['R500.00', 'R0.00'],
    'the EFT holds the balance until it clears')
  await assertLedgerClean(tb)
})

test('console account - the new forms refuse a POST without the session\'s CSRF token', async () => {
  const account = await fundedAccount(1_000)
  for (const [path, fields] of [
    [`/accounts/${account}/holds`, { amount: '1', reference: 'x' }],
    [`/accounts/${account}/close`, { reason: 'x', payout: 'none', confirm: 'yes' }],
  ] as Array<[string, Record<string, string>]>) {
    const answer = await request(path, { method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: maker.cookie },
      body: new URLSearchParams(fields).toString() })
    assert.equal(answer.status, 403, path)
  }
  assert.deepEqual((await tb.operator.accounts.holds({ account_id: account })).holds, [])
  assert.equal((await tb.operator.accounts.status({ account_id: account })).status, 'active')
})

async function accessible(page: Page, name: string): Promise<void> {
  assert.deepEqual(await axeViolations(page), [], `${name}: serious or critical violations`)
  await screenshot(page, name)
}

test('console account - in a browser: the forms by their labels, and axe finds nothing serious', async () => {
  browser = await launchChromium()
  const page = watchRequests(await (await browser.newContext()).newPage())
  page.setDefaultTimeout(120_000)
  await browserSignIn(page, base, tb.operatorToken)
  const account = await fundedAccount(180_000)
  await page.goto(`${base}/entities/${p.rootEntityId}`)
  await accessible(page, 'account-badges')
  await page.goto(`${base}/accounts/${account}`)
  await page.getByLabel('Amount to hold (rand)').fill('1,200.00')
  await page.getByLabel('Reference (the order it serves)').fill('Garnishee 7/2026')
  await page.getByLabel('Expires (SAST, optional)').fill('2027-01-31T17:00')
  await page.getByRole('button', { name: 'Place the hold' }).click()
  await expectNotice(page, 'Legal hold of R1,200.00 placed (Garnishee 7/2026).')
  assert.match(await page.locator('.figures').innerText(), /Available\s*R600\.00/)
  await page.getByLabel('Reason to release').fill('Order set aside')
  await page.getByRole('button', { name: 'Release' }).click()
  await expectNotice(page, /waits for a second operator/)
  await page.getByText('Release waiting for a second operator').waitFor()
  await accessible(page, 'account-holds')
  await page.getByLabel('Reason for closing').fill('Customer leaves')
  await page.getByLabel('Nothing to pay out').check()
  await page.getByLabel('I mean to close this account for good').check()
  await page.getByRole('button', { name: 'Close the account' }).click()
  const alert = page.locator('div.error[role="alert"]')
  await alert.waitFor()
  assert.match(await alert.innerText(), /Legal holds: 1 legal hold/)
  assert.match(await alert.innerText(), /No payout named: /)
  assert.equal(await page.getByLabel('Reason for closing').inputValue(), 'Customer leaves')
  await accessible(page, 'account-close-refused')
  await page.goto(`${base}/approvals`)
  await page.getByText(/Release hold/).first().waitFor()
  await accessible(page, 'approvals-hold-release')
})
