import type { Module } from '../module.ts'
import { AccountService } from './account-service.ts'
import { contract } from '../contract/index.ts'
import { endpoint, partnerOf } from '../transport/nats/endpoint.ts'

/** What the module builds: its members of the bank's Services. */
export interface AccountServices {
  accounts: AccountService
}

// Accounts: numbers and owners. Its table's type is the ledger's (ledger/ledger-tables.ts),
// which keeps the balances in it; the table came with 0001_foundation (operators).
export const accountsModule: Module<AccountServices, object> = {
  name: 'accounts',
  reads: {
    accounts: 'its own rows: numbers and owners are its columns, the balances are the ledger\'s, ' +
      'whose LedgerTables type the table',
  },
  needs: ['entities'],
  services: (s, { db, clock, config }) => ({
    accounts: new AccountService(db, clock, s.entities,
      { first: config.accountNumberFirst, last: config.accountNumberLast }, config.defaultCountry),
  }),
  endpoints: (s) => [
    endpoint(contract.accounts.create, (r, c) => s.accounts.create(partnerOf(c), r.entity_id)),
    endpoint(contract.accounts.getByEntity, (r, c) => s.accounts.byEntity(partnerOf(c), r.entity_id)),
    endpoint(contract.accounts.getDetails, (r, c) => s.accounts.details(partnerOf(c), r.account_id)),
    endpoint(contract.operators.accountList, (r) => s.accounts.listForOperator(r.entity_id)),
    endpoint(contract.operators.accountShow, (r) => s.accounts.showForOperator(r.account_id)),
  ],
}
