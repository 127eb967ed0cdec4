import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { all, at, parseXml, rands, textAt, type XmlElement } from '../support/xml-tree.ts'
import { sandbox_payer } from '../../src/rails/clearing-house/clearing-house.ts'
import { incomingPacs008Text, type IncomingCreditMessage } from '../../src/rails/clearing-house/incoming-write.ts'
import { assertLedgerClean, expectRefusal, iso, uuidPattern } from '../support/assertions.ts'
import {
  onboardPartner, useTestBank, type TestBank, type TestBankHandle, type TestPartner,
} from '../support/harness.ts'
import { validateAgainstXsd } from '../support/xsd.ts'
import {
  accountNumberOf, balances, fund, internalBody, newAccount, transactionsOf, txById,
} from '../transfers/helpers.ts'

// Incoming payments (src/incoming): another bank's pacs.008 naming one of the bank's accounts
// credits it once, as an `incoming` transaction with the payer's name and reference, a
// `payment.received` event for the account's partner and the payer's details behind
// `incoming_details`; an unknown account is sent back (AC01) by a pacs.004 in outbound/; a
// file that is wrong in any way is refused whole and changes nothing. Driven through a real
// bank: the sandbox's `ops.sandbox.incoming` (the clearing-house simulator writes a pacs.008
// into inbound/, and the bank applies it before answering), and files of the test's own
// dropped into inbound/ and applied with `isoRail.applyInbound()` or a clearing run. The
// clearing schedule is off in test banks, so nothing else applies inbound files meanwhile.
//
// Three banks, one after another (each suite's bank is stopped before the next starts): the
// sandbox, production (BANK_SANDBOX=false), and a sandbox without the simulator.

// The test clock: 2026-11-23T08:00:00Z, Monday 10:00 SAST.
const today = '2026-11-23'



/** Rows of a table, counted. */
async function countOf(bank: TestBank, table: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`select count(*)::text as n from ${sql.table(table)}`
    .execute(bank.bank.database.db)
  return Number(rows[0]!.n)
}

// ---------------------------------------------------------------------------------------------
// The sandbox's bank and its partners (set by the first suite, used by its tests).

let tb: TestBankHandle
let p: TestPartner
let other: TestPartner

const rail = () => tb.bank.services.isoRail
const db = () => tb.bank.database.db
const folder = () => rail().folder
/** Where the sandbox's clearing house keeps the bank's files it took. */
const receivedDir = () => path.join(folder().root, 'clearing-house', 'received')

/** A new account of `p` (balance 0) and its number. */
async function account(): Promise<{ id: string; number: string }> {
  const id = await newAccount(p)
  return { id, number: await accountNumberOf(p, id) }
}

/** Everything an incoming payment that credits nothing must leave as it was. */
async function bankState() {
  const received = await db().selectFrom('events').select('id')
    .where('type', '=', 'payment.received').execute()
  const inbound = await db().selectFrom('rail_messages').select(['message_id', 'sha256'])
    .where('direction', '=', 'in').orderBy('message_id').execute()
  return {
    transactions: await countOf(tb, 'transactions'),
    postings: await countOf(tb, 'postings'),
    incoming: await db().selectFrom('incoming_payments').selectAll().orderBy('id').execute(),
    received_events: received.length,
    inbound_messages: inbound,
    outbound_messages: await countOf(tb, 'rail_messages') - inbound.length,
    internal: (await tb.operator.ledger.verify()).internal_balances,
    inbound_files: await folder().list(folder().inbound),
    outbound_files: await folder().list(folder().outbound),
  }
}

/** The `payment.received` events of a transaction. */
function receivedEvents(txId: string) {
  return db().selectFrom('events').selectAll().where('resource_id', '=', txId)
    .where('type', '=', 'payment.received').execute()
}

/** An internal balance of the ledger (`settlement:EFT`), in cents. */
async function internal(name: string): Promise<bigint> {
  const report = await tb.operator.ledger.verify()
  return BigInt(report.internal_balances[name] ?? '0')
}

/** An incoming credit of the test's own, as a clearing house's pacs.008 carries it. */
function credit(accountNumber: string,
    overrides: Partial<IncomingCreditMessage> = {}): IncomingCreditMessage {
  const id = randomUUID().replaceAll('-', '')
  return {
    message_id: `CHX${id}`, created_at: tb.clock.now(), end_to_end_id: `CHY${id}`,
    amount: 5_000n, settlement_date: today, payment_type: 'EFT',
    payer: { name: 'Crafted Payer', account_number: '62000000019', branch_code: '632005' },
    payee: { account_number: accountNumber, branch_code: tb.config.rail.branchCode },
    reference: 'Crafted ref', ...overrides,
  }
}

