import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { before, test } from 'node:test'
import { all, at, parseXml, rands, textAt, type XmlElement } from '../support/xml-tree.ts'
import { endToEndIdOf } from '../../src/rails/iso20022/end-to-end-id.ts'
import { pacs002Text, type TransactionStatusRow } from '../../src/rails/iso20022/pacs002-write.ts'
import { pacs004Text, type PaymentReturnRow } from '../../src/rails/iso20022/pacs004-write.ts'
import { assertLedgerClean, expectRefusal } from '../support/assertions.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { validateAgainstXsd } from '../support/xsd.ts'
import {
  accountNumberOf, balances, fund, magic, newAccount, transactionsOf, transferBody, txById,
  type TransferBody,
} from '../transfers/helpers.ts'

// The bank's ISO 20022 file rail (src/rails/iso-rail.ts) end to end, through a real bank and
// real files: a clearing run's EFTs go out as one pacs.008 in outbound/ (valid against the
// official XSD, its totals, ids and parties those of the payments), the sandbox's clearing
// house (src/rails/clearing-house/simulator.ts) answers with a pacs.002 (and, for the
// "returned" recipient, a pacs.004 at its next pass), and the bank applies each inbound file
// whole and once, or refuses it whole with its reason (rail_refusals, archive/refused/),
// changing nothing. Every test runs the clearing cycles it needs; the tests of this file run
// one after another on one bank, and each leaves nothing pending for the next.

const eft_fee = 250
const start = 100_000

// 2026-11-23T08:00:00Z is Monday 10:00 SAST (the test clock).
const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

const iso = () => tb.bank.services.isoRail
const db = () => tb.bank.database.db
/** Where the sandbox's clearing house keeps the bank's files it answered. */
const receivedDir = () => path.join(iso().folder.root, 'clearing-house', 'received')
/** Where it holds returns until its next pass. */
const laterDir = () => path.join(iso().folder.root, 'clearing-house', 'later')

/** A manual clearing cycle a minute on (its cut-off after the payments just taken). */
async function clearing() {
  tb.clock.advance(60_000)
  return tb.operator.clearing.run()
}

interface Paid {
  account: string
  bodies: TransferBody[]
  txIds: string[]
}

/** EFTs from a new account funded with `start`: one per override of transferBody. */
async function payEfts(overrides: Array<Record<string, unknown>>): Promise<Paid> {
  const account = await newAccount(p)
  await fund(tb, account, start)
  const bodies: TransferBody[] = []
  const txIds: string[] = []
  for (const override of overrides) {
    const body = transferBody(account, override)
    const sent = await p.client.accounts.transfer(body)
    assert.equal(sent.status, 'Pending')
    bodies.push(body)
    txIds.push(sent.tx_id)
  }
  return { account, bodies, txIds }
}

/** The outbound message that carried a payout, and its file's name. */
async function messageOf(txId: string): Promise<{ message_id: string; file_name: string }> {
  const row = await db().selectFrom('rail_submissions')
    .innerJoin('rail_messages', 'rail_messages.message_id', 'rail_submissions.message_id')
    .select(['rail_messages.message_id', 'rail_messages.file_name'])
    .where('rail_messages.direction', '=', 'out')
    .where('rail_submissions.tx_id', '=', txId).executeTakeFirst()
  assert.ok(row, `payout ${txId} was sent`)
  return row
}

function submissionsOf(txIds: readonly string[]) {
  return db().selectFrom('rail_submissions')
    .select(['tx_id', 'message_id', 'position', 'end_to_end_id', 'amount', 'status',
      'reason_code', 'answered_at', 'returned_reason_code'])
    .where('tx_id', 'in', txIds).orderBy('position').execute()
}

function refusalsOf(fileName: string) {
  return db().selectFrom('rail_refusals').select(['file_name', 'sha256', 'reason'])
    .where('file_name', '=', fileName).execute()
}

async function statusReason(txId: string): Promise<string | null> {
  const row = await db().selectFrom('transactions').select('status_reason')
    .where('id', '=', txId).executeTakeFirstOrThrow()
  return row.status_reason
}

const sha256 = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex')

/** What a refused or repeated inbound file must leave as it was. */
async function stateOf(paid: Paid) {
  const inbound = await db().selectFrom('rail_messages').select(['message_id', 'sha256'])
    .where('direction', '=', 'in').orderBy('message_id').execute()
  return {
    balances: await balances(p, paid.account),
    transactions: await transactionsOf(p, paid.account),
    submissions: await submissionsOf(paid.txIds),
    inbound,
    internal: (await tb.operator.ledger.verify()).internal_balances,
  }
}

