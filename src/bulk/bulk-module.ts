import type { Module } from '../module.ts'
import { BulkService } from './bulk-service.ts'
import { entity_limits_default } from './bulk-entity-limits.ts'
import { BulkProcessing } from './bulk-processing.ts'
import type { BulkTables } from './bulk-tables.ts'
import { contract } from '../contract/index.ts'
import { endpoint, partnerOf, subjectEntity } from '../transport/nats/endpoint.ts'
import { bulk_otp_expiry_job_kind } from './bulk-service.ts'
import { bulk_process_job_kind, bulk_eft_cycle_job_kind } from './bulk-processing.ts'
import { bulkPaymentsMigration, bulkPaymentTxIdsMigration } from './bulk-migration.ts'
import { pinBudgetMigration } from './pin-budget-migration.ts'
import { bulk_limits } from './bulk-contract.ts'
import { bulk_eft_cycle_job_limits, bulk_otp_expiry_job_limits, bulk_process_job_limits } from './bulk-limits.ts'

/** What the module builds: its members of the bank's Services. */
export interface BulkServices {
  /** Bulk payments (`svc.account.<entity_id>.bulk_payment.*`) and their OTPs. */
  bulk: BulkService
  /** Their processing jobs: capture, payment rows, settlement. */
  bulkProcessing: BulkProcessing
}

// Bulk payments.
export const bulkModule: Module<BulkServices, BulkTables> = {
  name: 'bulk',
  needs: ['ledger', 'jobs', 'notify', 'entities', 'accounts', 'transfers', 'events', 'rails'],
  services: (s, { db, clock, config }) => {
    const { entities, accounts } = s
    const bulk = new BulkService(db, clock, s.ledgerWriter, s.calendar, s.jobRunner, s.notifier, {
      entityEmail: async (partnerId, entityId) => (await entities.get(partnerId, entityId)).email,
      accountIdsOf: async (entityId) => (await accounts.list(entityId)).map((a) => a.id),
    }, {
      // Without BANK_OTP_KEY, the PINs' key is derived from the bank's secrets key, which every
      // instance shares (BANK_SECRETS_KEY or the data directory's secrets-key).
      fees: config.fees, otpKey: config.otpKey ?? s.secretBox.derivedKey('bulk-otp'),
      sandbox: config.sandbox,
      entityLimits: { ...entity_limits_default, wrong_pins_per_entity_max: config.bulkWrongPinsMax,
        pending_batches_per_entity_max: config.bulkPendingBatchesMax },
    })
    const bulkProcessing = new BulkProcessing(db, s.ledgerWriter, s.jobRunner, s.advices,
      s.events, s.isoRail, (accountIds) => s.clearing.payersOf(accountIds),
      (accountId, payment, batchId) => s.clearing.payRealTime(accountId, payment, 'bulk', batchId),
      s.payoutScreening)
    return { bulk, bulkProcessing }
  },
  migrations: {
    '0007_bulk_payments': bulkPaymentsMigration,
    '0020_bulk_pin_budget': pinBudgetMigration,
    '0058_bulk_payment_tx_ids': bulkPaymentTxIdsMigration,
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
