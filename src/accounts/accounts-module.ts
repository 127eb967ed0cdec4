import type { Module } from '../module.ts'

// Accounts: numbers and owners. Its table's type is the ledger's (ledger/ledger-tables.ts),
// which keeps the balances in it; the table came with 0001_foundation (operators).
export const accountsModule: Module = {
  name: 'accounts',
}
