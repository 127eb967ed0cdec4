import type { Kysely } from 'kysely'
import {
  addDays, fromSast, toSast, type SouthAfricanCalendar,
} from '../calendar/sa-calendar.ts'
import type { JobRunner } from '../jobs/job-runner.ts'
import type { Database } from '../schema.ts'
import { activeAccounts, insertStatement, type NewStatement } from './statements-store.ts'
import { statement_formats } from './statements-contract.ts'
import {
  generateJob, statement_monthly_job_kind, statement_monthly_job_limits,
} from './statement-jobs.ts'

// Monthly statements (RULINGS "Account lifecycle", Statements): made automatically on the
// first business day after the month ends (SAST, the calendar's business days) for every
// account with a posting in the month, in both formats (PDF and camt.053.001.08).
//
// A recurring `statements.monthly` job, keyed by the month (`2026-11`), is planned from that
// day on (so a bank that was down that day makes it when it starts), due at 06:00 SAST; the
// job key makes it once across instances. It does not build statements itself: it adds each
// account's two statement rows (queued, `origin` monthly) and their `statements.generate`
// jobs, a page of accounts per transaction, and those jobs make them and raise
// `account.statement_ready` as for a statement asked for. A month's statement of an account in
// a format exists once (a unique index), so a run cut short and run again adds only what is
// missing.

/** Minutes after SAST midnight the month's statements are due on their day (06:00). */
const monthly_due_minutes = 6 * 60
/** Accounts given their statement rows per transaction. */
const accounts_page = 500

type Db = Kysely<Database>
type Prepare = (row: Omit<NewStatement, 'id' | 'file_name' | 'content_type'
  | 'created_at'>) => Promise<NewStatement>

/** The first and last day of month `YYYY-MM`. */
export function monthDays(month: string): { from: string; to: string } {
  const from = `${month}-01`
  const next = addDays(`${month}-28`, 4).slice(0, 7)
  return { from, to: addDays(`${next}-01`, -1) }
}

export class MonthlyStatements {
  constructor(
    private readonly db: Db,
    private readonly jobs: JobRunner,
    private readonly calendar: SouthAfricanCalendar,
    private readonly prepare: Prepare,
  ) {
    jobs.register({
      kind: statement_monthly_job_kind,
      ...statement_monthly_job_limits,
      plan: (now) => this.planned(now),
      run: async (job) => ({ ...(await this.run(String(job.payload.month))) }),
    })
  }

  /** The day the statements of the month before `date`'s month are made (SAST). */
  dueDay(date: string): string {
    return this.calendar.onOrAfter(`${date.slice(0, 7)}-01`)
  }

  /** Last month's statements, from the first business day of this month on. */
  planned(now: Date) {
    const today = toSast(now).date
    const due = this.dueDay(today)
    if (today < due) return []
    const month = addDays(`${today.slice(0, 7)}-01`, -1).slice(0, 7)
    return [{ key: month, due_at: fromSast(due, monthly_due_minutes), payload: { month } }]
  }

  /** Adds the month's statements of every account with a posting in it, and their jobs. */
  async run(month: string): Promise<{ month: string; accounts: number; statements: number }> {
    const { from, to } = monthDays(month)
    const fromAt = fromSast(from)
    const toAt = fromSast(addDays(to, 1))
    let after = '00000000-0000-0000-0000-000000000000'
    const counted = { accounts: 0, statements: 0 }
    for (;;) {
      const page = await activeAccounts(this.db, fromAt, toAt, after, accounts_page)
      if (page.length === 0) break
      const rows: NewStatement[] = []
      for (const account of page) {
        for (const format of statement_formats) rows.push(await this.prepare({
          partner_id: account.partner_id, account_id: account.account_id, format,
          from_date: from, to_date: to, origin: 'monthly' }))
      }
      counted.statements += await this.add(rows)
      counted.accounts += page.length
      after = page.at(-1)!.account_id
    }
    this.jobs.kick()
    return { month, ...counted }
  }

  /** One page's rows and jobs in one transaction; how many were new. */
  private add(rows: readonly NewStatement[]): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      let added = 0
      for (const row of rows) {
        if (!(await insertStatement(trx, row))) continue
        await this.jobs.enqueue(trx, generateJob(row.id))
        added++
      }
      return added
    })
  }
}
