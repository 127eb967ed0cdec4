import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { before, describe, test } from 'node:test'
import { endToEndIdOf } from '../../src/rails/iso20022/end-to-end-id.ts'
import { pacs002Text } from '../../src/rails/iso20022/pacs002-write.ts'
import { expectRefusal } from '../support/assertions.ts'
import {
  onboardPartner, rawRequest, useTestBank, type TestBankHandle, type TestPartner,
} from '../support/harness.ts'
import { fund, magic, newAccount, transferBody } from '../transfers/helpers.ts'

// What operators see of the ISO 20022 rail (ops.rails.*, src/rails/rails-ops.ts): in the
// sandbox, real clearing runs answered by the clearing-house simulator give messages out and
// in, listed newest first with their filters and pages, one message with its payouts and its
// XML (made again from the record, or read from archive/), and the files refused whole. In
// production with nothing to answer, the payouts sent stay unanswered, and once the bank's
// clock passes BANK_RAIL_UNANSWERED_AFTER_MINUTES they are listed for operators, until an
// answer arrives. Bad input is a 4xx that changes nothing.

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** The sandbox's bank and what its clearing runs paid. */
interface Sandbox {
  tb: TestBankHandle
  p: TestPartner
  other: TestPartner
  /** The first cycle's payouts: ordinary, to an account that does not exist, ordinary. */
  paid: string[]
  /** Another partner's EFT, in the second cycle. */
  otherTx: string
  /** An RTC, answered at once by the simulator standing in for the gateway (no file). */
  rtcTx: string
}

let s: Sandbox

/** A manual clearing cycle a minute on (its cut-off after the payments just taken). */
async function clearing(tb: TestBankHandle) {
  tb.clock.advance(60_000)
  return tb.operator.clearing.run()
}

async function prepareSandbox(tb: TestBankHandle): Promise<Sandbox> {
  await tb.ready
  const p = await onboardPartner(tb, { approve: true })
  const other = await onboardPartner(tb, { approve: true })
  const account = await newAccount(p)
  await fund(tb, account, 1_000_000)
  const paid: string[] = []
  for (const override of [{ amount: 1_000 }, { amount: 2_000, account_number: magic.invalid },
    { amount: 3_000 }]) {
    paid.push((await p.client.accounts.transfer(transferBody(account, override))).tx_id)
  }
  await clearing(tb)
  const otherAccount = await newAccount(other)
  await fund(tb, otherAccount, 100_000)
  const otherTx = (await other.client.accounts.transfer(
    transferBody(otherAccount, { amount: 4_000 }))).tx_id
  await clearing(tb)
  const rtcTx = (await p.client.accounts.transfer(
    transferBody(account, { amount: 500, pay_and_clear: true }))).tx_id
  return { tb, p, other, paid, otherTx, rtcTx }
}

/** Every page of the messages list, `limit` at a time, following next_cursor. */
async function allMessages(tb: TestBankHandle, request: Record<string, unknown>,
    limit: number) {
  const seen: string[] = []
  let cursor: string | undefined
  for (let page = 0; page < 100; page++) {
    const reply = await tb.operator.rails.messages(
      { ...request, limit, ...(cursor ? { cursor } : {}) })
    assert.ok(reply.messages.length <= limit)
    seen.push(...reply.messages.map((m) => `${m.direction} ${m.message_id}`))
    cursor = reply.next_cursor
    if (!cursor) return seen
  }
  assert.fail('the pages never ended')
}

