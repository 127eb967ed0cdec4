import { formatTimestamp } from '../contract/format.ts'
import type { JobView } from './jobs-contract.ts'
import type { JobRow } from './job-store.ts'

// A job as operators see it (`bank jobs list`, `bank jobs get`, and the answer of a long
// call made with `detach: true`): the row, its times written as the interface writes them.

export function jobView(row: JobRow): JobView {
  const optional = (at: Date | null) => (at ? formatTimestamp(at) : null)
  return {
    job_id: row.id,
    kind: row.kind,
    key: row.key,
    state: row.state,
    attempts: row.attempts,
    attempts_max: row.attempts_max,
    due_at: formatTimestamp(row.due_at),
    lease_owner: row.lease_owner,
    lease_expires_at: optional(row.lease_expires_at),
    last_error: row.last_error,
    result: (row.result ?? null) as Record<string, unknown> | null,
    created_at: formatTimestamp(row.created_at),
    updated_at: formatTimestamp(row.updated_at),
    finished_at: optional(row.finished_at),
  }
}