/** Writes a file into inbound/ under the name a pacs.008 has; resolves with that name. */
async function deliver(messageId: string, text: string): Promise<string> {
  const name = `pacs.008.${messageId}.xml`
  await fs.writeFile(path.join(folder().inbound, name), text)
  return name
}

/** Delivers files into inbound/ and applies them. */
async function applyFiles(files: Array<[string, string]>) {
  for (const [messageId, text] of files) await deliver(messageId, text)
  return rail().applyInbound()
}

/**
 * The pacs.004 that returns an incoming message: in outbound/, or taken by the simulator into
 * its received/ already. Exactly one, recorded as an outbound message and written.
 */
async function returnFileOf(originalMessageId: string): Promise<string> {
  const found: string[] = []
  for (const dir of [folder().outbound, receivedDir()]) {
    const names = await fs.readdir(dir).catch(() => [] as string[])
    for (const name of names.filter((n) => n.startsWith('pacs.004.'))) {
      const xml = await fs.readFile(path.join(dir, name), 'utf8')
      if (xml.includes(`<OrgnlMsgId>${originalMessageId}</OrgnlMsgId>`)) found.push(xml)
    }
  }
  assert.equal(found.length, 1, `one pacs.004 returns ${originalMessageId}`)
  const recorded = await db().selectFrom('rail_messages').select(['kind', 'written_at'])
    .where('direction', '=', 'out').where('kind', '=', 'pacs.004.001.10')
    .where('body', 'like', `%${originalMessageId}%`).execute()
  assert.equal(recorded.length, 1, 'the return is recorded as an outbound message')
  assert.notEqual(recorded[0]!.written_at, null, 'and written')
  return found[0]!
}

/** Asserts a pacs.004 (valid against the XSD) returns one payment with AC01. */
async function assertReturnsAc01(xml: string, messageId: string, endToEndId: string,
    cents: number): Promise<void> {
  assert.deepEqual(await validateAgainstXsd(xml, 'pacs.004.001.10.xsd'), [])
  const message = at(parseXml(xml), 'PmtRtr')
  assert.equal(textAt(message, 'GrpHdr/NbOfTxs'), '1')
  assert.equal(textAt(message, 'GrpHdr/CtrlSum'), rands(cents))
  assert.equal(textAt(message, 'TxInf/OrgnlGrpInf/OrgnlMsgId'), messageId)
  assert.equal(textAt(message, 'TxInf/OrgnlGrpInf/OrgnlMsgNmId'), 'pacs.008.001.09')
  assert.equal(textAt(message, 'TxInf/OrgnlEndToEndId'), endToEndId)
  assert.equal(textAt(message, 'TxInf/RtrdIntrBkSttlmAmt'), rands(cents))
  assert.equal(at(message, 'TxInf/RtrdIntrBkSttlmAmt').attributes.Ccy, 'ZAR')
  assert.equal(textAt(message, 'TxInf/RtrRsnInf/Rsn/Cd'), 'AC01')
}

// ---------------------------------------------------------------------------------------------
// Credits.

const thandi = { name: 'Thandi Nkosi', account_number: '62000000019', branch_code: '632005' }

async function creditsTheAccount(): Promise<void> {
  const to = await account()
  const settlementBefore = await internal('settlement:EFT')
  const reply = await tb.operator.sandbox.incoming({ account_number: to.number,
    amount: 12_345, payer_name: thandi.name, payer_account_number: thandi.account_number,
    payer_branch_code: thandi.branch_code, reference: 'Rent December' })
  assert.equal(reply.status, 'credited')
  assert.match(reply.tx_id ?? '', uuidPattern)
  assert.equal(reply.reason_code, null)
  assert.match(reply.message_id, /^CHI[0-9a-f]{32}$/)
  assert.match(reply.end_to_end_id, /^CHE[0-9a-f]{32}$/)
  const txId = reply.tx_id!

  assert.deepEqual(await balances(p, to.id), { balance: '12345', available: '12345' })
  const rows = await transactionsOf(p, to.id)
  assert.equal(rows.length, 1, 'one statement row')
  const row = rows[0]!
  assert.deepEqual({ tx_id: row.tx_id, tx_type: row.tx_type, tx_payment_type: row.tx_payment_type,
    status: row.status, credit: row.credit, debit: row.debit, amount: row.amount, fee: row.fee,
    recipient_name: row.recipient_name, ref: row.ref, running_balance: row.running_balance }, {
    tx_id: txId, tx_type: 'incoming', tx_payment_type: 'EFT', status: 'Successful',
    credit: '12345', debit: '0', amount: '12345', fee: '0', recipient_name: thandi.name,
    ref: 'Rent December', running_balance: '12345' })
  assert.deepEqual(await txById(p, txId), row, 'the transaction reads as the statement row')
  assert.equal(await internal('settlement:EFT'), settlementBefore - 12_345n,
    'the money came from the clearing house\'s EFT settlement account')
  await assertAnnounced(txId, to.id)
  await assertDetails(txId, to.id, reply)
  await assertArchived(reply.message_id)
  await assertLedgerClean(tb)
}