async function messagesListed() {
  const { tb, paid } = s
  const { messages } = await tb.operator.rails.messages({})
  const times = messages.map((m) => Date.parse(m.created_at))
  assert.deepEqual(times, [...times].sort((a, b) => b - a), 'newest first')
  const [first] = (await tb.operator.rails.messages({ tx_id: paid[1]! })).messages
  assert.ok(first)
  assert.deepEqual({ ...first, created_at: '', written_at: '', settlement_date: '' }, {
    message_id: first.message_id, direction: 'out', kind: 'pacs.008.001.09',
    file_name: `pacs.008.${first.message_id}.xml`, payment_type: 'EFT', created_at: '',
    settlement_date: '', written_at: '', sha256: null, transaction_count: 3,
    control_sum: '6000', answered: 3,
  })
  assert.match(first.message_id, /^PB[0-9a-f]{32}$/)
  assert.match(first.settlement_date!, /^\d{4}-\d{2}-\d{2}$/)
  assert.ok(first.written_at, 'its file was written')
  const inbound = messages.filter((m) => m.direction === 'in')
  assert.ok(inbound.length >= 2, 'a status report for each cycle')
  for (const m of inbound) {
    assert.deepEqual([m.kind, m.control_sum, m.answered, m.payment_type],
      ['pacs.002.001.11', null, null, null])
    assert.match(m.sha256!, /^[0-9a-f]{64}$/)
  }
  const rtc = (await tb.operator.rails.messages({ tx_id: s.rtcTx })).messages
  assert.deepEqual(rtc.map((m) => [m.payment_type, m.transaction_count, m.control_sum,
    m.answered]), [['RTC', 1, '500', 1]])
  // Ops sees every partner's payouts: the other partner's EFT went in a file of its own.
  const theirs = (await tb.operator.rails.messages({ tx_id: s.otherTx })).messages
  assert.deepEqual(theirs.map((m) => m.control_sum), ['4000'])
  assert.notEqual(theirs[0]!.message_id, first.message_id)
  assert.deepEqual((await tb.operator.rails.messages({ tx_id: randomUUID() })).messages, [])
}

async function messagesFiltered() {
  const { tb } = s
  const only = async (request: Record<string, unknown>) =>
    (await tb.operator.rails.messages(request)).messages
  const all = await only({})
  const inbound = all.filter((m) => m.direction === 'in')
  assert.deepEqual(await only({ direction: 'in' }), inbound)
  assert.deepEqual(await only({ direction: 'out' }), all.filter((m) => m.direction === 'out'))
  assert.deepEqual(await only({ kind: 'pacs.002' }), inbound)
  assert.deepEqual(await only({ kind: 'pacs.002.001.11', direction: 'in' }), inbound)
  const eftOut = await only({ kind: 'pacs.008.001.09', direction: 'out', payment_type: 'EFT' })
  assert.deepEqual(eftOut, all.filter((m) => m.payment_type === 'EFT'))
  assert.equal(eftOut.length, 2)
  assert.deepEqual(await only({ kind: 'pacs.004' }), [])
  assert.deepEqual(await only({ kind: 'pacs.002', direction: 'out' }), [])
  assert.deepEqual((await only({ payment_type: 'RTC' })).map((m) => m.transaction_count), [1])
}

async function messagesPaged() {
  const { tb } = s
  const whole = (await tb.operator.rails.messages({ limit: 200 })).messages
    .map((m) => `${m.direction} ${m.message_id}`)
  assert.ok(whole.length >= 5)
  assert.deepEqual(await allMessages(tb, {}, 1), whole)
  assert.deepEqual(await allMessages(tb, {}, 2), whole)
  const out = await allMessages(tb, { direction: 'out' }, 1)
  assert.deepEqual(out, whole.filter((m) => m.startsWith('out ')))
  const last = await tb.operator.rails.messages({ limit: whole.length })
  assert.equal(last.next_cursor, undefined, 'no cursor after the last page')
}

