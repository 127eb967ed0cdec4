import type { Module } from '../module.ts'
import { transferMigrations } from './transfer-migrations.ts'

// Transfers: EFT/RTC payouts, settlement, clearing, payment advices. Its `transfer_keys`
// came with 0002_ledger (ledger).
export const transfersModule: Module = {
  name: 'transfers',
  migrations: {
    ...transferMigrations,
  },
}
