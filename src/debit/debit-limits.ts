// Debit orders' limits (debit-module.ts declares them).

/** After this many answers of "not yet" the mandate is rejected: the debtor never confirmed it. */
export const mandate_authentication_attempts_max = 60

/**
 * The `mandate_authentication_job_kind` job kind (mandate-service.ts): its retries, lease and
 * backoff.
 */
export const mandate_authentication_job_limits = {
  attempts_max: 20,
  lease_ms: 30_000,
  backoff_base_ms: 5_000,
  backoff_max_ms: 600_000,
}

/** The `debit_run_job_kind` job kind (debit-collection.ts): its retries, lease and backoff. */
export const debit_run_job_limits = {
  attempts_max: 10,
  lease_ms: 60_000,
  backoff_base_ms: 30_000,
  backoff_max_ms: 30 * 60_000,
}
