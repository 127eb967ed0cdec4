import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { expectApiError } from '../support/assertions.ts'
import { operatorCredentialId } from '../kyc/helpers.ts'
import { balances, newAccount, txById } from '../transfers/helpers.ts'

// Every operator action is in the audit trail, written in the same transaction as the
// change, with who did it, on which ids, what was asked (no secrets) and the result.

const tb = useTestBank()
let p: TestPartner
let operatorId: string

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  operatorId = await operatorCredentialId(tb)
})

async function entriesFor(target: string) {
  return (await tb.operator.audit.list({ target })).entries
}

test('audit - a deposit is recorded with its operator, the account and the transaction it made; the money carries the operator', async () => {
  const account = await newAccount(p)
  const deposit = await tb.operator.accounts.deposit({ account_id: account, amount: 12_345,
    ref: 'Funding' })
  assert.equal((await txById(p, deposit.tx_id!)).added_by, operatorId)
  const [entry, ...rest] = await entriesFor(deposit.tx_id!)
  assert.equal(rest.length, 0)
  assert.equal(entry!.action, 'account.deposit')
  assert.equal(entry!.actor, operatorId)
  assert.equal(entry!.actor_name, 'bootstrap')
  assert.equal(entry!.result, 'ok')
  assert.equal(entry!.subject_id, null)
  assert.deepEqual(new Set(entry!.targets), new Set([account, deposit.tx_id]))
  assert.deepEqual(entry!.details, { account_id: account, amount: 12_345, ref: 'Funding' })
  assert.equal(entry!.at, new Date(tb.clock.now()).toISOString().replace('.000Z', 'Z'))
})

test('audit - a partner, a credential created and then revoked: each action is on the trail, and no token is', async () => {
  const created = await tb.operator.partners.create(
    { name: 'Audited Ltd', email: 'ops@audited.example', registration_number: `${Date.now()}`.slice(
    -12).padStart(12, '2'), trading_name: 'Audited', country: 'ZAF' })
  const credential = await tb.operator.credentials.create({ partner_id: created.partner_id,
    permissions: ['read'], label: 'reporting' })
  await tb.operator.credentials.revoke({ credential_id: credential.id })
  const onCredential = await entriesFor(credential.id)
  assert.deepEqual(onCredential.map((e) => e.action), ['credential.revoke', 'credential.create'])
  assert.ok(onCredential.every((e) => e.actor === operatorId && e.result === 'ok'))
  assert.deepEqual(onCredential[1]!.details, { partner_id: created.partner_id,
    permissions: ['read'], label: 'reporting' })
  const onPartner = (await entriesFor(created.partner_id)).map((e) => e.action)
  assert.deepEqual(onPartner, ['credential.revoke', 'credential.create', 'partner.create'])
  // Nothing secret reached the trail: not the tokens, not the webhook secret.
  const everything = JSON.stringify((await tb.operator.audit.list({ limit: 1000 })).entries)
  assert.doesNotMatch(everything, /pbk_|opk_|whsec_/)
  assert.ok(!everything.includes(credential.token))
  assert.ok(!everything.includes(created.webhook_secret))
})

test('audit - a refused action is recorded with its refusal, and nothing moved', async () => {
  const missing = randomUUID()
  await expectApiError(tb.operator.accounts.deposit({ account_id: missing, amount: 500 }), 404)
  const [entry] = await entriesFor(missing)
  assert.equal(entry!.action, 'account.deposit')
  assert.match(entry!.result, /^404 not_found: account not found/)
})

test('audit - a change rolled back leaves no "ok" row: a reversal the account cannot cover records only its refusal', async () => {
  const account = await newAccount(p)
  const deposit = await tb.operator.accounts.deposit({ account_id: account, amount: 10_000 })
  // Spend most of it, so the reversal cannot be covered.
  await tb.bank.database.db.updateTable('accounts').set({ held: 9_000n }).where('id', '=', account)
    .execute()
  await expectApiError(
    tb.operator.accounts.reverse({ tx_id: deposit.tx_id!, reason: 'credited in error' }), 422)
  await tb.bank.database.db.updateTable('accounts').set({ held: 0n }).where('id', '=', account)
    .execute()
  const entries = (await entriesFor(deposit.tx_id!)).filter(
    (e) => e.action === 'transaction.reverse')
  assert.equal(entries.length, 1)
  assert.match(entries[0]!.result, /^422 insufficient_funds/)
  assert.equal((await txById(p, deposit.tx_id!)).status, 'Successful')
  assert.deepEqual(await balances(p, account), { balance: '10000', available: '10000' })
})

