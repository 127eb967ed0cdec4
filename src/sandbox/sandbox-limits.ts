// The sandbox's limits (sandbox-module.ts declares them).

/** The `sandbox_advance_job_kind` job kind (sandbox-service.ts): its retries, lease and backoff. */
export const sandbox_advance_job_limits = {
  attempts_max: 1,
  lease_ms: 60_000,
  backoff_base_ms: 1_000,
  backoff_max_ms: 1_000,
}
