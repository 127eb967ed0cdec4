import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { all, at, parseXml, textAt } from '../support/xml-tree.ts'
import { assertLedgerClean, expectRefusal } from '../support/assertions.ts'
import {
  onboardPartner, rawRequest, useTestBank, type TestPartner,
} from '../support/harness.ts'
import { validateAgainstXsd } from '../support/xsd.ts'
import {
  accountNumberOf, fund, internalBody, magic, newAccount, sast, transferBody,
} from '../transfers/helpers.ts'
import { statement_inline_lines_max } from '../../src/statements/statements-contract.ts'

// Account statements (src/statements; RULINGS "Account lifecycle", Statements), driven through
// a real bank: a day of 1,002 posted transactions on one account (deposits, internal payments
// out with their fees and in, other banks' credits through the sandbox's clearing house, EFT
// payouts settled by a clearing run, and a failed payout whose hold was released), whose
// statement must equal the ledger to the cent, in the reply and in the background, as data,
// as camt.053.001.08 (valid against the official XSD) and as a PDF; bad requests and another
// partner's account or job refused and changing nothing; the monthly statements made on the
// first business day after the month.
//
// The job runner is stopped: the test runs due jobs itself (runDue), so that a background
// statement is made when the test says, never raced.

const tb = useTestBank({ env: { BANK_FEE_INTERNAL_CENTS: '150' } })

const day1 = '2026-11-23'
const day2 = '2026-11-24'
const eftFee = 250n
const internalFee = 150n

let p: TestPartner
let other: TestPartner
let a: string
let b: string
let otherAccount: string
/** What the test moved on `a` on day 2, in cents. */
const moved = { credits: 0n, creditsCount: 0, debits: 0n, debitsCount: 0, fees: 0n }
const openingA = 10_000_000n
const heldDay1 = 40_000n + eftFee

const db = () => tb.bank.database.db
const statements = () => tb.bank.services.statements

/** Runs `count` calls, `width` at a time. */
async function inParallel(count: number, width: number, call: (i: number) => Promise<unknown>) {
  for (let start = 0; start < count; start += width) {
    await Promise.all(Array.from({ length: Math.min(width, count - start) },
      (_, k) => call(start + k)))
  }
}

function credit(amount: bigint) { moved.credits += amount; moved.creditsCount++ }
function debit(amount: bigint, fee = 0n) {
  moved.debits += amount; moved.debitsCount++
  if (fee > 0n) { moved.debits += fee; moved.debitsCount++; moved.fees += fee }
}

async function dayTwoMoves(numberA: string, numberB: string) {
  await inParallel(400, 25, async (i) => {
    await fund(tb, a, 1_000 + i, `deposit ${i}`)
    credit(BigInt(1_000 + i))
  })
  await inParallel(150, 25, async (i) => {
    await p.client.accounts.transferInternal(internalBody(a, numberB, { amount: 2_000 + i }))
    debit(BigInt(2_000 + i), internalFee)
  })
  await inParallel(100, 25, async (i) => {
    await p.client.accounts.transferInternal(internalBody(b, numberA, { amount: 500 + i }))
    credit(BigInt(500 + i))
  })
  for (let i = 0; i < 100; i++) {
    const reply = await tb.operator.sandbox.incoming({ account_number: numberA, amount: 3_000 + i,
      payer_name: 'Thandi Payer', reference: `Invoice ${i}` })
    assert.equal(reply.status, 'credited')
    credit(BigInt(3_000 + i))
  }
  await inParallel(50, 25, async (i) => {
    await p.client.accounts.transfer(transferBody(a, { amount: 5_000 + i }))
    debit(BigInt(5_000 + i), eftFee)
  })
  await p.client.accounts.transfer(transferBody(a, { amount: 7_777,
    account_number: magic.failed }))
  await tb.operator.clearing.run()
  // The payout taken on day 1 settled in this run too.
  debit(40_000n, eftFee)
}

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  tb.clock.set(sast(day1, '10:00'))
  p = await onboardPartner(tb, { approve: true })
  other = await onboardPartner(tb, { approve: true })
  a = await newAccount(p)
  b = await newAccount(p)
  otherAccount = await newAccount(other)
  const [numberA, numberB] = [await accountNumberOf(p, a), await accountNumberOf(p, b)]
  await fund(tb, a, Number(openingA), 'opening')
  await fund(tb, b, 1_000_000, 'funding b')
  await fund(tb, otherAccount, 5_000, 'other partner')
  // Taken on day 1, still Pending at its end: held then, settled on day 2.
  await p.client.accounts.transfer(transferBody(a, { amount: 40_000 }))
  tb.clock.set(sast(day2, '09:00'))
  await dayTwoMoves(numberA, numberB)
})

