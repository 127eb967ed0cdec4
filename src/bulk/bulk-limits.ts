// Bulk payments' job limits (bulk-module.ts declares them with bulk_limits, the request
// bounds, which live in bulk-contract.ts because the SDK checks them too).

/** The `bulk_otp_expiry_job_kind` job kind (bulk-service.ts): its retries, lease and backoff. */
export const bulk_otp_expiry_job_limits = {
  attempts_max: 20,
  lease_ms: 30_000,
  backoff_base_ms: 5_000,
  backoff_max_ms: 300_000,
}

/** The `bulk_process_job_kind` job kind (bulk-processing.ts): its retries, lease and backoff. */
export const bulk_process_job_limits = {
  attempts_max: 20,
  lease_ms: 60_000,
  backoff_base_ms: 10_000,
  backoff_max_ms: 10 * 60_000,
}

/** The `bulk_eft_cycle_job_kind` job kind (bulk-processing.ts): its retries, lease and backoff. */
export const bulk_eft_cycle_job_limits = {
  attempts_max: 20,
  lease_ms: 60_000,
  backoff_base_ms: 30_000,
  backoff_max_ms: 30 * 60_000,
}
