import PDFDocument from 'pdfkit'
import { toSast } from '../calendar/sa-calendar.ts'
import { assert } from '../errors.ts'
import type { AccountStatement, StatementLine } from './statement-types.ts'

// The PDF of an account statement (RULINGS, "Account lifecycle", Statements: formats PDF and
// camt.053; opening balance + credits − debits = closing balance, to the cent). Drawn with
// PDFKit (foliojs/pdfkit) in the PDF standard font Helvetica, so nothing is embedded and
// nothing depends on the fonts of the machine; the layout is in this folder's README.md.
//
// Memory: PDFKit writes a page out when the next one is added (bufferPages stays off), so a
// statement of 100,000 lines never holds more than one page of drawing. "Page N of M" needs
// M before page 1 is written: every row has a height known from the font's metrics alone
// (one or two lines of description), so the pages are planned first, then drawn once.

const page_width = 595.28 // A4 in points
const page_height = 841.89
const margin = 40
const content_right = page_width - margin
const font_regular = 'Helvetica'
const font_bold = 'Helvetica-Bold'
const table_font_size = 8
/** A row's text lines are this far apart; a row has this much space above and below. */
const table_line_height = 10
const table_row_padding = 2.5
/** A description wraps to at most this many lines; more is cut with an ellipsis. */
const description_lines_max = 2
/** Where the first page's table starts (below the header and the summary box). */
const first_table_top = 286
/** Where the later pages' table starts (below their one-line running header). */
const next_table_top = 66
const table_bottom = page_height - 56
const footer_top = page_height - 36
const column_head_height = 18

/** The table's columns: left edges and widths in points; amounts are right-aligned. */
const columns = {
  date: { x: margin, width: 70 },
  description: { x: margin + 74, width: 187.28 },
  debit: { x: margin + 265.28, width: 78 },
  credit: { x: margin + 347.28, width: 78 },
  balance: { x: margin + 429.28, width: 86 },
} as const

/** Cents as rand for a statement: `R 1 234.56`, `-R 0.50` below zero (integer arithmetic). */
export function formatStatementAmount(cents: bigint): string {
  const negative = cents < 0n
  const abs = negative ? -cents : cents
  const rands = (abs / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ' ')
  return `${negative ? '-' : ''}R ${rands}.${(abs % 100n).toString().padStart(2, '0')}`
}

/** An instant as SAST wall-clock time: `2026-03-01 14:05`. */
export function formatSastMinute(at: Date): string {
  const { date, minutes } = toSast(at)
  const hours = Math.floor(minutes / 60).toString().padStart(2, '0')
  return `${date} ${hours}:${(minutes % 60).toString().padStart(2, '0')}`
}

// The standard fonts show WinAnsiEncoding (Windows-1252): Latin-1 and these 27 characters of
// 0x80–0x9F. PDFKit writes any other character as a wrong code, so they are replaced first.
const windows_1252_extras = new Set([
  0x152, 0x153, 0x160, 0x161, 0x178, 0x17d, 0x17e, 0x192, 0x2c6, 0x2dc, 0x2013, 0x2014,
  0x2018, 0x2019, 0x201a, 0x201c, 0x201d, 0x201e, 0x2020, 0x2021, 0x2022, 0x2026, 0x2030,
  0x2039, 0x203a, 0x20ac, 0x2122,
])

function isControl(code: number): boolean {
  return code < 0x20 || (code >= 0x7f && code < 0xa0)
}

function standardFontCharacter(character: string): string {
  const code = character.codePointAt(0) ?? 0
  if (code >= 0x20 && code < 0x7f) return character
  if (isControl(code) || /[\p{Zs}\p{Zl}\p{Zp}]/u.test(character)) return ' '
  // Invisible format characters (zero-width space, joiners, direction marks) show nothing.
  if (/\p{Cf}/u.test(character)) return ''
  if (code <= 0xff || windows_1252_extras.has(code)) return character
  // A letter with a mark the font lacks keeps its letter ('ő' → 'o'); anything else, a
  // character of another script among them ('李'), shows as '?'.
  const base = character.normalize('NFD').charAt(0)
  const baseCode = base.codePointAt(0) ?? 0
  return base !== character && baseCode > 0x20 && baseCode < 0x7f ? base : '?'
}

/**
 * Text as the standard fonts can show it: composed (NFC), controls and other spaces as spaces,
 * invisible format characters dropped, the rest outside Windows-1252 replaced (one '?' for
 * each, never a crash).
 */
export function toStandardFontText(text: string): string {
  let shown = ''
  for (const character of text.normalize('NFC')) shown += standardFontCharacter(character)
  return shown
}

type Measure = (text: string) => number

