import type { ColumnType, Generated } from 'kysely'
import type { Timestamp, NullableTimestamp, Json } from '../db/column-types.ts'

// Kysely types of the table of background work (src/schema.ts's Database extends JobTables).

export type JobState = 'queued' | 'running' | 'done' | 'dead'

export interface JobsTable {
  id: string
  kind: string
  key: string
  payload: Json<Record<string, unknown>>
  state: JobState
  due_at: Timestamp
  attempts: Generated<number>
  attempts_max: number
  lease_ms: number
  /**
   * Whose work it is, for kinds that share the runner's slots out (a partner); '' for the bank's
   * own.
   */
  share: ColumnType<string, string | undefined, string>
  /**
   * The partner whose sandbox clock the job runs by (its due time is still bank time); '' for
   * the bank's.
   */
  clock_partner: ColumnType<string, string | undefined, string>
  lease_owner: string | null
  lease_expires_at: NullableTimestamp
  last_error: string | null
  result: Json<Record<string, unknown> | null> | null
  created_at: Timestamp
  updated_at: Timestamp
  started_at: NullableTimestamp
  finished_at: NullableTimestamp
}

export interface JobTables {
  jobs: JobsTable
}