test('audit - a reversal takes the deposit back out, attributed to the operator, and both are on the trail', async () => {
  const account = await newAccount(p)
  const deposit = await tb.operator.accounts.deposit({ account_id: account, amount: 7_000,
    ref: 'Mistake' })
  const reversed = await tb.operator.accounts.reverse(
    { tx_id: deposit.tx_id!, reason: 'credited in error' })
  assert.equal(reversed.status, 'Successful')
  assert.equal(reversed.balance, '0')
  const reversal = await txById(p, reversed.tx_id!)
  assert.equal(reversal.tx_type, 'reversal')
  assert.equal(reversal.parent_tx_id, deposit.tx_id)
  assert.equal(reversal.added_by, operatorId)
  assert.equal((await txById(p, deposit.tx_id!)).status, 'Reversed')
  await expectApiError(tb.operator.accounts.reverse({ tx_id: deposit.tx_id!, reason: 'again' }),
    409)
  await expectApiError(
    tb.operator.accounts.reverse({ tx_id: reversed.tx_id!, reason: 'not a deposit' }), 422)
  const actions = (await entriesFor(deposit.tx_id!)).map((e) => [e.action, e.result.slice(0, 3)])
  assert.deepEqual(actions, [['transaction.reverse', '409'], ['transaction.reverse', 'ok'],
    ['account.deposit', 'ok']])
  assert.ok((await entriesFor(reversed.tx_id!)).some((e) => e.action === 'transaction.reverse'
    && e.result === 'ok'))
})

test('audit - plain reads are not recorded; reads of secrets (the sandbox OTPs and messages) are', async () => {
  const account = await newAccount(p)
  const before = (await tb.operator.audit.list({ limit: 1000 })).entries.length
  await tb.operator.accounts.show({ account_id: account })
  await tb.operator.ledger.verify({})
  await tb.operator.audit.list({})
  assert.equal((await tb.operator.audit.list({ limit: 1000 })).entries.length, before)
  await tb.operator.sandbox.messages({ limit: 1 })
  const [latest] = (await tb.operator.audit.list({ limit: 1 })).entries
  assert.equal(latest!.action, 'sandbox.messages')
  assert.equal(latest!.actor, operatorId)
})

test('audit - filters by actor, action and time, and pages with a cursor', async () => {
  const account = await newAccount(p)
  for (const ref of ['one', 'two', 'three']) await tb.operator.accounts.deposit(
    { account_id: account, amount: 100, ref })
  const first = await tb.operator.audit.list({ target: account, action: 'account.deposit',
    actor: operatorId, limit: 2 })
  assert.deepEqual(first.entries.map((e) => e.details.ref), ['three', 'two'])
  assert.ok(first.next_cursor)
  const second = await tb.operator.audit.list({ target: account, action: 'account.deposit',
    limit: 2, cursor: first.next_cursor })
  assert.deepEqual(second.entries.map((e) => e.details.ref), ['one'])
  assert.equal(second.next_cursor, undefined)
  assert.equal(
    (await tb.operator.audit.list({ target: account, actor: randomUUID() })).entries.length, 0)
  const now = tb.clock.now()
  const later = new Date(now.getTime() + 1000).toISOString()
  assert.equal((await tb.operator.audit.list({ target: account, from: later })).entries.length, 0)
  assert.equal((await tb.operator.audit.list({ target: account, to: later })).entries.length, 3)
  assert.equal(
    (await tb.operator.audit.list({ target: account, to: now.toISOString() })).entries.length, 0)
  await expectApiError(tb.operator.audit.list({ cursor: 'bm90LWEtY3Vyc29y' }), 400)
  await expectApiError(tb.operator.audit.list({ from: 'yesterday' }), 400)
})

test('audit - operator actions at once on one chain: every row linked, and ledger verify checks it', async () => {
  const account = await newAccount(p)
  await Promise.all(Array.from({ length: 20 }, (_, i) => tb.operator.accounts.deposit(
    { account_id: account, amount: 100 + i })))
  const report = await tb.operator.ledger.verify({})
  assert.deepEqual(report.problems, [])
  assert.ok(report.audit_rows_checked >= 20)
  assert.equal((await tb.operator.audit.list({ target: account })).entries.length, 20)
})

test('audit - the trail is append-only: the database refuses to change or delete a row', async () => {
  const db = tb.bank.database.db
  const row = await db.selectFrom('audit_log').select('id').limit(1).executeTakeFirstOrThrow()
  await assert.rejects(db.updateTable('audit_log').set({ action: 'nothing.happened' }).where('id', '=', row.id).execute(), /append-only/)
  await assert.rejects(db.deleteFrom('audit_log').where('id', '=', row.id).execute(), /append-only/)
})