async function assertAnnounced(txId: string, accountId: string): Promise<void> {
  const events = await receivedEvents(txId)
  assert.equal(events.length, 1, 'one payment.received event')
  assert.equal(events[0]!.partner_id, p.partnerId, 'for the account\'s partner')
  const data = events[0]!.data as Record<string, unknown>
  assert.equal(Date.parse(String(data.received_at)), tb.clock.now().getTime())
  assert.deepEqual({ ...data, received_at: undefined }, { tx_id: txId, account_id: accountId,
    amount: '12345', payment_type: 'EFT', payer_name: thandi.name, reference: 'Rent December',
    received_at: undefined })
}

async function assertDetails(txId: string, accountId: string,
    reply: { message_id: string; end_to_end_id: string }): Promise<void> {
  const details = await p.client.incoming.details({ tx_id: txId })
  assert.equal(Date.parse(details.received_at), tb.clock.now().getTime())
  assert.deepEqual({ ...details, received_at: undefined }, { tx_id: txId, account_id: accountId,
    amount: '12345', payment_type: 'EFT', payer: thandi, reference: 'Rent December',
    end_to_end_id: reply.end_to_end_id, message_id: reply.message_id,
    settlement_date: today, received_at: undefined })
}

/** The pacs.008 the simulator delivered was applied and archived; it is valid. */
async function assertArchived(messageId: string): Promise<void> {
  const name = `pacs.008.${messageId}.xml`
  assert.deepEqual(await folder().list(folder().inbound), [])
  assert.ok(await folder().exists(folder().archive, name))
  const xml = await fs.readFile(path.join(folder().archive, name), 'utf8')
  assert.deepEqual(await validateAgainstXsd(xml, 'pacs.008.001.09.xsd'), [])
}

async function creditsAnRtc(): Promise<void> {
  const to = await account()
  const settlementBefore = await internal('settlement:RTC')
  const reply = await tb.operator.sandbox.incoming({ account_number: to.number, amount: 700,
    payment_type: 'RTC' })
  assert.equal(reply.status, 'credited')
  const txId = reply.tx_id!
  const row = await txById(p, txId)
  assert.deepEqual([row.tx_type, row.tx_payment_type, row.status, row.credit,
    row.recipient_name, row.ref], ['incoming', 'RTC', 'Successful', '700', sandbox_payer.name,
    ''])
  assert.deepEqual(await balances(p, to.id), { balance: '700', available: '700' })
  assert.equal(await internal('settlement:RTC'), settlementBefore - 700n)
  const details = await p.client.incoming.details({ tx_id: txId })
  assert.equal(details.payment_type, 'RTC')
  assert.deepEqual(details.payer, sandbox_payer)
  assert.equal(details.reference, null)
  const events = await receivedEvents(txId)
  assert.equal(events.length, 1)
  assert.equal((events[0]!.data as { payment_type: string }).payment_type, 'RTC')
  assert.equal((events[0]!.data as { reference: unknown }).reference, null)
  await assertLedgerClean(tb)
}

async function payerWithoutName(): Promise<void> {
  const to = await account()
  const reply = await tb.operator.sandbox.incoming({ account_number: to.number, amount: 900,
    payer_account_number: '7777777777', payer_branch_code: '051001' })
  assert.equal(reply.status, 'credited')
  const details = await p.client.incoming.details({ tx_id: reply.tx_id! })
  assert.deepEqual(details.payer, { name: sandbox_payer.name, account_number: '7777777777',
    branch_code: '051001' }, 'the payer account number and branch code asked for')
}

async function timestampsOnTheWire(): Promise<void> {
  const to = await account()
  const reply = await tb.operator.sandbox.incoming({ account_number: to.number, amount: 100 })
  const details = await p.client.incoming.details({ tx_id: reply.tx_id! })
  const events = await receivedEvents(reply.tx_id!)
  assert.deepEqual({
    details: details.received_at,
    event: (events[0]!.data as { received_at: string }).received_at,
  }, { details: iso(tb.clock.now()), event: iso(tb.clock.now()) })
}

