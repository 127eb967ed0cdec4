import assert from 'node:assert/strict'
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { ManualClock } from '../../src/clock.ts'
import { createLogger } from '../../src/logger.ts'
import { ClearingHouse } from '../../src/rails/clearing-house/clearing-house.ts'
import { ClearingHouseSimulator } from '../../src/rails/clearing-house/simulator.ts'
import { endToEndIdOf } from '../../src/rails/iso20022/end-to-end-id.ts'
import { pacs002Text } from '../../src/rails/iso20022/pacs002-write.ts'
import { readCreditTransfers } from '../../src/rails/iso20022/pacs008-read.ts'
import { readStatusRequest } from '../../src/rails/iso20022/pacs028-read.ts'
import { RailFolder } from '../../src/rails/rail-folder.ts'
import { assertLedgerClean } from '../support/assertions.ts'
import { onboardPartner, startTestBank, type TestBank, type TestPartner }
  from '../support/harness.ts'
import { validateAgainstXsd } from '../support/xsd.ts'
import {
  accountNumberOf, balances, feeOf, fund, magic, newAccount, transactionsOf, transferBody, txById,
} from '../transfers/helpers.ts'

// Real-time payments (RTC) through the clearing house's gateway over real HTTP
// (src/rails/rtc-gateway.ts HttpGateway, src/rails/iso-rail.ts payRealTime): a node:http server
// on 127.0.0.1 plays the gateway, answering as the sandbox's clearing house does
// (ClearingHouseSimulator, on a folder of its own) unless a test scripts another answer: none
// (the request held open until the bank gives up), an HTTP error, garbage, a report of its
// own. The bank is the harness's, started with BANK_RAIL_GATEWAY_URL pointing at the server
// and a short BANK_RAIL_GATEWAY_TIMEOUT_MS. An RTC with no outcome stays Pending with its
// hold; a clearing run after BANK_RTC_RECOVERY_AFTER_MS (the test clock, no sleeping) asks
// the gateway with a pacs.028 and, when the gateway never got the payment, sends the same
// pacs.008 again. The tests run one after another on one bank; each leaves nothing Pending.

const start_cents = 1_000_000
/** Short, so a held request gives up soon; no test measures it. */
const gateway_timeout_ms = 800

type MessageKind = 'pacs.008' | 'pacs.028'

/** A request as the gateway received it. */
interface Received {
  kind: MessageKind | undefined
  bytes: Buffer
  text: string
  method: string
  contentType: string | undefined
}

/**
 * What the gateway answers: the clearing house's own answer (`answer`, a 200), nothing
 * (`hold`: the request is held open), a 200 whose body never ends (`stall`), an HTTP status
 * with a body (the clearing house's answer unless given) and headers, or a 200 with the body
 * a function makes of the request and the clearing house's answer.
 */
type Reply =
  | 'answer' | 'hold' | 'stall'
  | { status: number; body?: string; headers?: Record<string, string> }
  | ((received: Received, honest: string | undefined) => string | Promise<string>)

interface Script {
  /** Whether the clearing house keeps a pacs.008 (it then knows it when asked); default yes. */
  keep?: boolean
  reply: Reply
}

const kinds: Record<string, MessageKind> = {
  'urn:iso:std:iso:20022:tech:xsd:pacs.008.001.09': 'pacs.008',
  'urn:iso:std:iso:20022:tech:xsd:pacs.028.001.04': 'pacs.028',
}

function kindOf(text: string): MessageKind | undefined {
  const namespace = /<Document\s+xmlns="([^"]+)"/.exec(text)?.[1]
  return namespace === undefined ? undefined : kinds[namespace]
}

function respond(res: http.ServerResponse, status: number, body: string,
    headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/xml; charset=utf-8', ...headers })
  res.end(body)
}

