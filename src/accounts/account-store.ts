import { sql, type Insertable, type Kysely, type Selectable } from 'kysely'
import type { AccountsTable } from '../ledger/ledger-tables.ts'
import type { Database } from '../schema.ts'

// The SQL of the `accounts` table's own columns, which the accounts capability owns. The
// balance columns (balance, held, last_seq, last_sha, last_posted) are the ledger's: only
// ledger-batch.ts writes them. Each function takes the executor to run on, so a caller
// can use its own transaction.

export type AccountRow = Selectable<AccountsTable>

type Executor = Kysely<Database>

export async function insertAccount(executor: Executor,
    values: Insertable<AccountsTable>): Promise<AccountRow> {
  return executor.insertInto('accounts').values(values).returningAll().executeTakeFirstOrThrow()
}

/**
 * The next value of the account number sequence, from 1. A database sequence serves
 * every instance from one pool without collisions.
 */
export async function nextAccountNumberValue(executor: Executor): Promise<bigint> {
  const { rows } = await sql<{ value: string }>`select nextval('account_number_seq')::text as value`.execute(executor)
  return BigInt(rows[0]!.value)
}

/**
 * An entity's accounts, oldest first by `created_at` with the insert sequence breaking
 * ties. Sorting by the sequence alone is not enough: instances' clocks differ, so an
 * account inserted later may carry an earlier `created_at`.
 */
export async function accountsOfEntity(executor: Executor,
    entityId: string): Promise<AccountRow[]> {
  return executor
    .selectFrom('accounts')
    .selectAll()
    .where('entity_id', '=', entityId)
    .orderBy('created_at')
    .orderBy('created_seq')
    .execute()
}

/** The id of the account with this number, of any partner (numbers are unique in the bank). */
export async function accountIdByNumber(executor: Executor,
    accountNumber: string): Promise<string | undefined> {
  const row = await executor.selectFrom('accounts').select('id').where('account_number', '=',
    accountNumber).executeTakeFirst()
  return row?.id
}

/** The ids of the accounts with these numbers, by number (absent numbers left out). */
export async function accountIdsByNumbers(executor: Executor,
    accountNumbers: readonly string[]): Promise<Map<string, string>> {
  const unique = [...new Set(accountNumbers)]
  const found = new Map<string, string>()
  for (let start = 0; start < unique.length; start += 1000) {
    const rows = await executor.selectFrom('accounts').select(['id', 'account_number'])
      .where('account_number', 'in', unique.slice(start, start + 1000)).execute()
    for (const row of rows) found.set(row.account_number, row.id)
  }
  return found
}

/** The partner's account, or undefined whether it is missing or another partner's. */
export async function accountOf(executor: Executor, partnerId: string,
    accountId: string): Promise<AccountRow | undefined> {
  return executor
    .selectFrom('accounts')
    .selectAll()
    .where('id', '=', accountId)
    .where('partner_id', '=', partnerId)
    .executeTakeFirst()
}

/** The partner an account belongs to, or undefined when there is no such account. */
export async function partnerOfAccount(executor: Executor,
    accountId: string): Promise<string | undefined> {
  const row = await executor.selectFrom('accounts').select('partner_id')
    .where('id', '=', accountId).executeTakeFirst()
  return row?.partner_id
}
