import type { Module } from '../module.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'

// The operators' summary of the bank (`ops.summary`, the console's overview): indexed
// aggregates across capabilities, read only (summary-store.ts).
export const summaryModule: Module = {
  name: 'summary',
  endpoints: (s) => [endpoint(contract.summary.summary, () => s.summary.summary())],
}