async function bodyOf(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** The clearing house's gateway: a real HTTP server answering as the simulator does. */
class TestGateway {
  private readonly received: Received[] = []
  private readonly errors: unknown[] = []
  private readonly scripts: Record<MessageKind, Script[]> = { 'pacs.008': [], 'pacs.028': [] }
  private readonly held = new Set<http.ServerResponse>()
  private readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-rtc-gateway-'))
  private readonly simulator: ClearingHouseSimulator
  private readonly server = http.createServer((req, res) => {
    this.handle(req, res).catch((error: unknown) => {
      this.errors.push(error)
      if (!res.headersSent) respond(res, 500, '')
    })
  })
  url = ''

  constructor(clock: ManualClock) {
    const house = new ClearingHouse({ settlement_account_id: 'PB-SETTLEMENT-01',
      bank_branch_code: '999000' })
    this.simulator = new ClearingHouseSimulator(new RailFolder(this.dir), house, clock,
      createLogger('silent'))
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/iso20022`
  }

  /** The answers to the next requests of a kind, in order (then the honest answer again). */
  script(kind: MessageKind, ...scripts: Script[]): void {
    this.scripts[kind].push(...scripts)
  }

  /** The requests received since the last take; every scripted answer must have been used. */
  take(): Received[] {
    assert.deepEqual(this.errors, [], 'the test gateway itself failed')
    assert.deepEqual([this.scripts['pacs.008'].length, this.scripts['pacs.028'].length], [0, 0],
      'every scripted answer was asked for')
    return this.received.splice(0)
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const bytes = await bodyOf(req)
    const text = bytes.toString('utf8')
    const received: Received = { kind: kindOf(text), bytes, text, method: req.method ?? '',
      contentType: req.headers['content-type'] }
    this.received.push(received)
    const script = (received.kind && this.scripts[received.kind].shift()) ?? { reply: 'answer' }
    const honest = await this.honest(received, script.keep ?? true)
    const reply = script.reply
    if (reply === 'hold' || reply === 'stall') return this.hold(res, reply, honest)
    if (reply === 'answer') return respond(res, honest === undefined ? 400 : 200, honest ?? '')
    if (typeof reply === 'function') return respond(res, 200, await reply(received, honest))
    respond(res, reply.status, reply.body ?? honest ?? '', reply.headers)
  }

  /** The clearing house's answer (a pacs.008 it keeps is known to its status requests). */
  private honest(received: Received, keep: boolean): Promise<string | undefined> {
    if (received.kind === 'pacs.028') return this.simulator.answerStatusRequest(received.text)
    if (received.kind === 'pacs.008' && keep) return this.simulator.answerRealTime(received.text)
    return Promise.resolve(undefined)
  }

  private hold(res: http.ServerResponse, how: 'hold' | 'stall', honest: string | undefined) {
    this.held.add(res)
    res.on('close', () => this.held.delete(res))
    if (how === 'stall') {
      res.writeHead(200, { 'content-type': 'application/xml; charset=utf-8' })
      res.write((honest ?? '<?xml version="1.0"?>').slice(0, 40))
    }
  }

  async close(): Promise<void> {
    for (const res of this.held) res.destroy()
    if (this.server.listening) {
      this.server.closeAllConnections()
      await new Promise<void>((resolve, reject) =>
        this.server.close((error) => (error ? reject(error) : resolve())))
    }
    fs.rmSync(this.dir, { recursive: true, force: true })
  }
}

// 2026-11-23T08:00:00Z is Monday 10:00 SAST: the harness's start, shared with the gateway.
const clock = new ManualClock('2026-11-23T08:00:00Z')
const gateway = new TestGateway(clock)
let tb: TestBank
let p: TestPartner

before(async () => {
  await gateway.start()
  tb = await startTestBank({ clock, persistent: false, env: {
    BANK_RAIL_GATEWAY_URL: gateway.url,
    BANK_RAIL_GATEWAY_TIMEOUT_MS: String(gateway_timeout_ms),
  } })
  p = await onboardPartner(tb, { approve: true })
})

after(async () => {
  await tb?.stop()
  await gateway.close()
})

const fee = () => Number(tb.config.fees.RTC)

/** A new account with `start_cents`; the gateway's log emptied. */
async function fundedAccount(): Promise<string> {
  const account = await newAccount(p)
  await fund(tb, account, start_cents)
  gateway.take()
  return account
}

function rtc(account: string, overrides: Record<string, unknown> = {}) {
  return p.client.accounts.transfer(transferBody(account, { pay_and_clear: true, ...overrides }))
}

/** A clearing run once the recovery delay has passed since the payments were taken. */
async function recoveryRun() {
  clock.advance(tb.config.rtcRecoveryAfterMs + 1_000)
  return tb.operator.clearing.run()
}

/** The transaction's row and its record on the rail. */
async function recordOf(txId: string) {
  const db = tb.bank.database.db
  const tx = await db.selectFrom('transactions')
    .select(['status', 'status_reason', 'hold_amount']).where('id', '=', txId)
    .executeTakeFirstOrThrow()
  const submissions = await db.selectFrom('rail_submissions')
    .select(['message_id', 'status', 'reason_code']).where('tx_id', '=', txId).execute()
  assert.equal(submissions.length, 1, `payment ${txId} was recorded as sent once`)
  return { tx, submission: submissions[0]! }
}

async function assertMoney(account: string, balance: number, available: number): Promise<void> {
  assert.deepEqual(await balances(p, account),
    { balance: String(balance), available: String(available) })
}

/** The MsgId of a pacs.008 the gateway received. */
async function messageIdOf(request: Received): Promise<string> {
  assert.equal(request.kind, 'pacs.008')
  return (await readCreditTransfers({ content: request.text })).header.message_id
}

/** The request is a pacs.028.001.04, valid, asking about one payment of one message. */
async function assertAsksAbout(request: Received | undefined, messageId: string,
    txId: string): Promise<void> {
  assert.ok(request)
  assert.equal(request.kind, 'pacs.028')
  assert.equal(request.contentType, 'application/xml; charset=utf-8')
  assert.deepEqual(await validateAgainstXsd(request.text, 'pacs.028.001.04.xsd'), [])
  const asked = await readStatusRequest({ content: request.text })
  assert.deepEqual(asked.items, [{ original_message_id: messageId,
    original_end_to_end_id: endToEndIdOf(txId) }])
  assert.match(request.text, new RegExp(`<OrgnlTxId>${endToEndIdOf(txId)}</OrgnlTxId>`))
}

/** The payment's transfer and fee rows, each once, Successful; its hold gone. */
async function assertPaidOnce(account: string, txId: string): Promise<void> {
  const rows = (await transactionsOf(p, account)).filter((r) =>
    r.tx_id === txId || r.parent_tx_id === txId)
  assert.deepEqual(rows.map((r) => [r.tx_type, r.status]).sort(),
    [['fee', 'Successful'], ['transfer', 'Successful']])
  assert.ok(feeOf(rows, txId))
  assert.equal(String((await recordOf(txId)).tx.hold_amount), '0')
}

/** The pacs.008 carries exactly this one payment: ids, amount, parties, reference. */
async function assertCarries(xml: string, txId: string, account: string,
    body: Record<string, unknown>): Promise<void> {
  const { header, items } = await readCreditTransfers({ content: xml })
  assert.deepEqual([header.transaction_count, header.control_sum], [1, BigInt(body.amount as
    number)])
  assert.equal(items.length, 1)
  const hex = txId.replaceAll('-', '')
  assert.equal(endToEndIdOf(txId), hex)
  assert.deepEqual({ ...items[0]!, settlement_date: '' }, {
    end_to_end_id: hex, tx_id: hex, amount: BigInt(body.amount as number), settlement_date: '',
    payment_type: 'RTC', debtor_name: items[0]!.debtor_name,
    debtor_account_number: await accountNumberOf(p, account),
    debtor_branch_code: tb.config.rail.branchCode,
    creditor_account_number: body.account_number, creditor_branch_code: body.branch_code,
    remittance: body.ref,
  })
  assert.equal(items[0]!.settlement_date, '2026-11-23')
  assert.match(xml, new RegExp(`<Cdtr>\\s*<Nm>${String(body.name)}</Nm>\\s*</Cdtr>`))
}

test('rtc gateway - an RTC the gateway accepts (ACSC) is Successful at once; the gateway received one POST of a pacs.008.001.09 naming exactly that payment, valid against the XSD', async () => {
  const account = await fundedAccount()
  const body = { pay_and_clear: true, amount: 12_345, name: 'Acme Supplies Pty Ltd',
    ref: 'INV 2026-11 A', account_number: '62000000077', branch_code: '250655' }
  const sent = await p.client.accounts.transfer(transferBody(account, body))
  assert.equal(sent.status, 'Successful')
  const requests = gateway.take()
  assert.equal(requests.length, 1, 'one request: the payment')
  const [request] = requests as [Received]
  assert.equal(request.method, 'POST')
  assert.equal(request.contentType, 'application/xml; charset=utf-8')
  assert.equal(request.kind, 'pacs.008')
  assert.deepEqual(await validateAgainstXsd(request.text, 'pacs.008.001.09.xsd'), [])
  await assertCarries(request.text, sent.tx_id, account, body)
  const { tx, submission } = await recordOf(sent.tx_id)
  assert.equal(submission.message_id, await messageIdOf(request))
  assert.deepEqual([submission.status, submission.reason_code], ['ACSC', null])
  assert.deepEqual([tx.status, tx.status_reason], ['Successful', null])
  await assertPaidOnce(account, sent.tx_id)
  const left = start_cents - 12_345 - fee()
  await assertMoney(account, left, left)
})

/** The gateway's rejection of the payment it was sent: RJCT with `code` and a text. */
function rejection(code: string, text: string) {
  return async (received: Received): Promise<string> => {
    const { header, items } = await readCreditTransfers({ content: received.text })
    return pacs002Text({ message_id: `CHSREJECT${code}${header.message_id.slice(-20)}`,
      created_at: clock.now(), original_message_id: header.message_id, group_status: 'RJCT' },
    items.map((item) => ({ original_end_to_end_id: item.end_to_end_id, status: 'RJCT' as const,
      reason_code: code, additional_information: text })))
  }
}

test('rtc gateway - a rejection settles at once with the hold released and the reason kept: RJCT AC01 is Invalid, RJCT AM04 is Failed', async () => {
  const account = await fundedAccount()
  // AC01: the clearing house's own answer for the "invalid account" recipient.
  const invalid = await rtc(account, { amount: 30_000, account_number: magic.invalid })
  gateway.script('pacs.008', { keep: false,
    reply: rejection('AM04', 'insufficient funds at the debtor agent') })
  const failed = await rtc(account, { amount: 40_000 })
  assert.deepEqual([invalid.status, failed.status], ['Invalid', 'Failed'])
  assert.deepEqual(gateway.take().map((r) => r.kind), ['pacs.008', 'pacs.008'])
  const expected = [
    [invalid.tx_id, 'Invalid', 'AC01: recipient account does not exist (simulated)', 'AC01'],
    [failed.tx_id, 'Failed', 'AM04: insufficient funds at the debtor agent', 'AM04'],
  ] as const
  for (const [txId, status, reason, code] of expected) {
    const { tx, submission } = await recordOf(txId)
    assert.deepEqual([tx.status, tx.status_reason, String(tx.hold_amount)], [status, reason, '0'])
    assert.deepEqual([submission.status, submission.reason_code], ['RJCT', code])
    assert.equal((await txById(p, txId)).status, status)
  }
  await assertMoney(account, start_cents, start_cents)
  // Nothing is left for a clearing run to ask about.
  assert.equal((await recoveryRun()).rtc_recovered, 0)
  assert.deepEqual(gateway.take(), [])
  await assertLedgerClean(tb)
})

test('rtc gateway - a gateway that does not answer in time: Pending with its hold; after the recovery delay a clearing run asks with a pacs.028 naming the payment and its message, and its ACSC settles it once', async () => {
  const account = await fundedAccount()
  const total = 20_000 + fee()
  gateway.script('pacs.008', { reply: 'hold' })
  const sent = await rtc(account, { amount: 20_000 })
  assert.equal(sent.status, 'Pending')
  const [first, ...others] = gateway.take()
  assert.deepEqual([first?.kind, others.length], ['pacs.008', 0])
  const messageId = await messageIdOf(first!)
  assert.deepEqual((await recordOf(sent.tx_id)).tx.status, 'Pending')
  await assertMoney(account, start_cents, start_cents - total)
  // Before the delay a clearing run leaves it alone: nothing is asked.
  assert.equal((await tb.operator.clearing.run()).rtc_recovered, 0)
  assert.deepEqual(gateway.take(), [])
  await assertMoney(account, start_cents, start_cents - total)

  const report = await recoveryRun()
  assert.equal(report.rtc_recovered, 1)
  const asked = gateway.take()
  assert.equal(asked.length, 1, 'one status request; the payment is not sent again')
  await assertAsksAbout(asked[0], messageId, sent.tx_id)
  assert.equal((await txById(p, sent.tx_id)).status, 'Successful')
  assert.equal((await recordOf(sent.tx_id)).submission.status, 'ACSC')
  await assertPaidOnce(account, sent.tx_id)
  await assertMoney(account, start_cents - total, start_cents - total)
  // Settled: a later run asks nothing and moves nothing.
  assert.equal((await recoveryRun()).rtc_recovered, 0)
  assert.deepEqual(gateway.take(), [])
  await assertMoney(account, start_cents - total, start_cents - total)
  await assertLedgerClean(tb)
})

/**
 * A recovery run in which the gateway, asked about a payment it never got, answers with a
 * report naming no payment (RJCT NARR, the simulator's) and is sent the same pacs.008 again.
 */
async function assertSentAgain(first: Received, txId: string): Promise<Received> {
  const messageId = await messageIdOf(first)
  const report = await recoveryRun()
  assert.equal(report.rtc_recovered, 1)
  const requests = gateway.take()
  assert.deepEqual(requests.map((r) => r.kind), ['pacs.028', 'pacs.008'])
  await assertAsksAbout(requests[0], messageId, txId)
  const again = requests[1]!
  assert.equal(await messageIdOf(again), messageId, 'the same MsgId')
  assert.ok(again.bytes.equals(first.bytes), 'the same pacs.008, byte for byte')
  return again
}

test('rtc gateway - a gateway that lost the payment (its answer to the pacs.028 names none: RJCT NARR) is sent the same pacs.008 again, byte for byte, and the payment settles on its answer', async () => {
  const account = await fundedAccount()
  const total = 25_000 + fee()
  gateway.script('pacs.008', { keep: false, reply: 'hold' })
  const sent = await rtc(account, { amount: 25_000 })
  assert.equal(sent.status, 'Pending')
  const [first] = gateway.take()
  assert.ok(first)
  await assertMoney(account, start_cents, start_cents - total)

  await assertSentAgain(first, sent.tx_id)
  assert.equal((await txById(p, sent.tx_id)).status, 'Successful')
  const { submission } = await recordOf(sent.tx_id)
  assert.deepEqual([submission.message_id, submission.status],
    [await messageIdOf(first), 'ACSC'])
  await assertPaidOnce(account, sent.tx_id)
  await assertMoney(account, start_cents - total, start_cents - total)
  assert.equal((await recoveryRun()).rtc_recovered, 0)
  assert.deepEqual(gateway.take(), [])
  await assertLedgerClean(tb)
})

/** Answers to a status request that are no answer: the payment must not be sent again. */
const no_status_answers: Array<{ what: string; script: Script }> = [
  { what: 'none in time', script: { reply: 'hold' } },
  { what: 'HTTP 500', script: { reply: { status: 500, body: '' } } },
  { what: 'not XML', script: { reply: () => 'status: unknown' } },
  { what: 'a report of another message', script: { reply: (_r, honest) =>
    honest!.replace(/<OrgnlMsgId>[^<]*</, '<OrgnlMsgId>PBANOTHERMESSAGE<') } },
]

test('rtc gateway - a lost payment whose status requests get no answer (none in time, HTTP 500, not XML, a report of another message) stays Pending and is not sent again; once the gateway says it never got it, it is sent again and settles on the rejection (AC01 → Invalid, hold released)', async () => {
  const account = await fundedAccount()
  gateway.script('pacs.008', { keep: false, reply: 'hold' })
  const sent = await rtc(account, { amount: 15_000, account_number: magic.invalid })
  assert.equal(sent.status, 'Pending')
  const [first] = gateway.take()
  assert.ok(first)

  for (const { what, script } of no_status_answers) {
    gateway.script('pacs.028', script)
    assert.equal((await recoveryRun()).rtc_recovered, 0, what)
    const asked = gateway.take()
    assert.deepEqual(asked.map((r) => r.kind), ['pacs.028'], `${what}: not sent again`)
    await assertAsksAbout(asked[0], await messageIdOf(first), sent.tx_id)
    assert.equal((await txById(p, sent.tx_id)).status, 'Pending', what)
    await assertMoney(account, start_cents, start_cents - 15_000 - fee())
  }

  await assertSentAgain(first, sent.tx_id)
  const { tx, submission } = await recordOf(sent.tx_id)
  assert.deepEqual([tx.status, tx.status_reason],
    ['Invalid', 'AC01: recipient account does not exist (simulated)'])
  assert.deepEqual([submission.status, submission.reason_code], ['RJCT', 'AC01'])
  await assertMoney(account, start_cents, start_cents)
  await assertLedgerClean(tb)
})

/** Prefixes a document type declaration (which the bank's readers refuse). */
function withDoctype(xml: string): string {
  return xml.replace(/^(<\?xml[^>]*\?>)?/, '$1<!DOCTYPE Document [<!ENTITY a "a">]>')
}

/** Answers the gateway gives that are no outcome. */
const bad_answers: Array<{ what: string; script: Script }> = [
  { what: 'HTTP 500, payment not taken',
    script: { keep: false, reply: { status: 500, body: 'Internal Server Error' } } },
  { what: 'HTTP 503 with a genuine ACSC', script: { reply: { status: 503 } } },
  { what: 'HTTP 202 with a genuine ACSC', script: { reply: { status: 202 } } },
  { what: 'not XML', script: { reply: () => 'OK, payment received' } },
  { what: 'an empty body', script: { reply: () => '' } },
  { what: 'an HTML page', script: { reply: () => '<html><body>Bad Gateway</body></html>' } },
  { what: 'a truncated pacs.002', script: { reply: (_r, honest) => honest!.slice(0, 300) } },
  { what: 'a pacs.002 with a DOCTYPE', script: { reply: (_r, honest) => withDoctype(honest!) } },
  { what: 'a pacs.002 of another message', script: { reply: (_r, honest) =>
    honest!.replace(/<OrgnlMsgId>[^<]*</, '<OrgnlMsgId>PBANOTHERMESSAGE<') } },
  { what: 'a PDNG status', script: { reply: (_r, honest) =>
    honest!.replace('<TxSts>ACSC</TxSts>', '<TxSts>PDNG</TxSts>') } },
  { what: 'the pacs.008 echoed back', script: { reply: (received) => received.text } },
  { what: 'a 200 whose body never ends', script: { reply: 'stall' } },
]

/** Pays one RTC per bad answer: each Pending, nothing settled, the bank still answering. */
async function payThroughBadAnswers(account: string): Promise<Map<string, Received>> {
  const firsts = new Map<string, Received>()
  for (const [index, bad] of bad_answers.entries()) {
    gateway.script('pacs.008', bad.script)
    const sent = await rtc(account, { amount: 1_000 + index })
    assert.equal(sent.status, 'Pending', bad.what)
    const requests = gateway.take()
    assert.deepEqual(requests.map((r) => r.kind), ['pacs.008'], bad.what)
    const { tx, submission } = await recordOf(sent.tx_id)
    assert.deepEqual([tx.status, submission.status], ['Pending', null], bad.what)
    firsts.set(sent.tx_id, requests[0]!)
  }
  return firsts
}

test('rtc gateway - HTTP errors and garbage answers (500, 503, not XML, truncated, DOCTYPE, another message, PDNG, an echo, an endless body) leave the RTC Pending with its hold; nothing settles or crashes, and a good answer later settles each', async () => {
  const account = await fundedAccount()
  const firsts = await payThroughBadAnswers(account)
  const held = [...firsts.keys()].length * fee() +
    bad_answers.reduce((sum, _bad, index) => sum + 1_000 + index, 0)
  await assertMoney(account, start_cents, start_cents - held)
  // The bank is as it was: the next RTC, answered well, is Successful at once.
  const good = await rtc(account, { amount: 5_000 })
  assert.equal(good.status, 'Successful')
  assert.equal(gateway.take().length, 1)
  const paid = held + 5_000 + fee()

  const report = await recoveryRun()
  assert.equal(report.rtc_recovered, bad_answers.length)
  const requests = gateway.take()
  const lost = new Set(bad_answers.flatMap((bad, i) => bad.script.keep === false ? [i] : []))
  assert.equal(requests.length, bad_answers.length + lost.size)
  for (const [index, [txId, first]] of [...firsts.entries()].entries()) {
    const messageId = await messageIdOf(first)
    const about = requests.filter((r) => r.text.includes(messageId))
    assert.equal(about.length, lost.has(index) ? 2 : 1, bad_answers[index]!.what)
    await assertAsksAbout(about[0], messageId, txId)
    if (lost.has(index)) assert.ok(about[1]!.bytes.equals(first.bytes), 'sent again as it was')
    assert.equal((await txById(p, txId)).status, 'Successful', bad_answers[index]!.what)
    await assertPaidOnce(account, txId)
  }
  await assertMoney(account, start_cents - paid, start_cents - paid)
  await assertLedgerClean(tb)
})

// The answer is the body of a 200 and anything else is no answer (HttpGateway's contract,
// docs/operators/rails.md "The RTC gateway"); a redirect must not take the customer's payment
// to a URL the bank was never given, nor settle it on that server's word. Fails while
// HttpGateway's fetch follows redirects (its default, `redirect: 'follow'`).
test('rtc gateway - a redirect (HTTP 307) is no answer: the payment goes to BANK_RAIL_GATEWAY_URL only, stays Pending, and the recovery settles it there', async () => {
  // Another server, somewhere the bank was never told to send payments.
  const elsewhere = new TestGateway(clock)
  await elsewhere.start()
  try {
    const account = await fundedAccount()
    gateway.script('pacs.008', { keep: false, reply: { status: 307, body: '',
      headers: { location: elsewhere.url } } })
    const sent = await rtc(account, { amount: 7_000 })
    // Both at once, so that a failure shows where the payment went and what it became.
    assert.deepEqual({ posted_elsewhere: elsewhere.take().map((r) => r.kind),
      status: sent.status }, { posted_elsewhere: [], status: 'Pending' },
    'a 307 is not a 200 (no answer), and the payment goes nowhere but the gateway')
    assert.deepEqual(gateway.take().map((r) => r.kind), ['pacs.008'])
    assert.equal((await recoveryRun()).rtc_recovered, 1)
    assert.deepEqual(gateway.take().map((r) => r.kind), ['pacs.028', 'pacs.008'])
    assert.equal((await txById(p, sent.tx_id)).status, 'Successful')
    await assertPaidOnce(account, sent.tx_id)
    await assertLedgerClean(tb)
  } finally {
    await elsewhere.close()
  }
})
