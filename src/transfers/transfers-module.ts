import type { Module } from '../module.ts'
import { contract } from '../contract/index.ts'
import { endpoint, partnerOf, withHeaders } from '../transport/nats/endpoint.ts'
import { payment_advice_job_kind } from './payment-advice.ts'
import { clearing_job_kind, rtc_recovery_job_kind } from './clearing-service.ts'
import { transferMigrations } from './transfer-migrations.ts'
import {
  transfer_key_expiry_job_kind as key_expiry_job_kind,
  transferKeysCreatedMigration,
} from './transfer-key-expiry.ts'
import {
  clearing_job_limits,
  limits as payment_limits,
  payment_advice_job_limits,
  rtc_recovery_job_limits,
  transfer_key_expiry_job_limits,
} from './transfer-limits.ts'

// Transfers: EFT/RTC payouts, settlement, clearing, payment advices. Its `transfer_keys`
// came with 0002_ledger (ledger).
export const transfersModule: Module = {
  name: 'transfers',
  migrations: {
    ...transferMigrations,
    '0033_transfer_keys_created': transferKeysCreatedMigration,
  },
  limits: {
    ...payment_limits,
    payment_advice_job: payment_advice_job_limits,
    clearing_job: clearing_job_limits,
    rtc_recovery_job: rtc_recovery_job_limits,
    transfer_key_expiry_job: transfer_key_expiry_job_limits,
  },
  endpoints: (s) => [
    endpoint(contract.transfers.transfer, (r, c) => s.transfers.transfer(c.caller, r)),
    endpoint(contract.transfers.transferInternal, (r, c) => s.transfers.transferInternal(c.caller, r)),
    endpoint(contract.transfers.list, async (r, c) => {
      const userIds = Array.isArray(r.filter_user_ids) ? r.filter_user_ids : []
      const page = await s.transactions.list(partnerOf(c), r.account_id, { limit: r.limit, cursor: r.cursor, userIds })
      return withHeaders(page.body, { 'Bank-Next-Cursor': page.nextCursor })
    }),
    endpoint(contract.transfers.getTransaction, (r, c) => s.transactions.get(partnerOf(c), r.tx_id)),
    endpoint(contract.operators.accountTransactions, async (r) => {
      const page = await s.transactions.list(await s.partners.partnerOfAccount(r.account_id), r.account_id, { limit: r.limit, cursor: r.cursor })
      return page.body
    }),
    endpoint(contract.payments.pending, (r) => s.transactions.pending(r)),
    endpoint(contract.operators.clearingRun, (r) => (r.detach ? s.clearing.start() : s.clearing.runNow())),
  ],
  jobKinds: [payment_advice_job_kind, clearing_job_kind, rtc_recovery_job_kind, key_expiry_job_kind],
}
