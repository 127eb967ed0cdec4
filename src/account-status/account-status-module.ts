import type { Module } from '../module.ts'
import { contract } from '../contract/index.ts'
import { endpoint, partnerOf } from '../transport/nats/endpoint.ts'
import { AccountStatusService } from './account-status-service.ts'
import type { AccountStatusTables } from './account-status-tables.ts'
import { accountStatusMigration } from './account-status-migration.ts'
import { Dormancy, dormancy_job_kind } from './dormancy.ts'

/** What the module builds: its members of the bank's Services. */
export interface AccountStatusServices {
  /** Accounts' statuses: freeze, unfreeze, block, reactivate, and their history. */
  accountStatus: AccountStatusService
  /** The daily job that makes accounts without customer activity dormant. */
  dormancy: Dormancy
}

const operator = { kind: 'operator' } as const

// An account's status (RULINGS "Account lifecycle"): the changes partners and operators make,
// under the account's lock and through the ledger's door, which refuses debits (and, blocked,
// credits) by it.
export const accountStatusModule: Module<AccountStatusServices, AccountStatusTables> = {
  name: 'account-status',
  needs: ['ledger', 'events', 'jobs'],
  reads: {
    transactions: 'a read model: the dormancy job looks for each account\'s latest customer ' +
      'transaction by the ledger\'s own index of an account\'s rows',
    accounts: 'its status column: the ledger writes it under the account\'s lock, this module ' +
      'reads it with the account\'s owner to answer and to decide a change',
  },
  services: (s, { db, clock, config }) => {
    const accountStatus = new AccountStatusService(db, s.ledgerWriter, clock)
    return { accountStatus,
      dormancy: new Dormancy(db, accountStatus, config.dormantAfterDays, clock, s.jobRunner) }
  },
  migrations: { '0041_account_status': accountStatusMigration },
  jobKinds: [dormancy_job_kind],
  endpoints: (s) => {
    const partner = (c: Parameters<typeof partnerOf>[0]) =>
      ({ kind: 'partner', partnerId: partnerOf(c) }) as const
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
    ]
  },
}
