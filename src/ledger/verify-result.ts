import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'
import type { LedgerExecutor } from './ledger-tables.ts'

// The outcome of the last `ledger verify`, clean or not (one row, id 1), so that the
// operators' metrics can say whether the ledger last verified clean and how long ago,
// across instances and restarts (bank_ledger_verify_ok, bank_ledger_verify_age_seconds).
// The checkpoints (ledger-checkpoint-migration.ts) record clean verifies only; this row
// records a failed one too. Written after each verify; nothing on the payment path reads it.

export const verifyResultMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table ledger_verify_result (
        id smallint primary key check (id = 1),
        ok boolean not null,
        incremental boolean not null,
        problems integer not null,
        finished_at timestamptz not null
      )
    `)
  },
}

export interface VerifyResult {
  ok: boolean
  incremental: boolean
  problems: number
  finished_at: Date
}

/** Records a verify's outcome in place of the last one. */
export async function recordVerifyResult(db: LedgerExecutor, result: VerifyResult):
    Promise<void> {
  const row = { id: 1, ...result }
  await db
    .insertInto('ledger_verify_result')
    .values(row)
    .onConflict((oc) => oc.column('id').doUpdateSet({ ...row, id: undefined }))
    .execute()
}

/** The last verify's outcome, or undefined when none has run. */
export async function lastVerifyResult(db: LedgerExecutor): Promise<VerifyResult | undefined> {
  const row = await db.selectFrom('ledger_verify_result')
    .select(['ok', 'incremental', 'problems', 'finished_at']).executeTakeFirst()
  return row ? { ...row, finished_at: new Date(row.finished_at) } : undefined
}
