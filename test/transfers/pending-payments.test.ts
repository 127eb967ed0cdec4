import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { expectRefusal, uuidPattern } from '../support/assertions.ts'
import { batchBody, payment } from '../bulk/helpers.ts'
import { fund, poolAccount, sast, transferBody, utcPattern } from './helpers.ts'

// ops.payment.pending: the operators' list of payments still pending across partners and
// accounts (EFTs waiting for clearing, a bulk batch waiting for its PIN), newest first,
// filtered by partner, account, rail and kind, paged by cursor; a plain read that is not
// audited, refused to partners, and refused with a 4xx that changes nothing on bad input.

const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000', BANK_SANDBOX: 'true' } })
let p: TestPartner
let q: TestPartner
let pPool: string
let qPool: string
/** Tx ids in the order they were taken. */
const taken: Record<'eftP' | 'bulkP' | 'eftQ' | 'eftP2', string> = {
  eftP: '',
  bulkP: '',
  eftQ: '',
  eftP2: '',
}

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  p = await onboardPartner(tb, { approve: true })
  q = await onboardPartner(tb, { approve: true })
  pPool = await poolAccount(p)
  qPool = await poolAccount(q)
  await fund(tb, pPool, 10_000_000)
  await fund(tb, qPool, 10_000_000)
  tb.clock.set(sast('2026-11-23', '09:00'))
  const step = () => tb.clock.advance(1_000)
  taken.eftP = (await p.client.accounts.transfer(transferBody(pPool, { amount: 12_345 }))).tx_id
  step()
  const batch = batchBody(p.rootEntityId, [payment(1), payment(2)])
  await p.client.bulkPayments.initiate(batch)
  taken.bulkP = (
    await tb.operator.accounts.transactions({ account_id: pPool, limit: 1 })
  ).transactions[0]!.tx_id
  step()
  taken.eftQ = (await q.client.accounts.transfer(transferBody(qPool, { amount: 500 }))).tx_id
  step()
  taken.eftP2 = (await p.client.accounts.transfer(transferBody(pPool, { amount: 700 }))).tx_id
})

async function ids(request: Parameters<typeof tb.operator.payments.pending>[0] = {}) {
  return (await tb.operator.payments.pending(request)).payments.map((row) => row.tx_id)
}

test('pending payments - EFTs and a bulk batch of two partners, newest first, amounts in cents', async () => {
  const { payments, next_cursor } = await tb.operator.payments.pending({})
  assert.equal(next_cursor, undefined)
  assert.deepEqual(
    payments.map((row) => row.tx_id),
    [taken.eftP2, taken.eftQ, taken.bulkP, taken.eftP],
  )
  const eft = payments.find((row) => row.tx_id === taken.eftP)!
  assert.deepEqual(
    { ...eft, created_at: undefined, added_by: undefined },
    {
      tx_id: taken.eftP,
      parent_tx_id: null,
      partner_id: p.partnerId,
      account_id: pPool,
      kind: 'transfer',
      rail: 'EFT',
      amount: '12345',
      fee: '250',
      held: '12595',
      ref: 'Invoice 42',
      recipient_name: 'Jane Recipient',
      recipient_account: '62000000001',
      recipient_branch: '250655',
      created_at: undefined,
      added_by: undefined,
    },
  )
  assert.match(eft.created_at, utcPattern)
  assert.equal(eft.added_by, p.credentialId)
  const bulk = payments.find((row) => row.tx_id === taken.bulkP)!
  assert.equal(bulk.kind, 'bulk_payment')
  assert.equal(bulk.amount, '20000')
  assert.match(bulk.ref, /^Bulk batch-/)
  for (const row of payments) assert.match(row.tx_id, uuidPattern)
})