/** The longest start of `text` (one character at least) whose width fits. */
function fittingLength(text: string, width: number, measure: Measure): number {
  let low = 1
  let high = text.length
  while (low < high) {
    const middle = Math.ceil((low + high) / 2)
    if (measure(text.slice(0, middle)) <= width) low = middle
    else high = middle - 1
  }
  return low
}

function cutWithEllipsis(text: string, width: number, measure: Measure): string {
  if (measure(text) <= width) return text
  return `${text.slice(0, fittingLength(text, width - measure('…'), measure)).trimEnd()}…`
}

/** Greedy word wrap into at most `linesMax` lines; the rest is cut with an ellipsis. */
export function wrapText(text: string, width: number, measure: Measure,
  linesMax: number): string[] {
  const lines: string[] = []
  let rest = text.replace(/\s+/g, ' ').trim()
  while (rest.length > 0) {
    if (lines.length === linesMax - 1 || measure(rest) <= width) {
      lines.push(cutWithEllipsis(rest, width, measure))
      break
    }
    const fits = fittingLength(rest, width, measure)
    const space = rest.lastIndexOf(' ', fits)
    const end = space > 0 ? space : fits
    lines.push(rest.slice(0, end).trimEnd())
    rest = rest.slice(end).trimStart()
  }
  return lines.length > 0 ? lines : ['']
}

/** Opening + credits − debits = closing, line by line and in total: else no statement. */
function assertBalances(statement: AccountStatement): void {
  const { opening_balance, closing_balance, credits, debits } = statement
  assert(opening_balance + credits.sum - debits.sum === closing_balance,
    `statement of ${statement.account_number}: opening + credits - debits is not the closing`)
  let balance = opening_balance
  for (const [index, line] of statement.lines.entries()) {
    balance += line.credit - line.debit
    assert(balance === line.running_balance,
      `statement line ${index} (${line.tx_id}): running balance does not follow`)
  }
  assert(balance === closing_balance,
    `statement of ${statement.account_number}: its lines do not end at the closing balance`)
}

type Document = PDFKit.PDFDocument

function descriptionLines(document: Document, line: StatementLine): string[] {
  document.font(font_regular).fontSize(table_font_size)
  const measure = (text: string): number => document.widthOfString(text)
  return wrapText(toStandardFontText(line.description), columns.description.width, measure,
    description_lines_max)
}

function rowHeight(lineCount: number): number {
  return lineCount * table_line_height + 2 * table_row_padding
}

/** The index of each page's first statement line, and one past the last line at the end. */
function planPages(document: Document, lines: StatementLine[]): number[] {
  const starts = [0]
  // The first page's table begins with the opening balance row.
  let y = first_table_top + column_head_height + rowHeight(1)
  for (const [index, line] of lines.entries()) {
    const height = rowHeight(descriptionLines(document, line).length)
    if (y + height > table_bottom) {
      starts.push(index)
      y = next_table_top + column_head_height
    }
    y += height
  }
  starts.push(lines.length)
  return starts
}

function text(document: Document, value: string, x: number, y: number, font = font_regular,
  size = table_font_size): void {
  document.font(font).fontSize(size).text(value, x, y, { lineBreak: false })
}

function textRight(document: Document, value: string, right: number, y: number,
  font = font_regular, size = table_font_size): void {
  document.font(font).fontSize(size)
  document.text(value, right - document.widthOfString(value), y, { lineBreak: false })
}

function rule(document: Document, y: number, width = 0.5): void {
  document.moveTo(margin, y).lineTo(content_right, y).lineWidth(width).stroke()
}

function drawHeader(document: Document, statement: AccountStatement): void {
  const width = content_right - margin
  text(document, 'Account statement', margin, margin, font_bold, 18)
  document.font(font_bold).fontSize(13)
  const holder = toStandardFontText(statement.holder_name)
  text(document, cutWithEllipsis(holder, width, (value) => document.widthOfString(value)),
    margin, 70, font_bold, 13)
  const details: Array<[string, string]> = [
    ['Account number', statement.account_number],
    ['Branch code', statement.branch_code],
    ['Period (SAST)', `${statement.from} to ${statement.to}`],
    ['Generated at', `${formatSastMinute(statement.generated_at)} SAST`],
  ]
  for (const [index, [label, value]] of details.entries()) {
    const y = 92 + index * 14
    text(document, label, margin, y, font_regular, 9.5)
    text(document, toStandardFontText(value), margin + 100, y, font_bold, 9.5)
  }
}