// A small tree of a message's elements, read with saxes (not with the bank's own readers, so
// that what the bank wrote is checked independently of how it reads).


/** The archived pacs.002 files that answer an outbound message, by name. */
async function statusReportsFor(messageId: string): Promise<string[]> {
  const folder = iso().folder
  const names: string[] = []
  for (const name of await folder.list(folder.archive)) {
    if (!name.startsWith('pacs.002.')) continue
    const xml = await fs.readFile(path.join(folder.archive, name), 'utf8')
    const report = at(parseXml(xml), 'FIToFIPmtStsRpt')
    if (textAt(report, 'OrgnlGrpInfAndSts/OrgnlMsgId') === messageId) names.push(name)
  }
  return names
}

/** The root entity's name: what the bank's customer is called as a debtor. */
async function payerName(): Promise<string> {
  const row = await db().selectFrom('entities').select('name')
    .where('id', '=', p.rootEntityId).executeTakeFirstOrThrow()
  return row.name
}

/** Asserts a pacs.008 carries exactly the payments, in order, with their parties. */
async function assertCarries(xml: string, messageId: string, paid: Paid): Promise<void> {
  const document = parseXml(xml)
  assert.equal(document.name, 'Document')
  assert.equal(document.uri, 'urn:iso:std:iso:20022:tech:xsd:pacs.008.001.09')
  const message = at(document, 'FIToFICstmrCdtTrf')
  const sum = paid.bodies.reduce((total, body) => total + Number(body.amount), 0)
  assert.equal(textAt(message, 'GrpHdr/MsgId'), messageId)
  assert.equal(textAt(message, 'GrpHdr/NbOfTxs'), String(paid.bodies.length))
  assert.equal(textAt(message, 'GrpHdr/CtrlSum'), rands(sum))
  const transactions = all(message, 'CdtTrfTxInf')
  assert.equal(transactions.length, paid.bodies.length, 'NbOfTxs is the count it carries')
  const debtorNumber = await accountNumberOf(p, paid.account)
  const debtorName = await payerName()
  transactions.forEach((tx, i) => {
    const body = paid.bodies[i]!
    const e2e = paid.txIds[i]!.replaceAll('-', '')
    assert.match(e2e, /^[0-9a-f]{32}$/)
    assert.equal(textAt(tx, 'PmtId/EndToEndId'), e2e)
    assert.equal(textAt(tx, 'IntrBkSttlmAmt'), rands(Number(body.amount)))
    assert.equal(at(tx, 'IntrBkSttlmAmt').attributes.Ccy, 'ZAR')
    assert.equal(textAt(tx, 'PmtTpInf/LclInstrm/Prtry'), 'EFT')
    assert.equal(textAt(tx, 'Dbtr/Nm'), debtorName)
    assert.equal(textAt(tx, 'DbtrAcct/Id/Othr/Id'), debtorNumber)
    assert.equal(textAt(tx, 'DbtrAgt/FinInstnId/ClrSysMmbId/MmbId'), tb.config.rail.branchCode)
    assert.equal(textAt(tx, 'Cdtr/Nm'), body.name)
    assert.equal(textAt(tx, 'CdtrAcct/Id/Othr/Id'), body.account_number)
    assert.equal(textAt(tx, 'CdtrAgt/FinInstnId/ClrSysMmbId/MmbId'), body.branch_code)
    assert.equal(textAt(tx, 'RmtInf/Ustrd'), body.ref)
  })
  const amounts = transactions.map((tx) => Math.round(Number(textAt(tx, 'IntrBkSttlmAmt')) * 100))
  assert.equal(rands(amounts.reduce((a, b) => a + b, 0)), textAt(message, 'GrpHdr/CtrlSum'),
    'CtrlSum is the sum of the amounts it carries')
}

