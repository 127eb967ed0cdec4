// Cards' limits (cards-module.ts declares them; the card rules' own bounds are card_limits
// in card-contract.ts).

/** The `card.authorization_expiry` job kind (card-network.ts): its retries, lease and backoff. */
export const card_expiry_job_limits = {
  attempts_max: 10,
  lease_ms: 60_000,
  backoff_base_ms: 60_000,
  backoff_max_ms: 60 * 60_000,
}
