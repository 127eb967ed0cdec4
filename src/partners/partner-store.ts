import type { Insertable, Kysely, Selectable } from 'kysely'
import type { Database } from '../schema.ts'
import type { PartnersTable } from './partner-tables.ts'

// The SQL of the `partners` table, which the operators capability owns (partners are
// onboarded by the bank's operators). Each function takes the executor to run on.

export type PartnerRow = Selectable<PartnersTable>

type Executor = Kysely<Database>

export async function insertPartner(executor: Executor,
    values: Insertable<PartnersTable>): Promise<void> {
  await executor.insertInto('partners').values(values).execute()
}

/** Every partner in the order they were onboarded. */
export async function allPartners(executor: Executor): Promise<PartnerRow[]> {
  return executor.selectFrom('partners').selectAll().orderBy('created_seq').execute()
}

export async function partnerExists(executor: Executor, partnerId: string): Promise<boolean> {
  const row = await executor.selectFrom('partners').select('id').where('id', '=', partnerId)
    .executeTakeFirst()
  return row !== undefined
}
