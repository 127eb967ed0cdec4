import type { Module } from '../module.ts'
import { contract } from '../contract/index.ts'
import { endpoint, partnerOf, subjectEntity } from '../transport/nats/endpoint.ts'
import { bulk_otp_expiry_job_kind } from './bulk-service.ts'
import { bulk_process_job_kind, bulk_eft_cycle_job_kind } from './bulk-processing.ts'
import { bulkPaymentsMigration } from './bulk-migration.ts'
import { pinBudgetMigration } from './pin-budget-migration.ts'
import { bulk_limits } from './bulk-contract.ts'
import { bulk_eft_cycle_job_limits, bulk_otp_expiry_job_limits, bulk_process_job_limits } from './bulk-limits.ts'

// Bulk payments.
export const bulkModule: Module = {
  name: 'bulk',
  migrations: {
    '0007_bulk_payments': bulkPaymentsMigration,
    '0020_bulk_pin_budget': pinBudgetMigration,
  },
  limits: {
    // The request bounds live in the contract, which the SDK checks too.
    ...bulk_limits,
    otp_expiry_job: bulk_otp_expiry_job_limits,
    process_job: bulk_process_job_limits,
    eft_cycle_job: bulk_eft_cycle_job_limits,
  },
  endpoints: (s) => [
    endpoint(contract.bulk.initiate, (r, c) => s.bulk.initiate(c.caller, subjectEntity(r, c), r)),
    endpoint(contract.bulk.verify, (r, c) => s.bulk.verify(partnerOf(c), subjectEntity(r, c), r)),
    endpoint(contract.bulk.status, (r, c) => s.bulk.status(partnerOf(c), subjectEntity(r, c), r.bulk_payment_id)),
    endpoint(contract.bulk.cancel, (r, c) => s.bulk.cancel(partnerOf(c), subjectEntity(r, c), r)),
    endpoint(contract.bulk.sandboxOtp, (r) => s.bulk.sandboxOtp(r)),
  ],
  jobKinds: [bulk_otp_expiry_job_kind, bulk_process_job_kind, bulk_eft_cycle_job_kind],
  subscriptions: ['clearing.cycle_completed'],
}