async function messageShown() {
  const { tb, paid } = s
  const [message] = (await tb.operator.rails.messages({ tx_id: paid[0]! })).messages
  const id = message!.message_id
  const shown = await tb.operator.rails.message({ message_id: id })
  assert.deepEqual(shown.message, message)
  assert.equal(shown.body, undefined, 'no body unless asked')
  assert.deepEqual(shown.payments.map((x) => [x.tx_id, x.position, x.source, x.amount,
    x.status, x.reason_code, x.returned_reason_code]), [
    [paid[0], 0, 'transfer', '1000', 'ACSC', null, null],
    [paid[1], 1, 'transfer', '2000', 'RJCT', 'AC01', null],
    [paid[2], 2, 'transfer', '3000', 'ACSC', null, null],
  ])
  assert.ok(shown.payments.every((x) => x.answered_at !== null))
  const first = await tb.operator.rails.message({ message_id: id, limit: 2 })
  assert.deepEqual(first.payments.map((x) => x.tx_id), paid.slice(0, 2))
  const rest = await tb.operator.rails.message({ message_id: id, limit: 2,
    cursor: first.next_cursor! })
  assert.deepEqual(rest.payments.map((x) => x.tx_id), paid.slice(2))
  assert.equal(rest.next_cursor, undefined)

  const withBody = await tb.operator.rails.message({ message_id: id, include_body: true })
  const received = await fs.readFile(path.join(tb.bank.services.isoRail.folder.root,
    'clearing-house', 'received', message!.file_name), 'utf8')
  assert.deepEqual(withBody.body, { xml: received, truncated: false, source: 'record',
    note: null })
  const { entries } = await tb.operator.audit.list({ action: 'rails.message' })
  assert.ok(entries.some((e) => e.details.include_body === true), 'the body read is audited')
}

