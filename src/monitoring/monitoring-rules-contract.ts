import { z } from 'zod'

// The monitoring rules (RULINGS "Financial crime controls") and their parameters: each
// rule's parameters with their bounds and the defaults the migration stores. Operators change
// them (`ops.monitoring.rule.set`); the sweep reads what is stored. Amounts are integer cents.
// A contract file: the rules' operations and the service share it.

export const monitoringRules = ['velocity', 'structuring', 'rapid_in_out', 'new_payee_large',
  'dormant_active'] as const
export type MonitoringRule = (typeof monitoringRules)[number]

const count = (max: number) => z.number().int().min(1).max(max)
const cents = z.number().int().min(1).max(1e15)

/** Each rule's parameters, every one required in what is stored. */
export const ruleParams = {
  /** Payments out of one account: their count or amount in the last hour or SAST day. */
  velocity: z.strictObject({
    count_per_hour: count(100_000),
    amount_per_hour_cents: cents,
    count_per_day: count(1_000_000),
    amount_per_day_cents: cents,
  }),
  /**
   * At least `count` payments out of one account within `window_minutes`, each at least
   * `band_pct` % of `threshold_cents` and below it.
   */
  structuring: z.strictObject({
    threshold_cents: cents,
    band_pct: z.number().int().min(1).max(99),
    count: count(1_000),
    window_minutes: count(10_080),
  }),
  /**
   * Money in and out again: within `window_hours` the account received at least
   * `min_in_cents` and paid out at least `out_pct` % of what it received.
   */
  rapid_in_out: z.strictObject({
    window_hours: count(720),
    min_in_cents: cents,
    out_pct: z.number().int().min(1).max(100),
  }),
  /** A payment of at least `amount_cents` to a recipient the account never paid before. */
  new_payee_large: z.strictObject({ amount_cents: cents }),
  /**
   * A movement of at least `amount_cents` on an account with none for `inactive_days` (or
   * older than that and never used).
   */
  dormant_active: z.strictObject({ inactive_days: count(3_650), amount_cents: cents }),
} satisfies Record<MonitoringRule, z.ZodType>

export type RuleParams = { [R in MonitoringRule]: z.output<(typeof ruleParams)[R]> }

/** What a freshly migrated bank stores (R5,000 is the structuring threshold's default). */
export const ruleDefaults: RuleParams = {
  velocity: { count_per_hour: 20, amount_per_hour_cents: 5_000_000, count_per_day: 50,
    amount_per_day_cents: 20_000_000 },
  structuring: { threshold_cents: 500_000, band_pct: 90, count: 10, window_minutes: 60 },
  rapid_in_out: { window_hours: 6, min_in_cents: 1_000_000, out_pct: 80 },
  new_payee_large: { amount_cents: 2_500_000 },
  dormant_active: { inactive_days: 180, amount_cents: 100_000 },
}
