import { createHash, randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { addDays, fromSast, toSast, type SouthAfricanCalendar } from '../calendar/sa-calendar.ts'
import type { Clock } from '../clock.ts'
import { formatTimestamp } from '../contract/format.ts'
import { assert, Conflict, Invalid, NotFound, Unprocessable } from '../errors.ts'
import { appendEvent } from '../events/index.ts'
import type { JobRunner } from '../jobs/job-runner.ts'
import type { Database } from '../schema.ts'
import { statementCamt } from './statement-camt.ts'
import { statementOf, totalsOf } from './statement-build.ts'
import type { AccountStatement } from './statement-types.ts'
import {
  statement_chunk_bytes_max, statement_inline_bytes_max, statement_inline_lines_max,
  statement_queued_per_partner_max, type StatementPart, type StatementReply,
} from './statements-contract.ts'
import {
  heldAt, insertStatement, postedCount, postedRange, postedRows, queuedCount, runningBalanceAt,
  statementBytes, statementOf as storedStatement, storeStatement, type NewStatement,
  type PostedRange, type StatementRow,
} from './statements-store.ts'
import { MonthlyStatements } from './monthly-statements.ts'
import {
  generateJob, statement_generate_job_kind, statement_generate_job_limits,
} from './statement-jobs.ts'

// Account statements (RULINGS "Account lifecycle", Statements; statements-contract.ts): built
// from the ledger's posted rows (statements-store.ts, statement-build.ts) and rendered as a
// PDF (statement-pdf.ts) or camt.053.001.08 (statement-camt.ts).
//
// A range of at most `statement_inline_lines_max` lines is answered in the reply and stored
// nowhere. A larger one is a `statements.generate` job: the request adds the statement's row
// (queued) and its job in one transaction and answers at once with the row's id as the job
// id; the job builds and renders it, stores the file in the row and raises
// `account.statement_ready` in one transaction; the partner fetches it in parts with
// `statement_get`. The bank keeps the file in its own table rather than a JetStream Object
// Store bucket: the bank reaches partners' buckets only to read what they upload (KYC
// dropboxes), and on a NATS server without the bank as authority a bucket would be on the one
// account every partner shares. Monthly statements are made by monthly-statements.ts through
// the same job.

type Db = Kysely<Database>
export type StatementFormat = 'pdf' | 'camt053'
export type PdfRenderer = (statement: AccountStatement) => Promise<Buffer>

export interface StatementRequest {
  account_id: string
  from: string
  to: string
  format: StatementFormat
}

/** The account's details a statement names, whoever's it is. */
export interface StatementAccounts {
  accountOf(partnerId: string, accountId: string): Promise<{ id: string }>
  detailsOf(accountId: string): Promise<{ account_number: string; holder_name: string }>
}

const content_types: Record<StatementFormat, string> = {
  pdf: 'application/pdf', camt053: 'application/xml',
}

export function fileNameOf(accountNumber: string, from: string, to: string,
    format: StatementFormat): string {
  return `statement-${accountNumber}-${from}-${to}.${format === 'pdf' ? 'pdf' : 'xml'}`
}

export class StatementsService {
  readonly monthly: MonthlyStatements

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly jobs: JobRunner,
    private readonly accounts: StatementAccounts,
    calendar: SouthAfricanCalendar,
    private readonly options: { branchCode: string; renderPdf: PdfRenderer | undefined },
  ) {
    jobs.register({
      kind: statement_generate_job_kind,
      ...statement_generate_job_limits,
      run: async (job) => ({ ...(await this.generate(String(job.payload.statement_id))) }),
    })
    this.monthly = new MonthlyStatements(db, jobs, calendar, (row) => this.prepared(row))
  }

  /** `svc.account.<partner_id>.statement`: in the reply, or queued with a job id. */
  async statement(partnerId: string, request: StatementRequest): Promise<StatementReply> {
    await this.accounts.accountOf(partnerId, request.account_id)
    const range = await this.rangeOf(request)
    if (postedCount(range) > statement_inline_lines_max) return this.queue(partnerId, request)
    const statement = await this.build(request.account_id, request.from, request.to, range)
    const content = await this.render(statement, request.format)
    if (content.length > statement_inline_bytes_max) {
      return this.storeReady(partnerId, request, statement, content)
    }
    return this.inline(statement, request.format, content)
  }

  /** The ledger's posted rows of the request's days; a day after today is refused. */
  private rangeOf(request: StatementRequest): Promise<PostedRange> {
    const today = toSast(this.clock.now()).date
    if (request.to > today) throw Invalid.field('to', `must not be after today (${today} SAST)`)
    return postedRange(this.db, request.account_id, fromSast(request.from),
      fromSast(addDays(request.to, 1)))
  }

  /** A statement answered in the reply, its file in `content` (base64). */
  private inline(statement: AccountStatement, format: StatementFormat,
      content: Buffer): StatementReply {
    return { status: 'ready', job_id: null, ...this.fileOf(statement, format),
      content: content.toString('base64'), size: content.length, sha256: sha256Of(content),
      totals: totalsOf(statement) }
  }

  /**
   * `ops.account.statement`: any account's statement, in the reply only. A range too large
   * for it is refused, not made in the background: that path keeps the file for the partner
   * and announces it to them, which an operator's look must not do. `partnerId` is the
   * account's own partner, as the operator's endpoint found it.
   */
  async operatorStatement(partnerId: string, request: StatementRequest): Promise<StatementReply> {
    await this.accounts.accountOf(partnerId, request.account_id)
    const range = await this.rangeOf(request)
    if (postedCount(range) > statement_inline_lines_max) {
      throw tooLarge(`${postedCount(range)} lines, more than ${statement_inline_lines_max}`)
    }
    const statement = await this.build(request.account_id, request.from, request.to, range)
    const content = await this.render(statement, request.format)
    if (content.length > statement_inline_bytes_max) {
      throw tooLarge(`${content.length} bytes, more than ${statement_inline_bytes_max}`)
    }
    return this.inline(statement, request.format, content)
  }

  /** `svc.account.<partner_id>.statement_get`: a part of a stored statement. */
  async statementGet(partnerId: string, request: { job_id: string;
      offset: number }): Promise<StatementPart> {
    const row = await storedStatement(this.db, request.job_id, partnerId)
    if (!row) throw new NotFound('statement')
    const size = row.size ?? 0
    if (row.state === 'ready' && request.offset > size) {
      throw Invalid.field('offset', `must be at most the statement's size, ${size} bytes`)
    }
    const part = row.state === 'ready'
      ? await statementBytes(this.db, row.id, request.offset, statement_chunk_bytes_max)
      : new Uint8Array()
    const end = request.offset + part.length
    return {
      job_id: row.id, status: row.state, ...fileOfRow(row), size: row.size, sha256: row.sha256,
      totals: row.totals, offset: request.offset, data: Buffer.from(part).toString('base64'),
      next_offset: row.state === 'ready' && end < size ? end : null,
    }
  }

  /**
   * The account's statement for SAST days `from` to `to` (both included), from the ledger's
   * posted rows, its invariant asserted (statement-build.ts).
   */
  async buildStatement(accountId: string, from: string, to: string): Promise<AccountStatement> {
    const range = await postedRange(this.db, accountId, fromSast(from), fromSast(addDays(to, 1)))
    return this.build(accountId, from, to, range)
  }

  private async build(accountId: string, from: string, to: string,
      range: PostedRange): Promise<AccountStatement> {
    const toAt = fromSast(addDays(to, 1))
    const [details, opening, closing, rows, held] = await Promise.all([
      this.accounts.detailsOf(accountId),
      runningBalanceAt(this.db, accountId, range.before),
      runningBalanceAt(this.db, accountId, range.last),
      postedRows(this.db, accountId, range),
      heldAt(this.db, accountId, toAt, range.last),
    ])
    assert(rows.length === postedCount(range) && (rows.length === 0
      || rows[0]!.posted_order === range.before + 1n),
    `statement of ${accountId}: ${rows.length} rows posted in (${range.before}, ${range.last}]`)
    return statementOf({
      account_id: accountId, account_number: details.account_number,
      branch_code: this.options.branchCode, holder_name: details.holder_name, from, to,
      opening_balance: opening, held_at_end: held, generated_at: this.clock.now(),
    }, rows, closing)
  }

  private render(statement: AccountStatement, format: StatementFormat,
      statementId?: string): Promise<Buffer> {
    if (format === 'camt053') return statementCamt(statement, statementId)
    const renderPdf = this.options.renderPdf
    assert(renderPdf, 'the bank renders statements as PDF (statement-pdf.ts)')
    return renderPdf(statement)
  }

  private fileOf(statement: AccountStatement, format: StatementFormat) {
    return {
      account_id: statement.account_id, from: statement.from, to: statement.to, format,
      file_name: fileNameOf(statement.account_number, statement.from, statement.to, format),
      content_type: content_types[format],
    }
  }

  /** A new statement's row, queued, for the request or the monthly job. */
  private async prepared(row: Omit<NewStatement, 'id' | 'file_name' | 'content_type'
      | 'created_at'>): Promise<NewStatement> {
    const { account_number } = await this.accounts.detailsOf(row.account_id)
    return { ...row, id: randomUUID(), created_at: this.clock.now(),
      file_name: fileNameOf(account_number, row.from_date, row.to_date, row.format),
      content_type: content_types[row.format] }
  }

  /** Adds the statement and its job in one transaction; answers its job id at once. */
  private async queue(partnerId: string, request: StatementRequest): Promise<StatementReply> {
    if (await queuedCount(this.db, partnerId) >= statement_queued_per_partner_max) {
      throw new Conflict(`${statement_queued_per_partner_max} statements of yours are being ` +
        'made; ask again once one is ready (account.statement_ready)')
    }
    const row = await this.prepared({ partner_id: partnerId, account_id: request.account_id,
      format: request.format, from_date: request.from, to_date: request.to, origin: 'request' })
    await this.db.transaction().execute(async (trx) => {
      await insertStatement(trx, row)
      await this.jobs.enqueue(trx, generateJob(row.id))
    })
    this.jobs.kick()
    return { status: 'queued', job_id: row.id, ...fileOfRow(row), content: null, size: null,
      sha256: null, totals: null }
  }

  /** A statement made in the reply but too large for it: stored, ready, announced. */
  private async storeReady(partnerId: string, request: StatementRequest,
      statement: AccountStatement, content: Buffer): Promise<StatementReply> {
    const row = await this.prepared({ partner_id: partnerId, account_id: request.account_id,
      format: request.format, from_date: request.from, to_date: request.to, origin: 'request' })
    await this.db.transaction().execute(async (trx) => {
      await insertStatement(trx, row)
      await this.finish(trx, row, statement, content)
    })
    return { status: 'ready', job_id: row.id, ...fileOfRow(row), content: null,
      size: content.length, sha256: sha256Of(content), totals: totalsOf(statement) }
  }

  /** The `statements.generate` job: builds, renders and stores the statement; announces it. */
  private async generate(statementId: string): Promise<Record<string, unknown>> {
    const row = await storedStatement(this.db, statementId)
    assert(row, `statements.generate job for missing statement ${statementId}`)
    if (row.state === 'ready') return { statement_id: row.id, size: row.size }
    const statement = await this.buildStatement(row.account_id, row.from_date, row.to_date)
    const content = await this.render(statement, row.format, row.id)
    await this.db.transaction().execute(async (trx) => {
      const again = await storedStatement(trx, statementId)
      if (again?.state === 'ready') return
      await this.finish(trx, row, statement, content)
    })
    return { statement_id: row.id, lines: statement.lines.length, size: content.length }
  }

  /** Stores the file in its row and raises `account.statement_ready`, in `trx`. */
  private async finish(trx: Db, row: Pick<StatementRow, 'id' | 'partner_id' | 'account_id'
      | 'format' | 'from_date' | 'to_date' | 'origin' | 'file_name'>, statement: AccountStatement,
      content: Buffer): Promise<void> {
    const now = this.clock.now()
    const sha256 = sha256Of(content)
    await storeStatement(trx, row.id, { content, sha256, totals: totalsOf(statement),
      readyAt: now })
    await appendEvent(trx, {
      type: 'account.statement_ready', partner_id: row.partner_id, resource_id: row.id,
      occurred_at: now, data: {
        job_id: row.id, account_id: row.account_id, from: row.from_date, to: row.to_date,
        format: row.format, origin: row.origin, file_name: row.file_name, size: content.length,
        sha256, ready_at: formatTimestamp(now),
      },
    })
  }
}

function fileOfRow(row: Pick<StatementRow, 'account_id' | 'from_date' | 'to_date' | 'format'
    | 'file_name' | 'content_type'>) {
  return { account_id: row.account_id, from: row.from_date, to: row.to_date, format: row.format,
    file_name: row.file_name, content_type: row.content_type }
}

/** An operator's statement too large for the reply (`ops.account.statement`). */
function tooLarge(what: string): Unprocessable {
  return new Unprocessable(`this statement is ${what}, too large to answer at once: narrow the ` +
    'range (from, to), or have the account\'s partner ask for it ' +
    '(svc.account.<partner_id>.statement makes a larger one in the background)')
}

function sha256Of(content: Uint8Array): string {
  return createHash('sha256').update(content).digest('hex')
}