test('statements - a day of 1,002 transactions equals the ledger to the cent', async () => {
  const details = await p.client.accounts.getDetails({ account_id: a })
  const s = await statements().buildStatement(a, day2, day2)
  assert.equal(s.lines.length, 1_002)
  assert.equal(s.opening_balance, openingA)
  assert.equal(s.closing_balance, BigInt(details.balance))
  assert.equal(s.credits.sum, moved.credits)
  assert.equal(s.credits.count, moved.creditsCount)
  assert.equal(s.debits.sum, moved.debits)
  assert.equal(s.debits.count, moved.debitsCount)
  assert.equal(s.fees, moved.fees)
  assert.equal(s.opening_balance + s.credits.sum - s.debits.sum, s.closing_balance)
  // Nothing is pending at the end of day 2: the failed payout's hold was released.
  assert.equal(s.held_at_end, 0n)
  assert.equal(BigInt(details.available_balance), BigInt(details.balance))
  let running = s.opening_balance
  for (const line of s.lines) {
    running += line.credit - line.debit
    assert.equal(line.running_balance, running)
  }
  assert.ok(s.lines.some((l) => l.tx_type === 'incoming' && l.description.includes('Thandi')))
  assert.equal(s.account_number, await accountNumberOf(p, a))
  assert.equal(s.branch_code, tb.config.rail.branchCode)
  assert.ok(s.holder_name.length > 0)
  await assertLedgerClean(tb)
})

test('statements - day 1 in the reply: its deposit, and the pending payout held at its end', async () => {
  const reply = await p.client.accounts.statement({ account_id: a, from: day1, to: day1,
    format: 'camt053' })
  assert.equal(reply.status, 'ready')
  assert.equal(reply.job_id, null)
  assert.deepEqual(reply.totals, {
    opening_balance: '0', closing_balance: String(openingA), credits_count: 1,
    credits_sum: String(openingA), debits_count: 0, debits_sum: '0', fees: '0',
    held_at_end: String(heldDay1), lines: 1,
  })
  const xml = Buffer.from(reply.content!, 'base64')
  assert.equal(reply.size, xml.length)
  assert.equal(reply.sha256, createHash('sha256').update(xml).digest('hex'))
  assert.equal(reply.content_type, 'application/xml')
  assert.match(reply.file_name, /^statement-\d+-2026-11-23-2026-11-23\.xml$/)
  assert.deepEqual(await validateAgainstXsd(xml, 'camt.053.001.08.xsd'), [])
  const pdf = await p.client.accounts.statement({ account_id: a, from: day1, to: day1,
    format: 'pdf' })
  assert.equal(pdf.content_type, 'application/pdf')
  assert.equal(Buffer.from(pdf.content!, 'base64').subarray(0, 5).toString(), '%PDF-')
  assert.deepEqual(pdf.totals, reply.totals)
  // A range with nothing posted: opening and closing are the balance before it.
  const quiet = await statements().buildStatement(a, '2026-11-01', '2026-11-22')
  assert.equal(quiet.lines.length, 0)
  assert.equal(quiet.opening_balance, 0n)
  assert.equal(quiet.closing_balance, 0n)
})

/** Runs the due jobs and fetches a stored statement whole, part by part. */
async function fetchWhole(partner: TestPartner, jobId: string) {
  const parts: Buffer[] = []
  let offset: number | null = 0
  let first
  while (offset !== null) {
    const part = await partner.client.accounts.statementGet({ job_id: jobId, offset })
    assert.equal(part.status, 'ready')
    first ??= part
    parts.push(Buffer.from(part.data, 'base64'))
    offset = part.next_offset
  }
  return { part: first!, bytes: Buffer.concat(parts) }
}