async function creditedByAClearingRun(): Promise<void> {
  const to = await account()
  const paid = credit(to.number, { amount: 2_500n })
  const unknown = credit('1234568', { amount: 600n })
  await deliver(paid.message_id, await incomingPacs008Text(paid))
  await deliver(unknown.message_id, await incomingPacs008Text(unknown))
  tb.clock.advance(60_000)
  await tb.operator.clearing.run()
  assert.deepEqual(await folder().list(folder().inbound), [])
  assert.deepEqual(await balances(p, to.id), { balance: '2500', available: '2500' })
  const rows = await transactionsOf(p, to.id)
  assert.deepEqual(rows.map((r) => [r.tx_type, r.recipient_name, r.ref]),
    [['incoming', 'Crafted Payer', 'Crafted ref']])
  const details = await p.client.incoming.details({ tx_id: rows[0]!.tx_id })
  assert.deepEqual([details.end_to_end_id, details.message_id, details.payer],
    [paid.end_to_end_id, paid.message_id, paid.payer])
  // The run's clearing house took the return of the other one out of outbound/.
  assert.deepEqual((await folder().list(folder().outbound)).filter((n) =>
    n.startsWith('pacs.004.')), [])
  await assertReturnsAc01(await returnFileOf(unknown.message_id), unknown.message_id,
    unknown.end_to_end_id, 600)
  await assertLedgerClean(tb)
}

// ---------------------------------------------------------------------------------------------
// incoming_details.

async function detailsOfOthers(): Promise<void> {
  const to = await account()
  const reply = await tb.operator.sandbox.incoming({ account_number: to.number, amount: 2_000 })
  const txId = reply.tx_id!
  await expectRefusal(other.client.incoming.details({ tx_id: txId }), 404)

  const payer = await newAccount(p)
  const depositTx = await fund(tb, payer, 50_000)
  const paid = await p.client.accounts.transferInternal(internalBody(payer, to.number))
  assert.equal(paid.status, 'Successful')
  await expectRefusal(p.client.incoming.details({ tx_id: paid.tx_id }), 404)
  await expectRefusal(p.client.incoming.details({ tx_id: depositTx }), 404)
  await expectRefusal(p.client.incoming.details({ tx_id: randomUUID() }), 404)
  for (const bad of ['not-a-uuid', '', `${txId}x`, txId.toUpperCase().replaceAll('-', '')]) {
    await expectRefusal(p.client.incoming.details({ tx_id: bad }), 400, 'tx_id')
  }
  await expectRefusal(p.client.incoming.details(
    { tx_id: txId, extra: 1 } as unknown as { tx_id: string }), 400)
  // The owner still sees it.
  assert.equal((await p.client.incoming.details({ tx_id: txId })).tx_id, txId)
}

// ---------------------------------------------------------------------------------------------
// Returns and repeats.

async function unknownAccountReturned(): Promise<void> {
  const unknown = '1234567'
  assert.equal(await db().selectFrom('accounts').select('id')
    .where('account_number', '=', unknown).executeTakeFirst(), undefined)
  const before = await bankState()
  const reply = await tb.operator.sandbox.incoming({ account_number: unknown, amount: 4_321,
    reference: 'Nobody here' })
  assert.deepEqual({ status: reply.status, tx_id: reply.tx_id, reason_code: reply.reason_code },
    { status: 'returned', tx_id: null, reason_code: 'AC01' })

  const after = await bankState()
  assert.equal(after.transactions, before.transactions, 'no transaction')
  assert.equal(after.postings, before.postings, 'no posting')
  assert.deepEqual(after.internal, before.internal)
  assert.equal(after.received_events, before.received_events, 'no payment.received')
  const record = await db().selectFrom('incoming_payments').selectAll()
    .where('end_to_end_id', '=', reply.end_to_end_id).execute()
  assert.deepEqual(record.map((r) => [r.status, r.return_reason_code, r.tx_id, r.account_id,
    r.partner_id, String(r.amount)]), [['returned', 'AC01', null, null, null, '4321']])
  await assertReturnsAc01(await returnFileOf(reply.message_id), reply.message_id,
    reply.end_to_end_id, 4_321)
  await assertLedgerClean(tb)
}

async function deliveredTwice(): Promise<void> {
  const to = await account()
  const reply = await tb.operator.sandbox.incoming({ account_number: to.number, amount: 3_000 })
  assert.equal(reply.status, 'credited')
  const name = `pacs.008.${reply.message_id}.xml`
  const before = await bankState()

  await fs.copyFile(path.join(folder().archive, name), path.join(folder().inbound, name))
  assert.deepEqual(await rail().readInbound(name), { kind: 'applied', name })
  const summary = await rail().applyInbound()
  assert.deepEqual([summary.credited, summary.files_refused], [0, 0])
  assert.deepEqual(await folder().list(folder().inbound), [])
  assert.ok(await folder().exists(folder().archive, name))
  assert.equal(await folder().exists(folder().refused, name), false)
  assert.deepEqual(await bankState(), before)
  assert.deepEqual(await balances(p, to.id), { balance: '3000', available: '3000' })
  assert.equal((await transactionsOf(p, to.id)).length, 1)
  assert.equal((await receivedEvents(reply.tx_id!)).length, 1)
  await assertLedgerClean(tb)
}

