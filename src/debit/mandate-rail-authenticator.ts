import type { DebitRail } from '../rails/debit-rail.ts'
import type { MandateAuthenticator } from './mandate-authenticator.ts'

/**
 * The debit rail as the mandates' authenticator: the debtor's bank decides (the simulated
 * rail by its magic account numbers: one rejects, one stays pending for a day).
 */
export function railAuthenticator(rail: DebitRail): MandateAuthenticator {
  return {
    async authenticateMandate(mandate) {
      const outcome = await rail.authenticateMandate({
        mandate_id: mandate.mandate_id,
        mandate_reference: mandate.mandate_reference,
        account_holder_name: mandate.account_holder_name,
        account_number: mandate.account_number,
        account_type: mandate.account_type,
        branch_code: mandate.branch_code,
        max_amount: mandate.max_amount,
        frequency: mandate.frequency,
        presented_at: mandate.created_at,
      })
      switch (outcome.status) {
        case 'active':
          return { outcome: 'active' }
        case 'rejected':
          return { outcome: 'rejected', reason: outcome.reason }
        case 'pending':
          return { outcome: 'pending', ask_again_at: outcome.retry_after }
      }
    },
  }
}