test('iso rail - a clearing run writes one pacs.008 valid against the official XSD, with the payments\' count, sum, end-to-end ids and parties, and archives the pacs.002 it got back', async () => {
  const paid = await payEfts([
    { amount: 1_234, name: 'Smith & Sons <Pty> Ltd', ref: 'Invoice 7 & 8' },
    { amount: 50_000, name: 'Thandi Nkosi', account_number: '62000000019',
      branch_code: '632005' },
    { amount: 150, name: 'Declined Account', account_number: magic.failed },
  ])
  const report = await clearing()
  assert.deepEqual([report.settled, report.failed, report.invalid, report.returned], [2, 1, 0, 0])

  const { message_id, file_name } = await messageOf(paid.txIds[0]!)
  for (const txId of paid.txIds) assert.equal((await messageOf(txId)).message_id, message_id)
  assert.match(message_id, /^PB[0-9a-f]{32}$/)
  assert.equal(file_name, `pacs.008.${message_id}.xml`)
  const folder = iso().folder
  assert.deepEqual(await folder.list(folder.outbound), [], 'the clearing house took the file')
  const xml = await fs.readFile(path.join(receivedDir(), file_name), 'utf8')
  assert.deepEqual(await validateAgainstXsd(xml, 'pacs.008.001.09.xsd'), [])
  await assertCarries(xml, message_id, paid)
  const recorded = await db().selectFrom('rail_messages').selectAll()
    .where('direction', '=', 'out').where('message_id', '=', message_id).executeTakeFirstOrThrow()
  assert.equal(recorded.transaction_count, 3)
  assert.equal(String(recorded.control_sum), String(1_234 + 50_000 + 150))
  assert.notEqual(recorded.written_at, null)

  const answers = await statusReportsFor(message_id)
  assert.equal(answers.length, 1, 'one status report answered the message, archived')
  const answerXml = await fs.readFile(path.join(folder.archive, answers[0]!), 'utf8')
  assert.deepEqual(await validateAgainstXsd(answerXml, 'pacs.002.001.11.xsd'), [])
  assert.deepEqual(await folder.list(folder.inbound), [])
  const statuses = all(at(parseXml(answerXml), 'FIToFIPmtStsRpt'), 'TxInfAndSts')
    .map((s) => [textAt(s, 'OrgnlEndToEndId'), textAt(s, 'TxSts')])
  assert.deepEqual(statuses, paid.txIds.map((id, i) => [endToEndIdOf(id),
    i === 2 ? 'RJCT' : 'ACSC']))
  assert.deepEqual((await submissionsOf(paid.txIds)).map((s) => [s.status, s.reason_code]),
    [['ACSC', null], ['ACSC', null], ['RJCT', 'AG01']])
  assert.deepEqual(await Promise.all(paid.txIds.map(async (id) => (await txById(p, id)).status)),
    ['Successful', 'Successful', 'Failed'])
  const left = String(start - 1_234 - 50_000 - 2 * eft_fee)
  assert.deepEqual(await balances(p, paid.account), { balance: left, available: left })
  await assertLedgerClean(tb)
})

test('iso rail - writeOutbound of a recorded message writes the same file again: same name, same bytes', async () => {
  const paid = await payEfts([{ amount: 777, name: 'Ümlaut Ñame 😀' }, { amount: 888 }])
  await clearing()
  const { message_id, file_name } = await messageOf(paid.txIds[0]!)
  const sent = await fs.readFile(path.join(receivedDir(), file_name))
  const folder = iso().folder
  assert.deepEqual(await folder.list(folder.outbound), [])

  // Later, and twice: neither the time nor a rewrite enters the bytes.
  tb.clock.advance(3_600_000)
  try {
    for (let i = 0; i < 2; i++) {
      await iso().writeOutbound(message_id)
      assert.deepEqual(await folder.list(folder.outbound), [file_name])
      const again = await fs.readFile(path.join(folder.outbound, file_name))
      assert.equal(again.length, sent.length)
      assert.ok(again.equals(sent), 'the same bytes as the file the clearing house received')
    }
  } finally {
    // Not left for the clearing house to answer a second time in a later test's run.
    await fs.rm(path.join(folder.outbound, file_name), { force: true })
  }
  await assert.rejects(iso().writeOutbound(`PB${'0'.repeat(32)}`), /not recorded/)
  assert.deepEqual(await folder.list(folder.outbound), [])
})