async function endToEndIdReused(): Promise<void> {
  const to = await account()
  const first = credit(to.number, { amount: 1_111n })
  const summary = await applyFiles([[first.message_id, await incomingPacs008Text(first)]])
  assert.deepEqual([summary.credited, summary.files_applied], [1, 1])
  assert.deepEqual(await balances(p, to.id), { balance: '1111', available: '1111' })
  const before = await bankState()

  // A new message id, another amount and reference: the same payment of the same bank.
  const again = { ...credit(to.number, { amount: 2_222n, reference: 'again' }),
    end_to_end_id: first.end_to_end_id }
  const repeat = await applyFiles([[again.message_id, await incomingPacs008Text(again)]])
  assert.deepEqual([repeat.credited, repeat.files_refused], [0, 0])
  const after = await bankState()
  assert.deepEqual({ ...after, inbound_messages: undefined },
    { ...before, inbound_messages: undefined }, 'nothing credited, nothing recorded')
  assert.deepEqual(await balances(p, to.id), { balance: '1111', available: '1111' })

  // Another bank (branch) may use the same end-to-end id for a payment of its own.
  const otherBank = { ...credit(to.number, { amount: 3_333n }),
    end_to_end_id: first.end_to_end_id,
    payer: { name: 'Other Bank Payer', account_number: '123456789', branch_code: '198765' } }
  const third = await applyFiles([[otherBank.message_id, await incomingPacs008Text(otherBank)]])
  assert.equal(third.credited, 1)
  assert.deepEqual(await balances(p, to.id), { balance: '4444', available: '4444' })
  await assertLedgerClean(tb)
}

async function onePaymentTwiceInAMessage(): Promise<void> {
  const to = await account()
  const one = credit(to.number, { amount: 1_500n })
  const text = (await incomingPacs008Text(one))
    .replace(/( *<CdtTrfTxInf>[\s\S]*<\/CdtTrfTxInf>\n)/, '$1$1')
    .replace('<NbOfTxs>1</NbOfTxs>', '<NbOfTxs>2</NbOfTxs>')
    .replace(`<CtrlSum>${rands(1_500)}</CtrlSum>`, `<CtrlSum>${rands(3_000)}</CtrlSum>`)
  assert.equal(text.split('<CdtTrfTxInf>').length, 3, 'the message carries two transactions')
  const summary = await applyFiles([[one.message_id, text]])
  assert.deepEqual([summary.files_refused, summary.files_applied, summary.credited], [0, 1, 1])
  assert.deepEqual(await balances(p, to.id), { balance: '1500', available: '1500' })
  assert.equal((await transactionsOf(p, to.id)).length, 1)
  await assertLedgerClean(tb)
}


// ---------------------------------------------------------------------------------------------
// Hostile files (src/rails/iso20022/pacs008-read.ts): each refused whole, changing nothing.

interface Hostile {
  name: string
  content: string
  reason: RegExp
}

/** A DOCTYPE whose entities expand to 10^9 "lol"s, put before the message's root. */
function withBillionLaughs(xml: string): string {
  const entities = ['  <!ENTITY lol0 "lol">']
  for (let i = 1; i <= 9; i++) {
    entities.push(`  <!ENTITY lol${i} "${`&lol${i - 1};`.repeat(10)}">`)
  }
  const doctype = `<!DOCTYPE Document [\n${entities.join('\n')}\n]>\n`
  return xml.replace('?>\n', `?>\n${doctype}`).replace(/<Nm>[^<]*</, '<Nm>&lol9;<')
}

/** A message of two payments to the account: the second's amount is `second`'s text. */
async function twoPayments(accountNumber: string, secondAmount: string): Promise<string> {
  const message = credit(accountNumber, { amount: 1_000n })
  const text = await incomingPacs008Text(message)
  const block = /( *<CdtTrfTxInf>[\s\S]*<\/CdtTrfTxInf>\n)/.exec(text)![1]!
  const second = block.replace(message.end_to_end_id, `${message.end_to_end_id.slice(0, 34)}Z`)
    .replace(message.end_to_end_id, `${message.end_to_end_id.slice(0, 34)}Z`)
    .replace('<IntrBkSttlmAmt Ccy="ZAR">10.00<', `<IntrBkSttlmAmt ${secondAmount}<`)
  return text.replace(block, block + second).replace('<NbOfTxs>1<', '<NbOfTxs>2<')
    .replace('<CtrlSum>10.00<', '<CtrlSum>20.00<')
}

