// KYC's limits (kyc-module.ts declares them).

/** The `retention_job_kind` job kind (document-retention.ts): its retries, lease and backoff. */
export const document_retention_job_limits = {
  attempts_max: 10,
  lease_ms: 60_000,
  backoff_base_ms: 60_000,
  backoff_max_ms: 60 * 60_000,
}