test('iso rail - a status report delivered twice is applied once: nothing settles twice, the file is archived again, the ledger stays clean', async () => {
  const paid = await payEfts([{ amount: 2_000 }, { amount: 3_000,
    account_number: magic.invalid }])
  const first = await clearing()
  assert.deepEqual([first.settled, first.failed, first.invalid], [1, 0, 1])
  const { message_id } = await messageOf(paid.txIds[0]!)
  const [answer] = await statusReportsFor(message_id)
  assert.ok(answer)
  const before = await stateOf(paid)
  const folder = iso().folder

  await fs.copyFile(path.join(folder.archive, answer), path.join(folder.inbound, answer))
  assert.deepEqual(await iso().readInbound(answer), { kind: 'applied', name: answer },
    'the rail knows the message as applied')
  const again = await clearing()
  assert.deepEqual([again.settled, again.failed, again.invalid, again.returned], [0, 0, 0, 0])
  assert.deepEqual(await folder.list(folder.inbound), [])
  assert.ok(await folder.exists(folder.archive, answer), 'archived again')
  assert.equal(await folder.exists(folder.refused, answer), false)
  assert.deepEqual(await refusalsOf(answer), [])
  assert.deepEqual(await stateOf(paid), before)
  const left = String(start - 2_000 - eft_fee)
  assert.deepEqual(await balances(p, paid.account), { balance: left, available: left })
  await assertLedgerClean(tb)
})

test('iso rail - a second status report of its own id for payments already answered changes nothing', async () => {
  const paid = await payEfts([{ amount: 2_500 }, { amount: 3_500,
    account_number: magic.invalid }])
  await clearing()
  const { message_id } = await messageOf(paid.txIds[0]!)
  const before = await stateOf(paid)
  // The opposite answers: the accepted one rejected, the rejected one accepted.
  const name = 'pacs.002.CHSECONDANSWER.xml'
  const xml = await pacs002Text({ message_id: 'CHSECONDANSWER', created_at: tb.clock.now(),
    original_message_id: message_id }, [
    { original_end_to_end_id: endToEndIdOf(paid.txIds[0]!), status: 'RJCT', reason_code: 'AC01' },
    { original_end_to_end_id: endToEndIdOf(paid.txIds[1]!), status: 'ACSC' },
  ])
  await fs.writeFile(path.join(iso().folder.inbound, name), xml)
  const report = await clearing()
  assert.deepEqual([report.settled, report.failed, report.invalid], [0, 0, 0])
  assert.deepEqual(await iso().folder.list(iso().folder.inbound), [])
  const after = await stateOf(paid)
  assert.deepEqual({ ...after, inbound: undefined }, { ...before, inbound: undefined },
    'a payment answered once keeps its answer')
  assert.deepEqual(await Promise.all(paid.txIds.map(async (id) => (await txById(p, id)).status)),
    ['Successful', 'Invalid'])
  await assertLedgerClean(tb)
})

/**
 * A payout sent (recorded and written) whose answer the clearing house made but the test
 * holds back: it stays Pending until the answer is delivered.
 */
async function sentUnanswered(amount: number) {
  const paid = await payEfts([{ amount }])
  const body = paid.bodies[0]!
  const transfer = {
    tx_id: paid.txIds[0]!, source: 'transfer' as const, amount: BigInt(amount), ref: body.ref,
    debtor: { name: await payerName(), account_number: await accountNumberOf(p, paid.account) },
    creditor: { name: body.name, account_number: body.account_number,
      branch_code: body.branch_code },
  }
  const messageId = await iso().submitEft([transfer], '2026-11-23')
  const house = tb.bank.services.clearingHouse
  assert.ok(house, 'the sandbox runs the clearing-house simulator')
  // Answers what waits in outbound/ (our file), holding back any return it keeps for later.
  await house.pass(false)
  const folder = iso().folder
  const names = await folder.list(folder.inbound)
  assert.equal(names.length, 1)
  const name = names[0]!
  assert.match(name, /^pacs\.002\.CHS[0-9a-f]{32}\.xml$/)
  const answer = await fs.readFile(path.join(folder.inbound, name), 'utf8')
  await fs.rm(path.join(folder.inbound, name))
  return { paid, messageId, answer: { name, xml: answer } }
}

/** A DOCTYPE whose entities expand to 10^9 "lol"s, put before a message's root. */
function withBillionLaughs(xml: string): string {
  const entities = ['  <!ENTITY lol0 "lol">']
  for (let i = 1; i <= 9; i++) {
    entities.push(`  <!ENTITY lol${i} "${`&lol${i - 1};`.repeat(10)}">`)
  }
  const doctype = `<!DOCTYPE Document [\n${entities.join('\n')}\n]>\n`
  return xml.replace('?>\n', `?>\n${doctype}`).replace(/<MsgId>[^<]*</, '<MsgId>&lol9;<')
}

interface Hostile {
  name: string
  content: string
  reason: RegExp
}