/** Files the bank must refuse whole, each a payment of 50.00 to the account but for its flaw. */
async function hostileFiles(accountNumber: string): Promise<Hostile[]> {
  const genuine = async (flaw: string) => {
    const message = credit(accountNumber, { message_id: `CHX${flaw}${randomUUID().slice(0, 8)}` })
    return { name: `pacs.008.${message.message_id}.xml`,
      text: await incomingPacs008Text(message) }
  }
  const amount = '<IntrBkSttlmAmt Ccy="ZAR">50.00<'
  const files: Array<[string, (text: string) => string | Promise<string>, RegExp]> = [
    ['USD', (t) => t.replace(amount, '<IntrBkSttlmAmt Ccy="USD">50.00<'),
      /the currency "USD" is not ZAR/],
    ['NOCCY', (t) => t.replace(amount, '<IntrBkSttlmAmt>50.00<'), /no currency/],
    ['DEC3', (t) => t.replace(amount, '<IntrBkSttlmAmt Ccy="ZAR">50.005<'),
      /"50\.005" is not a whole number of cents/],
    ['NEG', (t) => t.replace(amount, '<IntrBkSttlmAmt Ccy="ZAR">-50.00<'), /negative amount/],
    ['NBOFTXS', (t) => t.replace('<NbOfTxs>1<', '<NbOfTxs>2<'),
      /the number of transactions says 2, the message holds 1/],
    ['CTRLSUM', (t) => t.replace('<CtrlSum>50.00<', '<CtrlSum>50.01<'),
      /the control sum \(cents\) says 5001, the message holds 5000/],
    ['DTD', (t) => t.replace('?>\n', '?>\n<!DOCTYPE Document SYSTEM "http://127.0.0.1/x.dtd">\n'),
      /DOCTYPE is not allowed/],
    ['LAUGHS', withBillionLaughs, /DOCTYPE is not allowed/],
    ['LCLINSTRM', (t) => t.replace('<Prtry>EFT</Prtry>', '<Prtry>CARD</Prtry>'),
      /local instrument .* is "CARD", not EFT or RTC/],
    ['TRUNC', (t) => t.slice(0, t.length - 60), /not well-formed XML/],
    ['SECONDUSD', () => twoPayments(accountNumber, 'Ccy="USD">10.00'),
      /the currency "USD" is not ZAR/],
  ]
  const hostile: Hostile[] = []
  for (const [flaw, spoil, reason] of files) {
    const file = await genuine(flaw)
    const content = await spoil(file.text)
    assert.notEqual(content, file.text, `${flaw}: the file was spoilt`)
    hostile.push({ name: file.name, content, reason })
  }
  return hostile
}

async function hostileRefusedWhole(): Promise<void> {
  const to = await account()
  const files = await hostileFiles(to.number)
  for (const file of files) await fs.writeFile(path.join(folder().inbound, file.name),
    file.content)
  const before = await bankState()
  const summary = await rail().applyInbound()
  assert.deepEqual([summary.credited, summary.files_applied, summary.files_refused],
    [0, 0, files.length])
  const after = await bankState()
  assert.deepEqual({ ...after, inbound_files: [] }, { ...before, inbound_files: [] },
    'nothing of any refused file was applied or recorded as applied')
  assert.deepEqual(after.inbound_files, [], 'nothing left waiting')
  assert.deepEqual(await balances(p, to.id), { balance: '0', available: '0' })
  for (const file of files) {
    const refusals = await db().selectFrom('rail_refusals').select('reason')
      .where('file_name', '=', file.name).execute()
    assert.equal(refusals.length, 1, `${file.name}: one refusal recorded`)
    assert.match(refusals[0]!.reason, file.reason, file.name)
    const kept = await fs.readFile(path.join(folder().refused, file.name), 'utf8')
    assert.equal(kept, file.content, `${file.name}: kept as it came, in archive/refused/`)
    assert.equal(await folder().exists(folder().archive, file.name), false)
  }
  await assertLedgerClean(tb)
}

async function messageIdReusedWithOtherBytes(): Promise<void> {
  const to = await account()
  const first = credit(to.number, { amount: 800n })
  await applyFiles([[first.message_id, await incomingPacs008Text(first)]])
  assert.deepEqual(await balances(p, to.id), { balance: '800', available: '800' })
  const before = await bankState()
  // The same message id, another payment (a new end-to-end id, another amount).
  const forged = { ...credit(to.number, { amount: 80_000n }), message_id: first.message_id }
  const name = await deliver(forged.message_id, await incomingPacs008Text(forged))
  const summary = await rail().applyInbound()
  assert.deepEqual([summary.credited, summary.files_refused], [0, 1])
  assert.deepEqual(await bankState(), before)
  assert.deepEqual(await balances(p, to.id), { balance: '800', available: '800' })
  const refusal = await db().selectFrom('rail_refusals').select('reason')
    .where('file_name', '=', name).executeTakeFirstOrThrow()
  assert.match(refusal.reason, /was applied already from another file/)
  assert.ok(await folder().exists(folder().refused, name))
}