function drawSummary(document: Document, statement: AccountStatement): void {
  const { credits, debits } = statement
  const rows: Array<[string, bigint]> = [
    ['Opening balance', statement.opening_balance],
    [`Total credits (${credits.count})`, credits.sum],
    [`Total debits (${debits.count})`, debits.sum],
    ['    of which fees', statement.fees],
    ['Closing balance', statement.closing_balance],
    ['Held at end of period', statement.held_at_end],
  ]
  const top = 160
  document.rect(margin, top, 270, rows.length * 15 + 12).lineWidth(0.75).stroke()
  for (const [index, [label, cents]] of rows.entries()) {
    const y = top + 8 + index * 15
    const font = index === 4 ? font_bold : font_regular
    text(document, label, margin + 10, y, font, 9.5)
    textRight(document, formatStatementAmount(cents), margin + 260, y, font, 9.5)
  }
}

function drawRunningHeader(document: Document, statement: AccountStatement): void {
  text(document, `Account statement · ${statement.account_number} · ` +
    `${statement.from} to ${statement.to} (SAST)`, margin, margin, font_bold, 10)
}

/** The column heads at `top`; answers where the first row goes. */
function drawColumnHeads(document: Document, top: number): number {
  const y = top + 4
  text(document, 'Date (SAST)', columns.date.x, y, font_bold)
  text(document, 'Description', columns.description.x, y, font_bold)
  for (const [name, head] of [['debit', 'Debit'], ['credit', 'Credit'],
    ['balance', 'Balance']] as const) {
    textRight(document, head, columns[name].x + columns[name].width, y, font_bold)
  }
  rule(document, top + column_head_height - 3, 0.75)
  return top + column_head_height
}

function drawAmount(document: Document, cents: bigint, column: keyof typeof columns,
  y: number): void {
  const { x, width } = columns[column]
  textRight(document, formatStatementAmount(cents), x + width, y)
}

/** One statement line at `top`; answers where the next row goes. */
function drawLine(document: Document, line: StatementLine, top: number): number {
  const description = descriptionLines(document, line)
  const y = top + table_row_padding
  text(document, formatSastMinute(line.posted_at), columns.date.x, y)
  for (const [index, part] of description.entries()) {
    text(document, part, columns.description.x, y + index * table_line_height)
  }
  if (line.debit !== 0n) drawAmount(document, line.debit, 'debit', y)
  if (line.credit !== 0n) drawAmount(document, line.credit, 'credit', y)
  drawAmount(document, line.running_balance, 'balance', y)
  return top + rowHeight(description.length)
}

function drawOpeningRow(document: Document, statement: AccountStatement, top: number): number {
  const y = top + table_row_padding
  text(document, statement.from, columns.date.x, y)
  text(document, 'Opening balance', columns.description.x, y, font_bold)
  drawAmount(document, statement.opening_balance, 'balance', y)
  return top + rowHeight(1)
}

function drawFooter(document: Document, page: number, pages: number): void {
  rule(document, footer_top - 6)
  textRight(document, `Page ${page} of ${pages}`, content_right, footer_top)
}

async function drawPages(document: Document, statement: AccountStatement,
  starts: number[]): Promise<void> {
  const pages = starts.length - 1
  for (let page = 0; page < pages; page++) {
    document.addPage()
    let y: number
    if (page === 0) {
      drawHeader(document, statement)
      drawSummary(document, statement)
      y = drawOpeningRow(document, statement, drawColumnHeads(document, first_table_top))
    } else {
      drawRunningHeader(document, statement)
      y = drawColumnHeads(document, next_table_top)
    }
    for (let index = starts[page]!; index < starts[page + 1]!; index++) {
      y = drawLine(document, statement.lines[index]!, y)
    }
    if (statement.lines.length === 0) {
      text(document, 'No transactions in this period.', columns.description.x,
        y + table_row_padding)
    }
    drawFooter(document, page + 1, pages)
    // A long statement is drawn a page at a time between other work, not in one long block.
    await new Promise((resolve) => setImmediate(resolve))
  }
}

/** The statement as an A4 PDF (layout: src/statements/README.md). */
export async function renderStatementPdf(statement: AccountStatement): Promise<Buffer> {
  assertBalances(statement)
  const document = new PDFDocument({
    size: 'A4',
    margin: 0,
    autoFirstPage: false,
    info: {
      Title: `Statement of account ${statement.account_number}, ` +
        `${statement.from} to ${statement.to}`,
      CreationDate: statement.generated_at,
    },
  })
  const chunks: Buffer[] = []
  const written = new Promise<Buffer>((resolve, reject) => {
    document.on('data', (chunk: Buffer) => chunks.push(chunk))
    document.on('end', () => resolve(Buffer.concat(chunks)))
    document.on('error', reject)
  })
  await drawPages(document, statement, planPages(document, statement.lines))
  document.end()
  return written
}
