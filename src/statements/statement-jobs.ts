// The statements module's job kinds (statements-service.ts, monthly-statements.ts) and their
// limits, which statements-module.ts declares.

/** Makes one stored statement (a large range asked for, or a month's): keyed by its id. */
export const statement_generate_job_kind = 'statements.generate'

/** The `statements.generate` job kind: its retries, lease and backoff. */
export const statement_generate_job_limits = {
  attempts_max: 10,
  lease_ms: 120_000,
  backoff_base_ms: 10_000,
  backoff_max_ms: 10 * 60_000,
}

/** Adds a month's statements of every account with activity: keyed by the month. */
export const statement_monthly_job_kind = 'statements.monthly'

/** The `statements.monthly` job kind: its retries, lease and backoff. */
export const statement_monthly_job_limits = {
  attempts_max: 10,
  lease_ms: 120_000,
  backoff_base_ms: 60_000,
  backoff_max_ms: 60 * 60_000,
}

/** The job that makes a stored statement. */
export function generateJob(statementId: string) {
  return { kind: statement_generate_job_kind, key: statementId,
    payload: { statement_id: statementId } }
}