async function zeroAmountRefused(): Promise<void> {
  const to = await account()
  const message = credit(to.number, { amount: 1n })
  const text = (await incomingPacs008Text(message))
    .replace('<IntrBkSttlmAmt Ccy="ZAR">0.01<', '<IntrBkSttlmAmt Ccy="ZAR">0.00<')
    .replace('<CtrlSum>0.01<', '<CtrlSum>0.00<')
  assert.match(text, /<IntrBkSttlmAmt Ccy="ZAR">0\.00</)
  const name = await deliver(message.message_id, text)
  const before = await bankState()
  try {
    const applied = await rail().applyInbound().then(
      (summary) => ({ summary, error: undefined }),
      (error: unknown) => ({ summary: undefined, error }))
    assert.equal(applied.error, undefined,
      `applying inbound files failed: ${String(applied.error)}`)
    assert.deepEqual([applied.summary!.credited, applied.summary!.files_refused], [0, 1])
    assert.equal(await folder().exists(folder().refused, name), true, 'refused whole')
    assert.deepEqual({ ...(await bankState()), inbound_files: [] },
      { ...before, inbound_files: [] })
    assert.deepEqual(await balances(p, to.id), { balance: '0', available: '0' })
  } finally {
    // Not left in inbound/ to stop every later pass of this file's bank.
    await fs.rm(path.join(folder().inbound, name), { force: true })
  }
}

async function otherBanksCreditNotBooked(): Promise<void> {
  const to = await account()
  const elsewhere = credit(to.number, { amount: 2_000n,
    payee: { account_number: to.number, branch_code: '198765' } })
  assert.notEqual(tb.config.rail.branchCode, '198765')
  const before = await bankState()
  const summary = await applyFiles([[elsewhere.message_id,
    await incomingPacs008Text(elsewhere)]])
  assert.equal(summary.credited, 0, 'a credit to another bank\'s branch is not this bank\'s')
  assert.deepEqual(await balances(p, to.id), { balance: '0', available: '0' })
  assert.equal((await bankState()).transactions, before.transactions)
}

describe('incoming payments in the sandbox', () => {
  tb = useTestBank()
  before(async () => {
    await tb.ready
    p = await onboardPartner(tb, { approve: true })
    other = await onboardPartner(tb, { approve: true })
  })

  test('incoming - ops.sandbox.incoming credits the account: balance and available rise by the amount, an `incoming` EFT row with the payer\'s name and reference, a payment.received event for the partner, the payer behind incoming_details, the ledger clean', creditsTheAccount)
  test('incoming - an RTC is booked as RTC; without a payer or reference the sandbox\'s payer is named and the reference is empty', creditsAnRtc)
  test('incoming - a payer account number and branch code given without a payer name are the payer\'s in incoming_details', payerWithoutName)
  test('incoming - incoming_details.received_at and the payment.received event\'s received_at follow the wire convention (whole seconds without a fraction)', timestampsOnTheWire)
  test('incoming - a clearing run applies an incoming pacs.008 waiting in inbound/, and its clearing house takes the pacs.004 returning an unknown account', creditedByAClearingRun)
  test('incoming - incoming_details: another partner gets 404, a transfer\'s, a deposit\'s or an unknown tx_id 404, a malformed tx_id 400', detailsOfOthers)
  test('incoming - an unknown account number is returned (AC01): no transaction anywhere, and a pacs.004 valid against the XSD naming the payment goes into outbound/', unknownAccountReturned)
  test('incoming - the same pacs.008 delivered twice credits once: the second delivery is known as applied and archived again', deliveredTwice)
  test('incoming - another message re-using a payer branch and end-to-end id credits nothing; the same end-to-end id of another paying branch is another payment', endToEndIdReused)
  test('incoming - a message carrying one payment twice (same payer branch and end-to-end id) credits it once', onePaymentTwiceInAMessage)
  test('incoming - hostile pacs.008 files (another currency, no currency, 3 decimals, a negative amount, NbOfTxs or CtrlSum not matching, a DTD, entity expansion, another local instrument, truncated, one bad payment of two) are refused whole, kept in archive/refused/, and change nothing', hostileRefusedWhole)
  test('incoming - a file re-using an applied message id with other bytes is refused and credits nothing', messageIdReusedWithOtherBytes)
  test('incoming - a pacs.008 of a zero amount is refused whole (not a failed pass that leaves it in inbound/)', zeroAmountRefused)
  test('incoming - a credit whose creditor agent (CdtrAgt) is another bank\'s branch does not credit the bank\'s account of the same number', otherBanksCreditNotBooked)
  test('incoming - ops.sandbox.incoming refuses bad input with 400 naming the field (amount 0, negative, a float or a string; an account number with letters or too short; a bad payer branch code or payment type; an empty payer name; unknown keys), and nothing changes', badInputRefused)
  test('incoming - ops.sandbox.incoming refuses with 400 a payer name or reference the message cannot carry (a control character, a carriage return), and nothing changes', unsendableTextRefused)
})

// ---------------------------------------------------------------------------------------------
// Bad input to ops.sandbox.incoming.