test('pending payments - filtered by partner, account, rail and kind', async () => {
  assert.deepEqual(await ids({ partner_id: q.partnerId }), [taken.eftQ])
  assert.deepEqual(await ids({ account_id: pPool }), [taken.eftP2, taken.bulkP, taken.eftP])
  assert.deepEqual(await ids({ partner_id: p.partnerId, kind: 'transfer' }), [
    taken.eftP2,
    taken.eftP,
  ])
  assert.deepEqual(await ids({ kind: 'bulk_payment' }), [taken.bulkP])
  assert.deepEqual(await ids({ rail: 'EFT', partner_id: q.partnerId }), [taken.eftQ])
  assert.deepEqual(await ids({ rail: 'RTC' }), [])
  assert.deepEqual(await ids({ kind: 'card' }), [])
  assert.deepEqual(await ids({ partner_id: q.partnerId, account_id: pPool }), [])
})

test('pending payments - pages follow the cursor, each payment once', async () => {
  const seen: string[] = []
  let cursor: string | undefined
  for (let page = 0; page < 10; page++) {
    const reply = await tb.operator.payments.pending({ limit: 1, ...(cursor ? { cursor } : {}) })
    assert.ok(reply.payments.length <= 1)
    seen.push(...reply.payments.map((row) => row.tx_id))
    cursor = reply.next_cursor
    if (!cursor) break
  }
  assert.deepEqual(seen, [taken.eftP2, taken.eftQ, taken.bulkP, taken.eftP])
  const two = await tb.operator.payments.pending({ limit: 2, partner_id: p.partnerId })
  assert.equal(two.payments.length, 2)
  const rest = await tb.operator.payments.pending({
    limit: 2,
    partner_id: p.partnerId,
    cursor: two.next_cursor!,
  })
  assert.deepEqual(
    rest.payments.map((row) => row.tx_id),
    [taken.eftP],
  )
  assert.equal(rest.next_cursor, undefined)
})

test('pending payments - bad input is a 4xx that changes nothing; partners are refused', async () => {
  const before = await tb.operator.payments.pending({})
  const audited = (await tb.operator.audit.list({})).entries.length
  const refused = async (body: string, code = 400) => {
    const reply = await rawRequest(tb, 'ops.payment.pending', body, { token: tb.operatorToken })
    assert.equal(reply.code, code, `${body.slice(0, 80)}: ${JSON.stringify(reply.body)}`)
  }
  await refused(JSON.stringify({ limit: 'ten' }))
  await refused(JSON.stringify({ limit: 0 }))
  await refused(JSON.stringify({ limit: 201 }))
  await refused(JSON.stringify({ partner_id: 42 }))
  await refused(JSON.stringify({ partner_id: 'not-a-uuid' }))
  await refused(JSON.stringify({ rail: 'SWIFT' }))
  await refused(JSON.stringify({ kind: 'fee' }))
  await refused(JSON.stringify({ nope: true }))
  await refused(JSON.stringify({ account_id: `${pPool}\u0000` }))
  await refused(JSON.stringify({ cursor: 'abc\u0000' }))
  await refused('{"limit": 1')
  const oversized = await rawRequest(
    tb,
    'ops.payment.pending',
    JSON.stringify({ rail: 'x'.repeat(70_000) }),
    { token: tb.operatorToken },
  )
  assert.ok(oversized.code >= 400 && oversized.code < 500, `oversized: ${oversized.code}`)
  // A cursor of another list (the account's transactions) is not one of this list's.
  const other = await tb.operator.accounts.transactions({ account_id: pPool, limit: 1 })
  await expectRefusal(tb.operator.payments.pending({ cursor: other.next_cursor! }), 400, 'cursor')
  const partner = await rawRequest(tb, 'ops.payment.pending', '{}', { token: p.token })
  assert.equal(partner.code, 403)
  assert.deepEqual(await tb.operator.payments.pending({}), before)
  const after = (await tb.operator.audit.list({})).entries.length
  assert.equal(after, audited, 'a read writes no audit row, a refused one neither')
})

test('pending payments - a clearing run takes the EFTs off the list; the batch stays', async () => {
  await tb.operator.clearing.run({})
  assert.deepEqual(await ids(), [taken.bulkP])
  assert.deepEqual(await ids({ rail: 'EFT', kind: 'transfer' }), [])
})