test('statements - a large range is made in the background, announced, and matches the ledger', async () => {
  const request = { account_id: a, from: day1, to: day2, format: 'camt053' as const }
  const queued = await p.client.accounts.statement(request)
  assert.equal(queued.status, 'queued')
  assert.ok(queued.job_id)
  assert.equal(queued.content, null)
  const waiting = await p.client.accounts.statementGet({ job_id: queued.job_id })
  assert.equal(waiting.status, 'queued')
  assert.equal(waiting.data, '')
  await tb.bank.services.jobRunner.runDue()
  const { part, bytes } = await fetchWhole(p, queued.job_id)
  assert.equal(part.size, bytes.length)
  assert.ok(bytes.length > 256 * 1024, 'fetched in more than one part')
  assert.equal(part.sha256, createHash('sha256').update(bytes).digest('hex'))
  assert.deepEqual(await validateAgainstXsd(bytes, 'camt.053.001.08.xsd'), [])
  const doc = parseXml(bytes.toString('utf8'))
  const stmt = at(doc, 'BkToCstmrStmt/Stmt')
  assert.equal(textAt(stmt, 'Acct/Id/Othr/Id'), await accountNumberOf(p, a))
  const balances = all(stmt, 'Bal')
  const amountOf = (code: string) => {
    const bal = balances.find((x) => textAt(x, 'Tp/CdOrPrtry/Cd') === code)!
    return (textAt(bal, 'CdtDbtInd') === 'DBIT' ? -1n : 1n) * centsOf(textAt(bal, 'Amt'))
  }
  const details = await p.client.accounts.getDetails({ account_id: a })
  assert.equal(amountOf('OPBD'), 0n)
  assert.equal(amountOf('CLBD'), BigInt(details.balance))
  const entries = all(stmt, 'Ntry')
  assert.equal(entries.length, 1_003)
  const sum = (code: string) => entries.filter((e) => textAt(e, 'CdtDbtInd') === code)
    .reduce((total, e) => total + centsOf(textAt(e, 'Amt')), 0n)
  assert.equal(sum('CRDT'), moved.credits + openingA)
  assert.equal(sum('DBIT'), moved.debits)
  assert.deepEqual(part.totals, {
    opening_balance: '0', closing_balance: details.balance, credits_count: moved.creditsCount + 1,
    credits_sum: String(moved.credits + openingA), debits_count: moved.debitsCount,
    debits_sum: String(moved.debits), fees: String(moved.fees), held_at_end: '0', lines: 1_003,
  })
  const [event] = await db().selectFrom('events').selectAll()
    .where('type', '=', 'account.statement_ready').where('resource_id', '=', queued.job_id)
    .execute()
  assert.ok(event, 'account.statement_ready raised')
  assert.equal(event.partner_id, p.partnerId)
  const data = event.data as Record<string, unknown>
  assert.deepEqual({ ...data, ready_at: undefined, sha256: undefined, file_name: undefined }, {
    job_id: queued.job_id, account_id: a, from: day1, to: day2, format: 'camt053',
    origin: 'request', size: bytes.length, ready_at: undefined, sha256: undefined,
    file_name: undefined,
  })
})

test('statements - a large range as a PDF is made in the background too', async () => {
  const queued = await p.client.accounts.statement({ account_id: a, from: day2, to: day2,
    format: 'pdf' })
  assert.equal(queued.status, 'queued')
  await tb.bank.services.jobRunner.runDue()
  const { part, bytes } = await fetchWhole(p, queued.job_id!)
  assert.equal(bytes.subarray(0, 5).toString(), '%PDF-')
  assert.equal(part.totals?.lines, 1_002)
  assert.equal(part.content_type, 'application/pdf')
  assert.ok(1_002 > statement_inline_lines_max)
})

/** Cents from an ISO amount (`123.45`), without floats. */
function centsOf(amount: string): bigint {
  const [rands, cents = ''] = amount.split('.')
  return BigInt(rands!) * 100n + BigInt(cents.padEnd(2, '0'))
}

const statementSubject = () => `svc.account.${p.partnerId}.statement`
const send = (subject: string, body: unknown) => rawRequest(tb, subject,
  typeof body === 'string' ? body : JSON.stringify(body), { token: p.token })

