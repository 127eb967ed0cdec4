// How a new mandate is authenticated by the debtor's bank (docs/guides/debit-orders.md:
// pending_authentication → active | rejected). This is the outside world, so it sits behind
// an interface: the debit rail (src/rails/debit-rail.ts, with its simulated implementation
// and magic account numbers) is meant to implement it; until it is wired in, the bank uses
// `activatingAuthenticator`, which accepts every mandate at once.
//
// The bank asks in a durable job after the mandate has committed, never inside a database
// transaction. An answer of `pending` makes the bank ask again at `ask_again_at` (on the
// bank's clock, so the sandbox clock moving past it brings the question due).

export interface MandateToAuthenticate {
  /** The bank's id of the mandate (stable: an answer for the same id must not change). */
  mandate_id: string
  partner_id: string
  entity_id: string
  mandate_reference: string
  account_holder_name: string
  account_number: string
  account_type: 'cheque' | 'savings'
  branch_code: string
  max_amount: bigint
  frequency: 'once_off' | 'weekly' | 'monthly' | 'annually'
  first_collection_date: string | null
  debtor_email: string | null
  /** When the mandate was registered, on the bank's clock. */
  created_at: Date
  /** 1 the first time the bank asks about this mandate, then 2, 3, … */
  attempt: number
}

export type MandateDecision =
  | { outcome: 'active' }
  | { outcome: 'rejected'; reason: string }
  | { outcome: 'pending'; ask_again_at: Date }

export interface MandateAuthenticator {
  authenticateMandate(mandate: MandateToAuthenticate, now: Date): Promise<MandateDecision>
}

/**
 * The default until the debit rail is wired in: the debtor's bank accepts every mandate at once.
 */
export const activatingAuthenticator: MandateAuthenticator = {
  authenticateMandate: async () => ({ outcome: 'active' }),
}
