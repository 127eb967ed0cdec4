import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs'
import {
  formatStatementAmount, renderStatementPdf, toStandardFontText,
} from '../../src/statements/statement-pdf.ts'
import type { AccountStatement, StatementLine } from '../../src/statements/statement-types.ts'

// The statement's PDF (issue 43), read back by text extraction with Mozilla's PDF.js: every
// word is checked as a reader of the PDF gets it, and the totals as the ledger gave them.

const standardFontDataUrl =
  join(dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')),
    'standard_fonts') + '/'

interface TextRow { y: number, items: Array<{ x: number, text: string }> }

/** Each page's text as rows: the items on one baseline, top to bottom, left to right. */
async function readPdfRows(pdf: Buffer, pagesToRead?: number[]): Promise<{ pages: TextRow[][],
  pageCount: number }> {
  const document = await getDocument({ data: new Uint8Array(pdf), standardFontDataUrl,
    verbosity: 0, isEvalSupported: false, useSystemFonts: false }).promise
  try {
    const pages: TextRow[][] = []
    const numbers = pagesToRead ?? Array.from({ length: document.numPages }, (_, i) => i + 1)
    for (const number of numbers) {
      const content = await (await document.getPage(number)).getTextContent()
      const rows = new Map<number, TextRow>()
      for (const item of content.items) {
        if (!('str' in item) || item.str.trim() === '') continue
        const y = Math.round(item.transform[5] as number)
        const row = rows.get(y) ?? { y, items: [] }
        row.items.push({ x: item.transform[4] as number, text: item.str.trim() })
        rows.set(y, row)
      }
      pages.push([...rows.values()].sort((a, b) => b.y - a.y)
        .map((row) => ({ y: row.y, items: row.items.sort((a, b) => a.x - b.x) })))
    }
    return { pages, pageCount: document.numPages }
  } finally {
    await document.destroy()
  }
}

/** Each page's rows as text, a row's items joined with ' | '. */
async function readPdf(pdf: Buffer, pagesToRead?: number[]): Promise<{ pages: string[][],
  pageCount: number }> {
  const { pages, pageCount } = await readPdfRows(pdf, pagesToRead)
  return { pageCount, pages: pages.map((rows) => rows.map((row) =>
    row.items.map((item) => item.text).join(' | '))) }
}

function sast(at: Date): string {
  return new Date(at.getTime() + 2 * 3600_000).toISOString().slice(0, 16).replace('T', ' ')
}

/** A statement whose totals follow from its lines, as the ledger would give them. */
function statementOf(lines: Array<Omit<StatementLine, 'running_balance'>>,
  overrides: Partial<AccountStatement> = {}): AccountStatement {
  const opening = overrides.opening_balance ?? 1_000_00n
  let balance = opening
  const withBalances = lines.map((line) => {
    balance += line.credit - line.debit
    return { ...line, running_balance: balance }
  })
  const credits = withBalances.filter((line) => line.credit > 0n)
  const debits = withBalances.filter((line) => line.debit > 0n)
  return {
    account_id: '0e1f2a3b-0000-4000-8000-000000000001',
    account_number: '100000017',
    branch_code: '999000',
    holder_name: 'Zoë Nkosi',
    from: '2026-03-01',
    to: '2026-03-31',
    opening_balance: opening,
    closing_balance: balance,
    credits: { count: credits.length, sum: credits.reduce((sum, line) => sum + line.credit, 0n) },
    debits: { count: debits.length, sum: debits.reduce((sum, line) => sum + line.debit, 0n) },
    fees: withBalances.filter((line) => line.tx_type === 'fee')
      .reduce((sum, line) => sum + line.debit, 0n),
    held_at_end: 150_000n,
    lines: withBalances,
    generated_at: new Date('2026-04-01T06:00:00Z'),
    ...overrides,
  }
}

function line(index: number, description: string, credit: bigint, debit: bigint,
  tx_type = 'transfer'): Omit<StatementLine, 'running_balance'> {
  return {
    tx_id: `00000000-0000-4000-8000-${index.toString().padStart(12, '0')}`,
    posted_at: new Date(Date.parse('2026-03-01T06:00:00Z') + index * 37 * 60_000),
    tx_type, payment_type: 'EFT', description, credit, debit,
  }
}

/** The row a statement line should read as: date, description, its amount, the balance. */
function expectedRow(statementLine: StatementLine, description = statementLine.description) {
  const amount = statementLine.credit > 0n ? statementLine.credit : statementLine.debit
  return [sast(statementLine.posted_at), description, formatStatementAmount(amount),
    formatStatementAmount(statementLine.running_balance)].join(' | ')
}

const isLineRow = (row: string): boolean => /^\d{4}-\d\d-\d\d \d\d:\d\d \| /.test(row)

function assertPdfFile(pdf: Buffer): void {
  assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-')
  assert.match(pdf.subarray(-16).toString('latin1'), /%%EOF\s*$/)
}

