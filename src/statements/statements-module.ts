import type { Module } from '../module.ts'
import { contract } from '../contract/index.ts'
import { endpoint, partnerOf } from '../transport/nats/endpoint.ts'
import { accountStatementsMigration } from './statements-migration.ts'
import type { StatementsTables } from './statements-tables.ts'
import { StatementsService } from './statements-service.ts'
import { renderStatementPdf } from './statement-pdf.ts'
import {
  statement_chunk_bytes_max, statement_days_max, statement_inline_bytes_max,
  statement_inline_lines_max, statement_queued_per_partner_max,
} from './statements-contract.ts'
import {
  statement_generate_job_kind, statement_generate_job_limits, statement_monthly_job_kind,
  statement_monthly_job_limits,
} from './statement-jobs.ts'

/** What the module builds: its members of the bank's Services. */
export interface StatementsServices {
  /** Account statements: on demand, in the background, and monthly (PDF and camt.053). */
  statements: StatementsService
}

// Account statements (RULINGS "Account lifecycle", Statements): built from the ledger's posted
// rows, rendered as PDF or camt.053.001.08, answered in the reply or made in the background.
export const statementsModule: Module<StatementsServices, StatementsTables> = {
  name: 'statements',
  needs: ['jobs', 'accounts', 'entities', 'events'],
  reads: {
    transactions: 'a read model: a statement is the account\'s posted rows, by posted_order',
    postings: 'a read model: when a row was posted is its posting\'s time, by the account index',
    accounts: 'a read model: the monthly job finds the accounts with a posting in the month',
    legal_holds: 'a read model: what legal holds held at the end of a statement\'s period',
  },
  services: (s, { db, clock, config }) => ({
    statements: new StatementsService(db, clock, s.jobRunner, {
      accountOf: (partnerId, accountId) => s.accounts.get(partnerId, accountId),
      detailsOf: async (accountId) => {
        const account = (await s.accounts.numbersOf([accountId])).get(accountId)
        if (!account) throw new Error(`statement of a missing account ${accountId}`)
        const entity = await s.entities.getAny(account.entity_id)
        return { account_number: account.account_number, holder_name: entity.name }
      },
    }, s.calendar, { branchCode: config.rail.branchCode, renderPdf: renderStatementPdf }),
  }),
  migrations: { '0040_account_statements': accountStatementsMigration },
  limits: {
    days_max: statement_days_max,
    inline_lines_max: statement_inline_lines_max,
    inline_bytes_max: statement_inline_bytes_max,
    chunk_bytes_max: statement_chunk_bytes_max,
    queued_per_partner_max: statement_queued_per_partner_max,
    generate_job: statement_generate_job_limits,
    monthly_job: statement_monthly_job_limits,
  },
  endpoints: (s) => [
    endpoint(contract.statements.statement, (r, c) => s.statements.statement(partnerOf(c), r)),
    endpoint(contract.statements.statementGet, (r, c) => s.statements.statementGet(partnerOf(c), r)),
    // An operator's: any account's, read as its partner's (404 when there is no such account).
    endpoint(contract.statements.operatorStatement, async (r) =>
      s.statements.operatorStatement(await s.accounts.partnerOf(r.account_id), r)),
  ],
  jobKinds: [statement_generate_job_kind, statement_monthly_job_kind],
}
