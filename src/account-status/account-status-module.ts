import type { Kysely } from 'kysely'
import type { Module } from '../module.ts'
import type { Database } from '../schema.ts'
import { contract } from '../contract/index.ts'
import { endpoint, partnerOf } from '../transport/nats/endpoint.ts'
import { AccountStatusService } from './account-status-service.ts'
import type { AccountStatusTables } from './account-status-tables.ts'
import { accountStatusMigration } from './account-status-migration.ts'
import { Dormancy, dormancy_job_kind } from './dormancy.ts'
import { AccountClosure } from './account-closure.ts'
import { hold_expiry_job_kind, LegalHolds } from './legal-hold-service.ts'
import { UnclaimedFunds } from './unclaimed-funds-service.ts'
import { holdAccountsOnScreening } from './screening-holds.ts'

/** What the module builds: its members of the bank's Services. */
export interface AccountStatusServices {
  /** Accounts' statuses: freeze, unfreeze, block, reactivate, and their history. */
  accountStatus: AccountStatusService
  /** The daily job that makes accounts without customer activity dormant. */
  dormancy: Dormancy
  /** Legal holds: placed and released by operators (dual control above the threshold). */
  legalHolds: LegalHolds
  /** Closing accounts: obstacles, the balance's payout, what is cancelled with it. */
  accountClosure: AccountClosure
  /** What came back for closed accounts, kept by the bank until an operator pays it out. */
  unclaimedFunds: UnclaimedFunds
}

const operator = { kind: 'operator' } as const

// An account's status (RULINGS "Account lifecycle"): the changes partners and operators make,
// under the account's lock and through the ledger's door, which refuses debits (and, blocked,
// credits) by it.
export const accountStatusModule: Module<AccountStatusServices, AccountStatusTables> = {
  name: 'account-status',
  needs: ['ledger', 'events', 'jobs', 'audit', 'cards', 'debit', 'screening'],
  reads: {
    transactions: 'a read model: the dormancy job looks for each account\'s latest customer ' +
      'transaction by the ledger\'s own index of an account\'s rows',
    accounts: 'its status column: the ledger writes it under the account\'s lock, this module ' +
      'reads it with the account\'s owner to answer and to decide a change',
    bulk_payments: 'a read model: closing an account counts its verified bulk batches not ' +
      'yet completed (pending transactions whose refunds may still come back to it)',
    legal_holds: 'the ledger\'s rows of the holds it keeps in an account\'s held money: this ' +
      'module decides who places and releases them, through the ledger\'s functions',
  },
  services: (s, { db, clock, config }) => {
    const accountStatus = new AccountStatusService(db, s.ledgerWriter, clock)
    holdAccountsOnScreening(s.screeningReviews, accountStatus, clock)
    const cancels = {
      cards: (trx: Kysely<Database>, id: string) => s.cards.cancelAllOf(trx, id),
      debitOrders: (trx: Kysely<Database>, id: string, reason: string) =>
        s.debit.cancelAllInto(trx, id, reason),
      collectionsUnderWay: (trx: Kysely<Database>, id: string) =>
        s.debit.lockCollectionsInto(trx, id),
      mandates: (trx: Kysely<Database>, entityId: string, reason: string) =>
        s.mandates.cancelAllOf(trx, entityId, reason),
    }
    return { accountStatus,
      dormancy: new Dormancy(db, accountStatus, config.dormantAfterDays, clock, s.jobRunner),
      legalHolds: new LegalHolds(db, s.ledgerWriter, s.dualControl, clock, s.jobRunner),
      accountClosure: new AccountClosure(db, s.ledgerWriter, accountStatus, cancels, clock),
      unclaimedFunds: new UnclaimedFunds(db, s.ledgerWriter, s.dualControl) }
  },
  migrations: { '0041_account_status': accountStatusMigration },
  jobKinds: [dormancy_job_kind, hold_expiry_job_kind],
  endpoints: (s) => {
    const partner = (c: Parameters<typeof partnerOf>[0]) =>
      ({ kind: 'partner', partnerId: partnerOf(c) }) as const
    const closer = (c: Parameters<typeof partnerOf>[0] & { caller: { credentialId: string } }) =>
      ({ ...partner(c), credentialId: c.caller.credentialId })
    const bank = (c: { caller: { credentialId: string } }) =>
      ({ ...operator, credentialId: c.caller.credentialId })
    const ops = contract.accountStatusOperators
    return [
      endpoint(contract.accountStatus.status, (r, c) =>
        s.accountStatus.status(partner(c), r.account_id)),
      endpoint(contract.accountStatus.freeze, (r, c) =>
        s.accountStatus.change(partner(c), r.account_id, 'freeze', r.reason)),
      endpoint(contract.accountStatus.unfreeze, (r, c) =>
        s.accountStatus.change(partner(c), r.account_id, 'unfreeze', r.reason)),
      endpoint(ops.accountStatus, (r) => s.accountStatus.status(operator, r.account_id)),
      endpoint(ops.accountFreeze, (r) =>
        s.accountStatus.change(operator, r.account_id, 'freeze', r.reason)),
      endpoint(ops.accountUnfreeze, (r) =>
        s.accountStatus.change(operator, r.account_id, 'unfreeze', r.reason)),
      endpoint(ops.accountBlock, (r) =>
        s.accountStatus.change(operator, r.account_id, 'block', r.reason)),
      endpoint(ops.accountReactivate, (r) =>
        s.accountStatus.change(operator, r.account_id, 'reactivate', r.reason)),
      endpoint(contract.accountStatus.close, (r, c) => s.accountClosure.close(closer(c), r)),
      endpoint(ops.accountClose, (r, c) => s.accountClosure.close(bank(c), r)),
      endpoint(ops.holdPlace, (r, c) => s.legalHolds.place(c.caller, r)),
      endpoint(ops.holdRelease, (r, c) => s.legalHolds.release(c.caller, r)),
      endpoint(ops.holds, (r) => s.legalHolds.list(r.account_id, r.all ?? false)),
      endpoint(ops.unclaimed, (r) => s.unclaimedFunds.list(r.account_id)),
      endpoint(ops.unclaimedPay, (r, c) => s.unclaimedFunds.pay(c.caller, r)),
    ]
  },
}