type SandboxIncoming = Parameters<TestBank['operator']['sandbox']['incoming']>[0]

async function badInputRefused(): Promise<void> {
  const to = await account()
  const good = { account_number: to.number, amount: 1_000 }
  const bad: Array<[Record<string, unknown>, string | undefined]> = [
    [{ ...good, amount: 0 }, 'amount'],
    [{ ...good, amount: -100 }, 'amount'],
    [{ ...good, amount: 10.5 }, 'amount'],
    [{ ...good, amount: '1000' }, 'amount'],
    [{ ...good, amount: 2 ** 53 }, 'amount'],
    [{ account_number: to.number }, 'amount'],
    [{ ...good, account_number: '12345abc' }, 'account_number'],
    [{ ...good, account_number: '12345' }, 'account_number'],
    [{ ...good, account_number: Number(to.number) }, 'account_number'],
    [{ ...good, payer_name: '' }, 'payer_name'],
    [{ ...good, payer_name: 'x'.repeat(141) }, 'payer_name'],
    [{ ...good, payer_account_number: '12ab56' }, 'payer_account_number'],
    [{ ...good, payer_branch_code: '12345' }, 'payer_branch_code'],
    [{ ...good, payment_type: 'CARD' }, 'payment_type'],
    [{ ...good, reference: 'r'.repeat(141) }, 'reference'],
    [{ ...good, tx_id: randomUUID() }, undefined],
    [{ ...good, currency: 'ZAR' }, undefined],
  ]
  const before = await bankState()
  for (const [body, field] of bad) {
    await expectRefusal(tb.operator.sandbox.incoming(body as unknown as SandboxIncoming), 400,
      field).catch((error: Error) => {
      throw new Error(`${JSON.stringify(body)}: ${error.message}`, { cause: error })
    })
  }
  assert.deepEqual(await bankState(), before, 'nothing written, applied or booked')
  assert.deepEqual(await balances(p, to.id), { balance: '0', available: '0' })
}

async function unsendableTextRefused(): Promise<void> {
  const to = await account()
  const before = await bankState()
  const bodies: Array<[SandboxIncoming, string]> = [
    [{ account_number: to.number, amount: 1_000, payer_name: 'Bell\u0007Payer' }, 'payer_name'],
    [{ account_number: to.number, amount: 1_000, reference: 'line\rbreak' }, 'reference'],
  ]
  for (const [body, field] of bodies) {
    await expectRefusal(tb.operator.sandbox.incoming(body), 400, field)
  }
  assert.deepEqual(await bankState(), before, 'nothing written, applied or booked')
  assert.deepEqual(await balances(p, to.id), { balance: '0', available: '0' })
}

// ---------------------------------------------------------------------------------------------
// Where ops.sandbox.incoming is refused: production, and a sandbox without the simulator.

/** The bank of a suite refuses ops.sandbox.incoming with 403 and credits nothing. */
async function assertRefusesIncoming(bank: TestBankHandle, message: RegExp): Promise<void> {
  const partner = await onboardPartner(bank, { approve: true })
  const accountId = await newAccount(partner)
  const number = await accountNumberOf(partner, accountId)
  const railFolder = bank.bank.services.isoRail.folder
  const inboundBefore = await fs.readdir(railFolder.inbound).catch(() => [])
  const refused = await expectRefusal(bank.operator.sandbox.incoming(
    { account_number: number, amount: 5_000 }), 403)
  assert.match(refused.message, message)
  assert.deepEqual(await balances(partner, accountId), { balance: '0', available: '0' })
  assert.equal(await countOf(bank, 'incoming_payments'), 0)
  assert.deepEqual(await fs.readdir(railFolder.inbound).catch(() => []), inboundBefore,
    'no pacs.008 was written')
  assert.deepEqual((await partner.client.accounts.listTransactions(
    { account_id: accountId })).transactions, [])
}

describe('incoming payments in production', () => {
  const prod = useTestBank({ env: { BANK_SANDBOX: 'false' } })
  before(async () => {
    await prod.ready
  })

  test('incoming - production refuses ops.sandbox.incoming with 403 (sandbox mode only) and credits nothing', async () => {
    assert.equal(prod.config.sandbox, false)
    await assertRefusesIncoming(prod, /sandbox mode only/)
  })
})

describe('incoming payments in a sandbox without the clearing-house simulator', () => {
  const quiet = useTestBank({ env: { BANK_RAIL_SIMULATOR: 'false' } })
  before(async () => {
    await quiet.ready
  })

  test('incoming - a sandbox with BANK_RAIL_SIMULATOR=false refuses ops.sandbox.incoming with 403 and credits nothing', async () => {
    assert.equal(quiet.config.rail.simulator, false)
    await assertRefusesIncoming(quiet, /simulator is off/)
  })
})
