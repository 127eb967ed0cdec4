import type { Module } from '../module.ts'
import { contract } from '../contract/index.ts'
import { endpoint, partnerOf } from '../transport/nats/endpoint.ts'
import { IncomingPayments } from './incoming-service.ts'
import { IncomingScreening } from './incoming-screening.ts'
import type { IncomingTables } from './incoming-tables.ts'
import { incomingPaymentsMigration } from './incoming-migration.ts'

/** What the module builds: its members of the bank's Services. */
export interface IncomingServices {
  /** Other banks' payments to the bank's accounts (incoming pacs.008), and their payers. */
  incoming: IncomingPayments
}

// Incoming payments: other banks' credits to the bank's accounts, through the ISO rail.
export const incomingModule: Module<IncomingServices, IncomingTables> = {
  name: 'incoming',
  needs: ['ledger', 'accounts', 'rails', 'events', 'screening', 'account-status'],
  services: (s, { db, clock, config }) => {
    // Payers screened against the sanctions lists (incoming-screening.ts).
    const screening = new IncomingScreening(s.screeningReviews, s.legalHolds, s.accounts)
    screening.listen()
    return { incoming: new IncomingPayments(db, s.ledgerWriter, s.accounts, s.isoRail,
      s.clearingHouse, clock, config.rail.branchCode, screening) }
  },
  migrations: { '0037_incoming_payments': incomingPaymentsMigration },
  endpoints: (s) => [
    endpoint(contract.incoming.details, (r, c) => s.incoming.details(partnerOf(c), r.tx_id)),
    endpoint(contract.incoming.sandboxIncoming, (r) => s.incoming.sandboxIncoming(r)),
  ],
}
