import type { Module } from '../module.ts'
import { ClearingService } from './clearing-service.ts'
import { PaymentAdvices } from './payment-advice.ts'
import { TransactionService } from './transaction-service.ts'
import { TransferService } from './transfer-service.ts'
import { PayoutScreening } from './payout-screening.ts'
import { TransferKeyExpiry } from './transfer-key-expiry.ts'
import type { TransferTables } from './transfer-tables.ts'
import { contract } from '../contract/index.ts'
import { endpoint, partnerOf, withHeaders } from '../transport/nats/endpoint.ts'
import { payment_advice_job_kind } from './payment-advice.ts'
import { clearing_job_kind, rail_inbound_job_kind, rtc_recovery_job_kind } from './clearing-service.ts'
import { transferMigrations } from './transfer-migrations.ts'
import {
  transfer_key_expiry_job_kind as key_expiry_job_kind,
  transferKeysCreatedMigration,
} from './transfer-key-expiry.ts'
import {
  clearing_job_limits,
  limits as payment_limits,
  payment_advice_job_limits,
  rail_inbound_job_limits,
  rtc_recovery_job_limits,
  transfer_key_expiry_job_limits,
} from './transfer-limits.ts'

/** What the module builds: its members of the bank's Services. */
export interface TransferServices {
  transfers: TransferService
  transactions: TransactionService
  clearing: ClearingService
  /** Payment advices by e-mail (`payment_advice` jobs), for transfers and bulk payments. */
  advices: PaymentAdvices
  /** The daily deletion of expired clientTxIds (`transfers.key_expiry`). */
  transferKeyExpiry: TransferKeyExpiry
  /** Payout recipients' sanctions screening, for transfers and bulk payments. */
  payoutScreening: PayoutScreening
}

// Transfers: EFT/RTC payouts, settlement, clearing, payment advices. Its `transfer_keys`
// came with 0002_ledger (ledger).
export const transfersModule: Module<TransferServices, TransferTables> = {
  name: 'transfers',
  needs: ['rails', 'accounts', 'entities', 'notify', 'jobs', 'ledger', 'screening'],
  services: (s, { db, clock, config, log }) => {
    const { accounts, entities } = s
    const advices = new PaymentAdvices(db, clock, s.jobRunner, s.notifier, {
      payerName: async (partnerId, accountId) => (
        await entities.get(partnerId, (await accounts.get(partnerId, accountId)).entity_id)).name,
    })
    // Payout recipients screened against the sanctions lists (payout-screening.ts).
    const screening = new PayoutScreening(s.screeningReviews, accounts)
    screening.listen(s.ledgerWriter)
    const payees = { accountIdByNumber: (n: string) => accounts.idByNumber(n) }
    const clearing = new ClearingService(db, clock, s.ledgerWriter, s.calendar, s.rail,
      s.jobRunner, advices, {
        cyclesSast: config.eftCyclesSast,
        chunkMax: config.clearingChunkMax,
        rtcRecoveryAfterMs: config.rtcRecoveryAfterMs,
        schedule: config.clearingSchedule,
      }, log, {
        iso: s.isoRail,
        payers: async (accountIds) => {
          const numbers = await accounts.numbersOf(accountIds)
          const names = await entities.namesOf([...numbers.values()].map((n) => n.entity_id))
          return new Map([...numbers].map(([id, n]) => [id, {
            account_number: n.account_number, name: names.get(n.entity_id) ?? n.account_number }]))
        },
      }, screening)
    const transfers = new TransferService(clock, s.calendar,
      (accountId, payment) => clearing.payRealTime(accountId, payment), payees, advices,
      s.ledgerWriter, { fees: config.fees, log }, screening)
    return {
      transfers, clearing, advices, payoutScreening: screening,
      transactions: new TransactionService(db, accounts),
      transferKeyExpiry: new TransferKeyExpiry(s.ledger, clock, s.jobRunner,
        config.transferKeyWindowMs),
    }
  },
  migrations: {
    ...transferMigrations,
    '0033_transfer_keys_created': transferKeysCreatedMigration,
  },
  limits: {
    ...payment_limits,
    payment_advice_job: payment_advice_job_limits,
    clearing_job: clearing_job_limits,
    rtc_recovery_job: rtc_recovery_job_limits,
    rail_inbound_job: rail_inbound_job_limits,
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
      const page = await s.transactions.list(await s.accounts.partnerOf(r.account_id), r.account_id, { limit: r.limit, cursor: r.cursor })
      return page.body
    }),
    endpoint(contract.payments.pending, (r) => s.transactions.pending(r)),
    endpoint(contract.operators.clearingRun, (r) => (r.detach ? s.clearing.start() : s.clearing.runNow())),
  ],
  jobKinds: [payment_advice_job_kind, clearing_job_kind, rtc_recovery_job_kind,
    rail_inbound_job_kind, key_expiry_job_kind],
}
