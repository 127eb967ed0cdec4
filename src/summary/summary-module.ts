import type { Module } from '../module.ts'
import { SummaryService } from './summary-service.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'

/** What the module builds: its members of the bank's Services. */
export interface SummaryServices {
  /** The operators' summary of the bank (`ops.summary`): indexed aggregates only. */
  summary: SummaryService
}

// The operators' summary of the bank (`ops.summary`, the console's overview): indexed
// aggregates across capabilities, read only (summary-store.ts).
export const summaryModule: Module<SummaryServices, object> = {
  name: 'summary',
  reads: {
    jobs: 'a read model: the operators\' summary counts them by their own indexes',
    postings: 'a read model: the operators\' summary counts them by their own indexes',
    transactions: 'a read model: the operators\' summary counts them by their own indexes',
    accounts: 'a read model: the operators\' summary counts them by their own indexes',
    kyc_submissions: 'a read model: the review queues\' lengths and oldest, by their state index',
    approvals: 'a read model: the dual-control queue\'s length and oldest, by its state index',
  },
  services: (s, { db, clock, config }) => {
    const summary = new SummaryService(db, clock, s.calendar, { cyclesSast: config.eftCyclesSast })
    // The business gauges of /metrics are the summary's figures, read when scraped.
    s.metrics.readBusinessFrom(() => summary.figures())
    return { summary }
  },
  endpoints: (s) => [endpoint(contract.summary.summary, () => s.summary.summary())],
}
