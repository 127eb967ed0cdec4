// Webhooks' limits (webhooks-module.ts declares them). WebhookService takes its WebhookLimits
// as an option, so the configuration can change them (BANK_WEBHOOK_PARTNER_SLOTS_MAX,
// BANK_WEBHOOK_CONCURRENCY).

export interface WebhookLimits {
  /** One attempt, from connecting to the receiver's status line. */
  attempt_timeout_ms: number
  /** How long after the first attempt a delivery is still retried. */
  retry_window_ms: number
  retry_backoff_base_ms: number
  retry_backoff_max_ms: number
  /** Deliveries of one lane one job sends at most, one after another. */
  run_deliveries_max: number
  /**
   * Delivery jobs of one partner running at once, across all instances (and on one
   * instance never all of its delivery slots): what a partner whose receiver never
   * answers can hold of the delivery capacity; the rest serves the other partners.
   */
  partner_slots_max: number
  /**
   * Deliveries running at once on one instance: a pool of the job runner's of their own,
   * beside the slots clearing, bulk and debit work share. An attempt is a network wait
   * (a socket and a few KB), so hundreds cost memory, not CPU.
   */
  instance_slots: number
  /** The per-endpoint circuit breaker (webhook-breaker.ts). */
  breaker: WebhookBreakerLimits
}

/**
 * When an endpoint that keeps failing is backed off, and when it is paused. An attempt
 * fails when the receiver answers anything but 2xx, cannot be reached, or does not answer
 * within `attempt_timeout_ms` (a receiver that hangs fails as surely as one that refuses).
 */
export interface WebhookBreakerLimits {
  /**
   * Failed attempts in a row at one endpoint after which it is backed off: none of its
   * deliveries is attempted until the backoff ends (they wait queued, holding no slot).
   */
  open_after_failures: number
  /** The first backoff; each further failure in a row doubles it, up to the maximum. */
  backoff_base_ms: number
  backoff_max_ms: number
  /**
   * An endpoint whose attempts have all failed for this long (and at least
   * `pause_failures_min` of them) is paused: its deliveries stay pending, unattempted, until
   * an operator resumes it or the partner sets its endpoint again.
   */
  pause_after_ms: number
  pause_failures_min: number
}

export const webhook_breaker_default: WebhookBreakerLimits = {
  open_after_failures: 3,
  backoff_base_ms: 30_000,
  backoff_max_ms: 3_600_000,
  pause_after_ms: 24 * 3_600_000,
  pause_failures_min: 10,
}

export const webhook_limits_default: WebhookLimits = {
  attempt_timeout_ms: 10_000,
  retry_window_ms: 24 * 3_600_000,
  retry_backoff_base_ms: 30_000,
  retry_backoff_max_ms: 2 * 3_600_000,
  run_deliveries_max: 500,
  partner_slots_max: 1,
  instance_slots: 256,
  breaker: webhook_breaker_default,
}

/**
 * The `webhook.deliver` job kind's retries and backoff (its lease follows the limits above,
 * webhookLeaseMs). A job fails only when the database does (a receiver's failure is an
 * outcome, not an error): these retries cover that, not the receiver.
 */
export const webhook_deliver_job_limits = {
  attempts_max: 20,
  backoff_base_ms: 5_000,
  backoff_max_ms: 300_000,
}