test('statements - amounts read as rand with spaces between thousands, from integer cents', () => {
  assert.equal(formatStatementAmount(0n), 'R 0.00')
  assert.equal(formatStatementAmount(5n), 'R 0.05')
  assert.equal(formatStatementAmount(99_999n), 'R 999.99')
  assert.equal(formatStatementAmount(100_000n), 'R 1 000.00')
  assert.equal(formatStatementAmount(123_456_789n), 'R 1 234 567.89')
  assert.equal(formatStatementAmount(-50n), '-R 0.50')
  assert.equal(formatStatementAmount(-123_456n), '-R 1 234.56')
  // Past Number.MAX_SAFE_INTEGER: no float is involved on the way.
  assert.equal(formatStatementAmount(9_007_199_254_740_993n), 'R 90 071 992 547 409.93')
})

test('statements - text the standard font cannot show is replaced, one ? a character', () => {
  assert.equal(toStandardFontText('Zoë Nkosi'), 'Zoë Nkosi')
  assert.equal(toStandardFontText('李雷'), '??')
  assert.equal(toStandardFontText('Zoe\u0308'), 'Zoë') // composed first
  assert.equal(toStandardFontText('Dvořák Łódź'), 'Dvorák ?ódz')
  assert.equal(toStandardFontText('€5 – “paid” …'), '€5 – “paid” …') // Windows-1252's extras
  assert.equal(toStandardFontText('pay 🙂 now'), 'pay ? now') // a surrogate pair is one
  assert.equal(toStandardFontText('a\tb\r\nc\u0085d'), 'a b  c d')
  assert.equal(toStandardFontText('مرحبا'), '?????')
  assert.equal(toStandardFontText('zero\u200bwidth\u3000wide\u00a0space'), 'zerowidth wide space')
})

test('statements - a short statement reads back with its header, summary and every line', async () => {
  const statement = statementOf([
    line(0, 'Salary ACME (Pty) Ltd', 2_500_000n, 0n),
    line(1, 'INV-1001 Supplier (Pty) Ltd', 0n, 150_000n),
    line(2, 'EFT fee', 0n, 250n, 'fee'),
    line(3, 'Refund card CAFÉ NOIR', 4_599n, 0n),
  ])
  const pdf = await renderStatementPdf(statement)
  assertPdfFile(pdf)
  const { pages, pageCount } = await readPdf(pdf)
  assert.equal(pageCount, 1)
  const rows = pages[0]!
  for (const expected of [
    'Account statement', 'Zoë Nkosi', 'Account number | 100000017', 'Branch code | 999000',
    'Period (SAST) | 2026-03-01 to 2026-03-31', 'Generated at | 2026-04-01 08:00 SAST',
    'Opening balance | R 1 000.00', 'Total credits (2) | R 25 045.99',
    'Total debits (2) | R 1 502.50', 'of which fees | R 2.50', 'Closing balance | R 24 543.49',
    'Held at end of period | R 1 500.00',
    'Date (SAST) | Description | Debit | Credit | Balance',
    '2026-03-01 | Opening balance | R 1 000.00', 'Page 1 of 1',
  ]) assert.ok(rows.includes(expected), `${expected} in ${JSON.stringify(rows)}`)
  assert.deepEqual(rows.filter(isLineRow), statement.lines.map((each) => expectedRow(each)))
  // The closing balance is the ledger's: opening + credits − debits, to the cent.
  assert.equal(statement.closing_balance, 2_454_349n)
})

test('statements - a credit and a debit stand in their own columns', async () => {
  const statement = statementOf([line(0, 'in', 1_000n, 0n), line(1, 'out', 0n, 1_000n)])
  const { pages } = await readPdfRows(await renderStatementPdf(statement))
  const amountX = (description: string): number => {
    const row = pages[0]!.find((each) => each.items[1]?.text === description)
    assert.ok(row, `the row of ${description}`)
    assert.equal(row.items[2]?.text, 'R 10.00')
    return row.items[2].x
  }
  assert.ok(amountX('in') > amountX('out') + 50, 'the credit stands right of the debit')
})

const odd = 'Ünïcödé ✓ 🙂 ő\u200bx\u3000"quoted" <b>&amp;</b> \\ back'