async function inboundShown() {
  const { tb } = s
  const [report] = (await tb.operator.rails.messages({ direction: 'in', limit: 1 })).messages
  const id = report!.message_id
  const file = path.join(tb.bank.services.isoRail.folder.archive, report!.file_name)
  const applied = await fs.readFile(file, 'utf8')
  assert.equal(sha256(applied), report!.sha256)
  const shown = await tb.operator.rails.message({ message_id: id, direction: 'in',
    include_body: true })
  assert.deepEqual(shown.payments, [])
  assert.deepEqual(shown.body, { xml: applied, truncated: false, source: 'archive', note: null })
  await fs.writeFile(file, applied.replace('ACSC', 'RJCT'))
  const changed = await tb.operator.rails.message({ message_id: id, include_body: true })
  assert.equal(changed.body!.xml, null)
  assert.match(changed.body!.note!, /not the file applied/)
  await fs.rm(file)
  const gone = await tb.operator.rails.message({ message_id: id, include_body: true })
  assert.match(gone.body!.note!, /no longer in the rail folder's archive/)
  await fs.writeFile(file, applied)
}

async function refusalsListed() {
  const { tb } = s
  const before = (await tb.operator.rails.refusals({})).refusals
  const files = [
    { name: 'pacs.002.NOTXML.xml', content: 'not XML { "status": "ACSC" }',
      reason: /^pacs\.002\.001\.11 refused: not well-formed XML/ },
    { name: 'pacs.002.NONS.xml', content: '<?xml version="1.0"?><Document></Document>',
      reason: /^pacs\.002\.001\.11 refused: the message is in no namespace/ },
  ]
  for (const file of files) {
    await fs.writeFile(path.join(tb.bank.services.isoRail.folder.inbound, file.name),
      file.content)
  }
  const { messages } = await tb.operator.rails.messages({})
  await clearing(tb)
  const { refusals } = await tb.operator.rails.refusals({})
  assert.equal(refusals.length, before.length + 2)
  const fresh = refusals.slice(0, 2)
  assert.deepEqual(new Set(fresh.map((r) => r.file_name)), new Set(files.map((f) => f.name)))
  for (const refusal of fresh) {
    const file = files.find((f) => f.name === refusal.file_name)!
    assert.equal(refusal.sha256, sha256(file.content))
    assert.match(refusal.reason, file.reason)
    assert.ok(Date.parse(refusal.refused_at) > 0)
  }
  assert.ok(Number(fresh[0]!.refusal_id) > Number(fresh[1]!.refusal_id), 'newest first')
  assert.deepEqual((await tb.operator.rails.messages({})).messages, messages,
    'a refused file is no message')
  const one = await tb.operator.rails.refusals({ limit: 1 })
  assert.deepEqual(one.refusals, refusals.slice(0, 1))
  const next = await tb.operator.rails.refusals({ limit: 1, cursor: one.next_cursor! })
  assert.deepEqual(next.refusals, refusals.slice(1, 2))
}

/** Bodies each subject must refuse with a 400, given an outbound message and two cursors. */
function badBodies(messageId: string, refusalCursor: string,
    messagesCursor: string): Array<[string, unknown]> {
  const nulTime = Buffer.from('m\u0000\u0000\u0000\u0000\u0000\u0001o\u0000').toString('base64url')
  return [
    ['messages', { direction: 'sideways' }], ['messages', { kind: 'PACS.008' }],
    ['messages', { kind: 'pacs.008; drop table' }], ['messages', { payment_type: 'SWIFT' }],
    ['messages', { tx_id: 'not-a-uuid' }], ['messages', { tx_id: `${randomUUID()}\u0000` }],
    ['messages', { limit: 0 }], ['messages', { limit: 201 }], ['messages', { nope: 1 }],
    ['messages', { cursor: 'abc\u0000' }], ['messages', { cursor: refusalCursor }],
    ['messages', { cursor: nulTime }], ['messages', { cursor: 'x'.repeat(201) }],
    ['message', {}], ['message', { message_id: '' }], ['message', { message_id: 'x'.repeat(36) }],
    ['message', { message_id: 'PB\u0000' }], ['message', { message_id: 42 }],
    ['message', { message_id: messageId, include_body: 'yes' }],
    ['message', { message_id: messageId, direction: 'both' }],
    ['message', { message_id: messageId, cursor: messagesCursor }],
    ['message', { message_id: messageId, limit: 1001 }],
    ['refusals', { limit: 201 }], ['refusals', { cursor: messagesCursor }],
    ['refusals', { cursor: 'x'.repeat(41) }],
    ['unanswered', { partner_id: 'nope' }], ['unanswered', { older_than_minutes: -1 }],
    ['unanswered', { older_than_minutes: 43_201 }], ['unanswered', { older_than_minutes: 1.5 }],
    ['unanswered', { payment_type: 'CARD' }], ['unanswered', { cursor: refusalCursor }],
  ]
}

async function badInputRefused() {
  const { tb, p } = s
  const [message] = (await tb.operator.rails.messages({ direction: 'out', limit: 1 })).messages
  const refusalCursor = (await tb.operator.rails.refusals({ limit: 1 })).next_cursor!
  const messagesCursor = (await tb.operator.rails.messages({ limit: 1 })).next_cursor!
  const snapshot = async () => ({
    messages: await tb.operator.rails.messages({ limit: 200 }),
    refusals: await tb.operator.rails.refusals({ limit: 200 }),
    unanswered: await tb.operator.rails.unanswered({ older_than_minutes: 0 }),
  })
  const before = await snapshot()
  const refused = async (subject: string, body: string, code = 400) => {
    const reply = await rawRequest(tb, subject, body, { token: tb.operatorToken })
    assert.equal(reply.code, code, `${subject} ${body.slice(0, 80)}: ${JSON.stringify(reply.body)}`)
  }
  for (const [name, body] of badBodies(message!.message_id, refusalCursor, messagesCursor)) {
    await refused(`ops.rails.${name}`, JSON.stringify(body))
  }
  for (const name of ['messages', 'message', 'refusals', 'unanswered']) {
    await refused(`ops.rails.${name}`, '{"limit": 1')
    const oversized = await rawRequest(tb, `ops.rails.${name}`,
      JSON.stringify({ kind: 'x'.repeat(70_000) }), { token: tb.operatorToken })
    assert.ok(oversized.code >= 400 && oversized.code < 500, `oversized: ${oversized.code}`)
    await refused(`ops.rails.${name}`, '{"message_id": "PB1"}', name === 'message' ? 404 : 400)
    const partner = await rawRequest(tb, `ops.rails.${name}`, '{}', { token: p.token })
    assert.equal(partner.code, 403)
  }
  await expectRefusal(tb.operator.rails.message({ message_id: 'PBNOSUCHMESSAGE' }), 404)
  await expectRefusal(tb.operator.rails.messages({ cursor: refusalCursor }), 400, 'cursor')
  assert.deepEqual(await snapshot(), before)
}

describe('rails ops in the sandbox', () => {
  const tb = useTestBank({ env: { BANK_CLEARING_SCHEDULE: 'off' } })
  before(async () => {
    s = await prepareSandbox(tb)
  })

  test('rails ops - messages newest first: the pacs.008 out with its sum and answers, the pacs.002 in; a tx_id finds the message that carried it, any partner\'s', messagesListed)
  test('rails ops - messages filtered by direction, kind (name or name and version) and payment type', messagesFiltered)
  test('rails ops - messages page by cursor: every message once, in the same order', messagesPaged)
  test('rails ops - one message: its payouts in order with statuses and reasons, paged; its XML made again from the record is the file the clearing house took; audited', messageShown)
  test('rails ops - an inbound message: its XML from archive/ when it is the file applied, and a note when not', inboundShown)
  test('rails ops - refusals newest first after hostile files, with their reasons and SHA-256, paged', refusalsListed)
  test('rails ops - bad input is a 4xx that changes nothing; a partner is refused', badInputRefused)
})

/** Production's bank and the payouts it sent that nothing answers. */
interface Production {
  tb: TestBankHandle
  p: TestPartner
  other: TestPartner
  eft: string[]
  theirs: string
  rtc: string
}

let q: Production

async function prepareProduction(tb: TestBankHandle): Promise<Production> {
  await tb.ready
  const p = await onboardPartner(tb, { approve: true })
  const other = await onboardPartner(tb, { approve: true })
  const account = await newAccount(p)
  await fund(tb, account, 1_000_000)
  const otherAccount = await newAccount(other)
  await fund(tb, otherAccount, 1_000_000)
  const eft: string[] = []
  for (const amount of [1_100, 2_200]) {
    eft.push((await p.client.accounts.transfer(transferBody(account, { amount }))).tx_id)
  }
  const theirs = (await other.client.accounts.transfer(
    transferBody(otherAccount, { amount: 3_300 }))).tx_id
  await clearing(tb)
  tb.clock.advance(60_000)
  // No gateway: recorded as sent, and left Pending.
  const rtc = (await p.client.accounts.transfer(
    transferBody(account, { amount: 400, pay_and_clear: true }))).tx_id
  return { tb, p, other, eft, theirs, rtc }
}

async function unansweredListed() {
  const { tb, p, eft, rtc } = q
  assert.equal(tb.config.sandbox, false)
  const young = await tb.operator.rails.unanswered({})
  assert.deepEqual([young.after_minutes_setting, young.older_than_minutes, young.total],
    [240, 240, 0])
  assert.deepEqual(young.payouts, [])
  assert.equal((await tb.operator.rails.unanswered({ older_than_minutes: 0 })).total, 4)

  tb.clock.advance(240 * 60_000)
  const listed = await tb.operator.rails.unanswered({})
  assert.equal(listed.as_of, tb.clock.now().toISOString().replace('.000Z', 'Z'))
  assert.equal(listed.total, 4)
  const byTx = new Map(listed.payouts.map((x) => [x.tx_id, x]))
  assert.deepEqual(listed.payouts.map((x) => x.tx_id).slice(-1), [rtc], 'oldest first')
  const times = listed.payouts.map((x) => Date.parse(x.sent_at))
  assert.deepEqual(times, [...times].sort((a, b) => a - b))
  const [message] = (await tb.operator.rails.messages({ tx_id: eft[0]! })).messages
  const first = byTx.get(eft[0]!)!
  assert.deepEqual({ ...first, account_id: '', account_number: '' }, {
    tx_id: eft[0], partner_id: p.partnerId, account_id: '', account_number: '',
    source: 'transfer', payment_type: 'EFT', amount: '1100', recipient_name: 'Jane Recipient',
    message_id: message!.message_id, file_name: message!.file_name,
    sent_at: message!.created_at, age_seconds: 241 * 60, status: null,
  })
  const account = await tb.operator.accounts.show({ account_id: first.account_id! })
  assert.equal(account.account_number, first.account_number)
  assert.equal(byTx.get(q.theirs)!.partner_id, q.other.partnerId)
  assert.deepEqual([byTx.get(rtc)!.payment_type, byTx.get(rtc)!.age_seconds], ['RTC', 240 * 60])
}

async function unansweredFilteredAndPaged() {
  const { tb, p, eft, rtc } = q
  const listed = await tb.operator.rails.unanswered({})
  const mine = await tb.operator.rails.unanswered({ partner_id: p.partnerId })
  assert.deepEqual(new Set(mine.payouts.map((x) => x.tx_id)), new Set([...eft, rtc]))
  assert.equal(mine.total, 3)
  const rtcs = await tb.operator.rails.unanswered({ payment_type: 'RTC' })
  assert.deepEqual(rtcs.payouts.map((x) => x.tx_id), [rtc])
  const pages: string[] = []
  let cursor: string | undefined
  do {
    const page = await tb.operator.rails.unanswered({ limit: 1, ...(cursor ? { cursor } : {}) })
    assert.equal(page.total, 4)
    pages.push(...page.payouts.map((x) => x.tx_id))
    cursor = page.next_cursor
  } while (cursor)
  assert.deepEqual(pages, listed.payouts.map((x) => x.tx_id))
}

async function unansweredUntilAnswered() {
  const { tb, eft } = q
  // The clearing house answers the first EFT (accepted) and the second (pending only): the
  // first leaves the list, the second stays with its status.
  const [message] = (await tb.operator.rails.messages({ tx_id: eft[0]! })).messages
  const text = await pacs002Text({ message_id: 'CHANSWER1', created_at: tb.clock.now(),
    original_message_id: message!.message_id }, [
    { original_end_to_end_id: endToEndIdOf(eft[0]!), status: 'ACSC' },
    { original_end_to_end_id: endToEndIdOf(eft[1]!), status: 'PDNG' },
  ])
  const inbound = tb.bank.services.isoRail.folder.inbound
  await fs.mkdir(inbound, { recursive: true })
  await fs.writeFile(path.join(inbound, 'pacs.002.CHANSWER1.xml'), text)
  await tb.operator.clearing.run()
  const after = await tb.operator.rails.unanswered({})
  assert.equal(after.total, 3)
  assert.ok(!after.payouts.some((x) => x.tx_id === eft[0]))
  assert.equal(after.payouts.find((x) => x.tx_id === eft[1])!.status, 'PDNG')
  const [shown] = (await tb.operator.rails.messages({ tx_id: eft[0]! })).messages
  assert.equal(shown!.answered, 1, 'one of its two payouts has a final answer')
}

describe('rails ops in production, with no clearing house to answer', () => {
  const tb = useTestBank({ env: { BANK_SANDBOX: 'false', BANK_CLEARING_SCHEDULE: 'off' } })
  before(async () => {
    q = await prepareProduction(tb)
  })

  test('rails ops - unanswered payouts are listed once older than BANK_RAIL_UNANSWERED_AFTER_MINUTES by the bank clock, oldest first, with partner, account and message', unansweredListed)
  test('rails ops - unanswered payouts filtered by partner and payment type, and paged', unansweredFilteredAndPaged)
  test('rails ops - an answer takes a payout off the list; a pending status keeps it there', unansweredUntilAnswered)
})