test('statements - bad requests are refused with the field named, and store nothing', async () => {
  const count = async () => (await db().selectFrom('account_statements').select('id').execute())
    .length
  const before = await count()
  const good = { account_id: a, from: day2, to: day2, format: 'camt053' }
  const cases: Array<[unknown, string | undefined]> = [
    [{ ...good, from: '2026-02-30' }, 'from'],
    [{ ...good, from: '2026/11/01' }, 'from'],
    [{ ...good, from: 20261101 }, 'from'],
    [{ ...good, from: `${day2}\u0000` }, 'from'],
    [{ ...good, to: 'x'.repeat(1_000) }, 'to'],
    [{ ...good, from: day2, to: day1 }, 'to'],
    [{ ...good, from: '2025-11-23', to: day2 }, 'to'],
    [{ ...good, to: '2026-12-31' }, 'to'],
    [{ ...good, format: 'csv' }, 'format'],
    [{ ...good, account_id: 'not-a-uuid' }, 'account_id'],
    [{ ...good, extra: 1 }, undefined],
    [{ from: day2, to: day2, format: 'pdf' }, 'account_id'],
    [{ ...good, format: undefined }, 'format'],
    ['{"account_id":', undefined],
  ]
  for (const [body, field] of cases) {
    const reply = await send(statementSubject(), body)
    assert.equal(reply.code, 400, `${JSON.stringify(body).slice(0, 80)}: ${reply.code}`)
    if (field) assert.ok(JSON.stringify(reply.body).includes(field), JSON.stringify(reply.body))
  }
  // 366 days, both included, is the longest range.
  const longest = await send(statementSubject(), { ...good, from: '2025-11-24', to: day2 })
  assert.equal(longest.code, 200)
  assert.equal(longest.body.status, 'queued')
  const getSubject = `svc.account.${p.partnerId}.statement_get`
  for (const body of [{ job_id: 'x' }, { job_id: longest.body.job_id, offset: -1 },
    { job_id: longest.body.job_id, offset: 1.5 }, {}]) {
    assert.equal((await send(getSubject, body)).code, 400, JSON.stringify(body))
  }
  assert.equal(await count(), before + 1)
})

test('statements - another partner\'s account or job is not found, and nothing is made', async () => {
  const before = await db().selectFrom('account_statements').select('id').execute()
  await expectRefusal(other.client.accounts.statement({ account_id: a, from: day2, to: day2,
    format: 'camt053' }), 404)
  await expectRefusal(p.client.accounts.statement({ account_id: otherAccount, from: day1,
    to: day2, format: 'pdf' }), 404)
  await expectRefusal(p.client.accounts.statement({ account_id: randomUUID(), from: day1,
    to: day2, format: 'pdf' }), 404)
  const [mine] = before
  assert.ok(mine)
  await expectRefusal(other.client.accounts.statementGet({ job_id: mine.id }), 404)
  await expectRefusal(p.client.accounts.statementGet({ job_id: randomUUID() }), 404)
  const after = await db().selectFrom('account_statements').select('id').execute()
  assert.equal(after.length, before.length)
})

test('statements - the month\'s statements are made on the first business day after it, once', async () => {
  await tb.bank.services.jobRunner.runDue()
  // Tuesday 1 December 2026 is a business day; its 06:00 SAST is when they are due.
  tb.clock.set(sast('2026-12-01', '05:59'))
  await tb.bank.services.jobRunner.runDue()
  const monthly = () => db().selectFrom('account_statements').selectAll()
    .where('origin', '=', 'monthly').execute()
  assert.equal((await monthly()).length, 0, 'not before 06:00')
  tb.clock.set(sast('2026-12-01', '06:00'))
  await tb.bank.services.jobRunner.runDue()
  const rows = await monthly()
  for (const account of [a, b, otherAccount]) {
    const own = rows.filter((r) => r.account_id === account)
    assert.deepEqual(own.map((r) => r.format).sort(), ['camt053', 'pdf'])
    for (const row of own) {
      assert.equal(row.state, 'ready')
      assert.equal(row.from_date, '2026-11-01')
      assert.equal(row.to_date, '2026-11-30')
    }
  }
  const camt = rows.find((r) => r.account_id === a && r.format === 'camt053')!
  const built = await statements().buildStatement(a, '2026-11-01', '2026-11-30')
  assert.equal((camt.totals as { closing_balance: string }).closing_balance,
    String(built.closing_balance))
  const { bytes } = await fetchWhole(p, camt.id)
  assert.deepEqual(await validateAgainstXsd(bytes, 'camt.053.001.08.xsd'), [])
  const events = await db().selectFrom('events').select(['resource_id', 'partner_id'])
    .where('type', '=', 'account.statement_ready').execute()
  for (const row of rows) {
    assert.ok(events.some((e) => e.resource_id === row.id && e.partner_id === row.partner_id))
  }
  await expectRefusal(other.client.accounts.statementGet({ job_id: camt.id }), 404)
  // Made once: running the month again adds nothing.
  const again = await statements().monthly.run('2026-11')
  assert.equal(again.statements, 0)
  assert.equal((await monthly()).length, rows.length)
})