/** Files the bank must refuse whole, each named as the kind it claims to be. */
async function hostileFiles(unanswered: Awaited<ReturnType<typeof sentUnanswered>>):
    Promise<Hostile[]> {
  const genuine = unanswered.answer.xml
  const e2e = endToEndIdOf(unanswered.paid.txIds[0]!)
  const status = (message_id: string, original: string, rows: TransactionStatusRow[]) =>
    pacs002Text({ message_id, created_at: tb.clock.now(), original_message_id: original }, rows)
  const camt053 = await fs.readFile(new URL('../fixtures/iso20022/inbound/camt.053-settlement.xml',
    import.meta.url), 'utf8')
  return [
    { name: 'pacs.002.NOTXML.xml', content: 'this is not XML at all { "status": "ACSC" }',
      reason: /not well-formed XML: text data outside of root node/ },
    { name: 'pacs.002.LAUGHS.xml', content: withBillionLaughs(genuine), reason: /DOCTYPE/ },
    { name: 'pacs.002.WRONGNS.xml',
      content: genuine.replace('xsd:pacs.002.001.11', 'xsd:pacs.002.001.10'),
      reason: /pacs\.002\.001\.10, not urn:iso:std:iso:20022:tech:xsd:pacs\.002\.001\.11/ },
    { name: 'pacs.002.UNSENT.xml', reason: /status 2 names end-to-end id .* did not carry/,
      // The payment the bank sent first, accepted, then one it never sent: refused whole.
      content: await status('CHUNSENT', unanswered.messageId, [
        { original_end_to_end_id: e2e, status: 'ACSC' },
        { original_end_to_end_id: endToEndIdOf(randomUUID()), status: 'ACSC' }]) },
    { name: 'pacs.002.OTHERMSG.xml', reason: /which message PBOTHER of the bank did not carry/,
      content: await status('CHOTHERMSG', 'PBOTHER', [
        { original_end_to_end_id: e2e, status: 'ACSC' }]) },
    { name: 'pacs.002.TRUNCATED.xml', content: genuine.slice(0, genuine.length - 40),
      reason: /not well-formed XML: unclosed tag/ },
    { name: 'camt.053.x.xml', content: camt053,
      reason: /reports account SETTLEMENT-250655, not the bank's settlement account/ },
    { name: 'pain.001.x.xml', content: camt053, reason: /not a message kind the bank applies/ },
  ]
}

/** Asserts each file was refused whole: its reason recorded, its bytes in archive/refused/. */
async function assertRefused(files: Hostile[]): Promise<void> {
  const folder = iso().folder
  assert.deepEqual(await folder.list(folder.inbound), [], 'nothing left waiting')
  for (const file of files) {
    const refusals = await refusalsOf(file.name)
    assert.equal(refusals.length, 1, `${file.name}: one refusal recorded`)
    assert.match(refusals[0]!.reason, file.reason, file.name)
    assert.equal(refusals[0]!.sha256, sha256(file.content), `${file.name}: the bytes refused`)
    const kept = await fs.readFile(path.join(folder.refused, file.name), 'utf8')
    assert.equal(kept, file.content, `${file.name}: kept as it came, in archive/refused/`)
    assert.equal(await folder.exists(folder.archive, file.name), false, `${file.name} applied`)
  }
}

test('iso rail - malformed and hostile inbound files are refused whole with their reason, moved to archive/refused/, and change nothing; the genuine answer then settles the payment', async () => {
  const unanswered = await sentUnanswered(4_321)
  const { paid } = unanswered
  const files = await hostileFiles(unanswered)
  for (const file of files) {
    await fs.writeFile(path.join(iso().folder.inbound, file.name), file.content)
  }
  const before = await stateOf(paid)
  assert.equal(before.submissions[0]!.status, null)

  const report = await clearing()
  assert.deepEqual([report.settled, report.failed, report.invalid, report.returned], [0, 0, 0, 0])
  await assertRefused(files)
  assert.deepEqual(await stateOf(paid), before, 'nothing of any refused file was applied')
  assert.equal((await txById(p, paid.txIds[0]!)).status, 'Pending')
  assert.deepEqual(await submissionsOf(paid.txIds), before.submissions, 'not sent again')

  // The clearing house's own answer, delivered now, is applied.
  await fs.writeFile(path.join(iso().folder.inbound, unanswered.answer.name),
    unanswered.answer.xml)
  const answered = await clearing()
  assert.deepEqual([answered.settled, answered.failed, answered.invalid], [1, 0, 0])
  assert.equal((await txById(p, paid.txIds[0]!)).status, 'Successful')
  assert.equal((await submissionsOf(paid.txIds))[0]!.status, 'ACSC')
  assert.ok(await iso().folder.exists(iso().folder.archive, unanswered.answer.name))
  const left = String(start - 4_321 - eft_fee)
  assert.deepEqual(await balances(p, paid.account), { balance: left, available: left })
  await assertLedgerClean(tb)
})

/** A pacs.004 of the clearing house's returning one payment of a bank's message. */
function returnFile(id: string, messageId: string, txId: string, cents: bigint) {
  const row: PaymentReturnRow = { return_id: `${id}R`, original_message_id: messageId,
    original_end_to_end_id: endToEndIdOf(txId), returned_amount: cents, reason_code: 'AC04',
    additional_information: 'Closed account (test)' }
  return { name: `pacs.004.${id}.xml`, text: pacs004Text({ message_id: id,
    created_at: tb.clock.now() }, [row]) }
}

test('iso rail - a pacs.004 returning another amount than the payment, or a payment the bank never sent, is refused whole and the payment stays Successful; the right amount reverses it', async () => {
  const paid = await payEfts([{ amount: 6_000 }])
  await clearing()
  const txId = paid.txIds[0]!
  assert.equal((await txById(p, txId)).status, 'Successful')
  const { message_id } = await messageOf(txId)
  const wrong = [
    { ...returnFile('CHRLESS', message_id, txId, 5_999n),
      reason: /returns 5999 cents of a payment of 6000/ },
    { ...returnFile('CHRMORE', message_id, txId, 6_001n),
      reason: /returns 6001 cents of a payment of 6000/ },
    { ...returnFile('CHRUNSENT', message_id, randomUUID(), 6_000n),
      reason: /names no payment the bank sent/ },
  ]
  const files: Hostile[] = []
  for (const file of wrong) {
    files.push({ name: file.name, content: await file.text, reason: file.reason })
    await fs.writeFile(path.join(iso().folder.inbound, file.name), files.at(-1)!.content)
  }
  const before = await stateOf(paid)
  const report = await clearing()
  assert.equal(report.returned, 0)
  await assertRefused(files)
  assert.deepEqual(await stateOf(paid), before)
  assert.equal((await txById(p, txId)).status, 'Successful')

  const right = returnFile('CHRRIGHT', message_id, txId, 6_000n)
  await fs.writeFile(path.join(iso().folder.inbound, right.name), await right.text)
  const returned = await clearing()
  assert.equal(returned.returned, 1)
  assert.equal((await txById(p, txId)).status, 'Reversed')
  assert.equal((await submissionsOf([txId]))[0]!.returned_reason_code, 'AC04')
  assert.ok(await iso().folder.exists(iso().folder.archive, right.name))
  const left = String(start - eft_fee)
  assert.deepEqual(await balances(p, paid.account), { balance: left, available: left })
  await assertLedgerClean(tb)
})

test('iso rail - the returned recipient (4000000028) is Successful after the first run and Reversed after the next, by the clearing house\'s pacs.004 (AC04)', async () => {
  const paid = await payEfts([{ amount: 10_000, account_number: magic.returned }])
  const txId = paid.txIds[0]!
  const first = await clearing()
  assert.deepEqual([first.settled, first.returned], [1, 0])
  assert.equal((await txById(p, txId)).status, 'Successful')
  assert.deepEqual((await submissionsOf([txId])).map((s) => [s.status, s.returned_reason_code]),
    [['ACSC', null]])
  const held = await iso().folder.list(laterDir())
  assert.equal(held.length, 1, 'the return is held back until the next pass')
  assert.match(held[0]!, /^pacs\.004\.CHR[0-9a-f]{32}\.xml$/)
  const paidOut = String(start - 10_000 - eft_fee)
  assert.deepEqual(await balances(p, paid.account), { balance: paidOut, available: paidOut })

  const second = await clearing()
  assert.deepEqual([second.settled, second.returned], [0, 1])
  assert.equal((await txById(p, txId)).status, 'Reversed')
  assert.equal((await submissionsOf([txId]))[0]!.returned_reason_code, 'AC04')
  assert.match(await statusReason(txId) ?? '', /^AC04/)
  assert.deepEqual(await iso().folder.list(laterDir()), [])
  assert.ok(await iso().folder.exists(iso().folder.archive, held[0]!), 'the pacs.004 archived')
  const back = String(start - eft_fee)
  assert.deepEqual(await balances(p, paid.account), { balance: back, available: back })

  const third = await clearing()
  assert.equal(third.returned, 0, 'reversed once')
  assert.deepEqual(await balances(p, paid.account), { balance: back, available: back })
  await assertLedgerClean(tb)
})

test('iso rail - a recipient name XML cannot carry: a control character is refused at the endpoint (400); U+FFFE, which the endpoint takes, ends Invalid with its reason and the rest of the cycle goes out', async () => {
  const account = await newAccount(p)
  await fund(tb, account, start)
  // The endpoint refuses control characters in every field (src/contract/text-rules.ts), so
  // a name with U+0001 never reaches the rail.
  await expectRefusal(p.client.accounts.transfer(transferBody(account,
    { name: 'Bad\u0001Name' })), 400, 'name')
  // U+FFFE is no control character, but no XML 1.0 character either.
  const bad = await p.client.accounts.transfer(transferBody(account,
    { amount: 1_000, name: 'Not\uFFFEcarried' }))
  assert.equal(bad.status, 'Pending')
  const goodBody = transferBody(account, { amount: 2_000, name: 'Carried Fine' })
  const good = await p.client.accounts.transfer(goodBody)

  const report = await clearing()
  assert.deepEqual([report.settled, report.failed, report.invalid], [1, 0, 1])
  assert.equal((await txById(p, bad.tx_id)).status, 'Invalid')
  assert.match(await statusReason(bad.tx_id) ?? '',
    /cannot be sent on the rail: .*U\+FFFE/)
  assert.deepEqual(await submissionsOf([bad.tx_id]), [], 'never sent')
  assert.equal((await txById(p, good.tx_id)).status, 'Successful')
  const { message_id, file_name } = await messageOf(good.tx_id)
  const xml = await fs.readFile(path.join(receivedDir(), file_name), 'utf8')
  assert.deepEqual(await validateAgainstXsd(xml, 'pacs.008.001.09.xsd'), [])
  await assertCarries(xml, message_id, { account, bodies: [goodBody], txIds: [good.tx_id] })
  const left = String(start - 2_000 - eft_fee)
  assert.deepEqual(await balances(p, account), { balance: left, available: left })
  await assertLedgerClean(tb)
})

test('iso rail - a return that comes before its payment\'s answer waits in inbound/, and is applied once the answer has settled the payment', async () => {
  const unanswered = await sentUnanswered(7_000)
  const { paid, messageId } = unanswered
  const txId = paid.txIds[0]!
  const early = returnFile('CHREARLY', messageId, txId, 7_000n)
  await fs.writeFile(path.join(iso().folder.inbound, early.name), await early.text)
  const before = await stateOf(paid)
  const waiting = await clearing()
  assert.equal(waiting.returned, 0)
  assert.deepEqual(await iso().folder.list(iso().folder.inbound), [early.name], 'it waits')
  assert.deepEqual(await refusalsOf(early.name), [])
  assert.deepEqual(await stateOf(paid), before, 'nothing of it kept')

  await fs.writeFile(path.join(iso().folder.inbound, unanswered.answer.name),
    unanswered.answer.xml)
  const both = await clearing()
  assert.deepEqual([both.settled, both.returned], [1, 1], 'the answer first, then the return')
  assert.equal((await txById(p, txId)).status, 'Reversed')
  assert.deepEqual((await submissionsOf([txId])).map((s) => [s.status, s.returned_reason_code]),
    [['ACSC', 'AC04']])
  assert.deepEqual(await iso().folder.list(iso().folder.inbound), [])
  assert.ok(await iso().folder.exists(iso().folder.archive, early.name))
  const left = String(start - eft_fee)
  assert.deepEqual(await balances(p, paid.account), { balance: left, available: left })
  await assertLedgerClean(tb)
})

test('iso rail - a pending status (PDNG) is recorded and leaves the payment Pending; the final answer then settles it', async () => {
  const unanswered = await sentUnanswered(8_000)
  const { paid, messageId } = unanswered
  const txId = paid.txIds[0]!
  const name = 'pacs.002.CHPENDING.xml'
  await fs.writeFile(path.join(iso().folder.inbound, name), await pacs002Text({
    message_id: 'CHPENDING', created_at: tb.clock.now(), original_message_id: messageId,
  }, [{ original_end_to_end_id: endToEndIdOf(txId), status: 'PDNG' }]))
  const pending = await clearing()
  assert.deepEqual([pending.settled, pending.failed, pending.invalid], [0, 0, 0])
  assert.ok(await iso().folder.exists(iso().folder.archive, name), 'applied')
  assert.equal((await txById(p, txId)).status, 'Pending')
  assert.equal((await submissionsOf([txId]))[0]!.status, 'PDNG')
  assert.deepEqual(await balances(p, paid.account),
    { balance: String(start), available: String(start - 8_000 - eft_fee) }, 'still held')

  await fs.writeFile(path.join(iso().folder.inbound, unanswered.answer.name),
    unanswered.answer.xml)
  const settled = await clearing()
  assert.equal(settled.settled, 1)
  assert.equal((await txById(p, txId)).status, 'Successful')
  assert.equal((await submissionsOf([txId]))[0]!.status, 'ACSC')
  await assertLedgerClean(tb)
})

// A payment the clearing house rejected was never paid, so it cannot come back: a return
// of it is wrong in what it says, and is refused whole like a return of a payment the bank
// never sent, rather than applied with nothing to reverse. (Today it is archived as applied
// and `rail_submissions` records a return, AC04, on a payout answered RJCT.)
test('iso rail - a pacs.004 for a payment the clearing house rejected changes nothing in the ledger and is refused whole, not recorded as a return', async () => {
  const paid = await payEfts([{ amount: 9_000, account_number: magic.invalid }])
  await clearing()
  const txId = paid.txIds[0]!
  assert.equal((await txById(p, txId)).status, 'Invalid')
  const { message_id } = await messageOf(txId)
  const before = await stateOf(paid)
  const file = returnFile('CHRREJECTED', message_id, txId, 9_000n)
  const content = await file.text
  await fs.writeFile(path.join(iso().folder.inbound, file.name), content)
  const report = await clearing()
  assert.equal(report.returned, 0)
  assert.deepEqual(await iso().folder.list(iso().folder.inbound), [])
  assert.equal((await txById(p, txId)).status, 'Invalid')
  const after = await stateOf(paid)
  assert.deepEqual([after.balances, after.transactions, after.internal],
    [before.balances, before.transactions, before.internal], 'the ledger is unchanged')
  assert.deepEqual(await submissionsOf([txId]), before.submissions,
    'a rejected payout is not recorded as returned')
  assert.deepEqual(after.inbound, before.inbound, 'the return is not recorded as applied')
  assert.equal((await refusalsOf(file.name)).length, 1, 'the return is refused with a reason')
  assert.ok(await iso().folder.exists(iso().folder.refused, file.name))
  await assertLedgerClean(tb)
})

/** The archived status report of a payment's message, its name and text. */
async function archivedAnswer(txId: string): Promise<{ name: string; xml: string }> {
  const { message_id } = await messageOf(txId)
  const [name] = await statusReportsFor(message_id)
  assert.ok(name)
  return { name, xml: await fs.readFile(path.join(iso().folder.archive, name), 'utf8') }
}

// A file that reuses the id of a message already applied but says something else is not a
// second delivery of it: it is refused whole with its reason for the operators (the SHA-256 of
// the file applied is recorded in rail_messages), and the archived copy of the file applied
// stays as it was. (Today it is taken as applied, nothing is recorded, and its move to
// archive/ replaces the applied file's copy there.)
test('iso rail - a different file under the id of a status report already applied changes nothing, is refused, and leaves the archived original as it was', async () => {
  const paid = await payEfts([{ amount: 2_200 }])
  await clearing()
  const txId = paid.txIds[0]!
  const original = await archivedAnswer(txId)
  const tampered = original.xml.replace('<TxSts>ACSC</TxSts>', '<TxSts>RJCT</TxSts>\n' +
    '      <StsRsnInf>\n        <Rsn>\n          <Cd>AC01</Cd>\n        </Rsn>\n' +
    '      </StsRsnInf>')
  assert.notEqual(tampered, original.xml)
  assert.deepEqual(await validateAgainstXsd(tampered, 'pacs.002.001.11.xsd'), [])
  const before = await stateOf(paid)
  const folder = iso().folder
  await fs.writeFile(path.join(folder.inbound, original.name), tampered)
  const report = await clearing()
  assert.deepEqual([report.settled, report.failed, report.invalid], [0, 0, 0])
  assert.deepEqual(await folder.list(folder.inbound), [])
  assert.deepEqual(await stateOf(paid), before, 'nothing applied')
  assert.equal((await txById(p, txId)).status, 'Successful')
  assert.equal(await fs.readFile(path.join(folder.archive, original.name), 'utf8'), original.xml,
    'the archived copy is still the file that was applied')
  const refusals = await refusalsOf(original.name)
  assert.deepEqual(refusals.map((r) => r.sha256), [sha256(tampered)],
    'the different file is refused with a reason')
  await assertLedgerClean(tb)
})