test('statements - 1,000 lines with other scripts run over pages with heads and numbers', async () => {
  const descriptions = ['Zoë Nkosi', '李雷 payment', odd, 'Tshepo Mokoena']
  // Every third line a credit of R 100.00 and its index in cents, the others debits of R 25.
  const statement = statementOf(Array.from({ length: 1_000 }, (_, index) => {
    const credit = index % 3 === 0 ? 10_000n + BigInt(index) : 0n
    return line(index, `${index} ${descriptions[index % 4]!}`, credit,
      credit === 0n ? 2_500n : 0n)
  }), { holder_name: '李雷 & Zoë Nkosi' })
  const pdf = await renderStatementPdf(statement)
  assertPdfFile(pdf)
  const { pages, pageCount } = await readPdf(pdf)
  assert.ok(pageCount > 1, `${pageCount} pages`)
  assert.ok(pages[0]!.includes('?? & Zoë Nkosi'), 'the holder')
  for (const [index, rows] of pages.entries()) {
    assert.ok(rows.includes(`Page ${index + 1} of ${pageCount}`), `page ${index + 1}'s number`)
    assert.ok(rows.includes('Date (SAST) | Description | Debit | Credit | Balance'),
      `page ${index + 1}'s column heads`)
    if (index > 0) {
      assert.ok(rows.includes('Account statement · 100000017 · 2026-03-01 to 2026-03-31 (SAST)'),
        `page ${index + 1}'s running header`)
    }
  }
  // Every line once, in order, with its description as the font shows it and its balance.
  assert.deepEqual(pages.flat().filter(isLineRow), statement.lines.map((each) =>
    expectedRow(each, toStandardFontText(each.description).replace(/\s+/g, ' '))))
  assert.equal(toStandardFontText(`1 ${descriptions[1]}`), '1 ?? payment')
  assert.equal(toStandardFontText(odd), 'Ünïcödé ? ? ox "quoted" <b>&amp;</b> \\ back')
  for (const expected of [`Total credits (334) | ${formatStatementAmount(statement.credits.sum)}`,
    `Total debits (666) | ${formatStatementAmount(statement.debits.sum)}`,
    `Closing balance | ${formatStatementAmount(statement.closing_balance)}`]) {
    assert.ok(pages[0]!.includes(expected), expected)
  }
})

test('statements - a long description wraps to a second line and is cut there', async () => {
  const long = 'Payment to Siyabonga Construction and Plumbing Services (Pty) Ltd for invoice ' +
    'INV-2026-000123 and INV-2026-000124, with retention held back as agreed in the contract'
  const statement = statementOf([line(0, long, 0n, 99_000n), line(1, 'next', 1n, 0n)])
  const { pages } = await readPdf(await renderStatementPdf(statement))
  const rows = pages[0]!
  const first = rows.findIndex((row) => row.startsWith(sast(statement.lines[0]!.posted_at)))
  const [date, start, debit, balance] = rows[first]!.split(' | ')
  assert.deepEqual([date, debit, balance], [sast(statement.lines[0]!.posted_at), 'R 990.00',
    formatStatementAmount(statement.lines[0]!.running_balance)])
  const continuation = rows[first + 1]!
  assert.match(continuation, /…$/)
  assert.ok(long.startsWith(`${start} ${continuation.slice(0, -1)}`), continuation)
  assert.equal(rows[first + 2], expectedRow(statement.lines[1]!))
})

test('statements - an empty period has its header, summary and one page', async () => {
  const statement = statementOf([], { held_at_end: 0n })
  const { pages, pageCount } = await readPdf(await renderStatementPdf(statement))
  assert.equal(pageCount, 1)
  for (const expected of ['Opening balance | R 1 000.00', 'Total credits (0) | R 0.00',
    'Closing balance | R 1 000.00', 'No transactions in this period.', 'Page 1 of 1']) {
    assert.ok(pages[0]!.includes(expected), expected)
  }
})

test('statements - a statement whose totals do not add up is refused, not printed', async () => {
  const statement = statementOf([line(0, 'in', 500n, 0n)])
  await assert.rejects(renderStatementPdf({ ...statement, closing_balance: 1_005_01n }),
    /opening \+ credits - debits is not the closing/)
  await assert.rejects(renderStatementPdf({ ...statement, credits: { count: 1, sum: 501n } }),
    /opening \+ credits - debits is not the closing/)
  const skewed = { ...statement.lines[0]!, running_balance: 1_000_01n }
  await assert.rejects(renderStatementPdf({ ...statement, lines: [skewed] }),
    /running balance does not follow/)
})

test('statements - 20,000 lines: pages are written as they are drawn', async (t) => {
  const statement = statementOf(Array.from({ length: 20_000 }, (_, index) =>
    line(index, `Card purchase ${index} SPAR Rosebank`, 0n, 1_00n)),
  { opening_balance: 100_000_00n })
  // The renderer yields between pages, so a sampler sees the heap while it draws.
  const heapBefore = process.memoryUsage().heapUsed
  let heapPeak = heapBefore
  const sampler = setInterval(() => {
    heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed)
  }, 10)
  const started = process.hrtime.bigint()
  const pdf = await renderStatementPdf(statement)
  const milliseconds = Number((process.hrtime.bigint() - started) / 1_000_000n)
  clearInterval(sampler)
  assertPdfFile(pdf)
  const last = await readPdf(pdf, [1])
  const { pageCount } = last
  const lastPage = (await readPdf(pdf, [pageCount])).pages[0]!
  assert.ok(last.pages[0]!.includes(`Page 1 of ${pageCount}`), 'the first page\'s number')
  assert.ok(lastPage.includes(`Page ${pageCount} of ${pageCount}`), 'the last page\'s number')
  assert.equal(lastPage.filter(isLineRow).at(-1), expectedRow(statement.lines.at(-1)!))
  // Measured, not asserted: the machine's speed varies.
  t.diagnostic(`20,000 lines: ${pageCount} pages, ${pdf.length} bytes, ${milliseconds} ms, ` +
    `heap at most ${Math.round((heapPeak - heapBefore) / 1e6)} MB above its start`)
})
