// Transaction monitoring's bounds (the rules' own parameters are stored and set by operators).

export const monitoring_sweep_limits = {
  attempts_max: 10,
  lease_ms: 120_000,
  backoff_base_ms: 5_000,
  backoff_max_ms: 5 * 60_000,
  /** How often (bank time) the sweep looks for movements not yet evaluated. */
  every_ms: 15_000,
  /**
   * Movements one sweep transaction takes at most: short transactions (on PGlite one holds the
   * only connection while it runs).
   */
  batch_max: 200,
  /** Pending payouts of this many days back are evaluated before they settle. */
  pending_days: 3,
  /** Pending payouts one sweep takes at most (the next sweep takes the rest). */
  pending_max: 10_000,
} as const

/** The most rows a list of alerts, cases or reports answers. */
export const monitoring_page_max = 500
/** The customer's recent money a case shows: its accounts' newest rows. */
export const case_recent_rows = 20
