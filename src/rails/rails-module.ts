import type { Module } from '../module.ts'
import type { Rail } from './rail.ts'
import { SimulatedRail } from './simulated-rail.ts'
import type { DebitRail } from './debit-rail.ts'
import { SimulatedDebitRail } from './simulated-debit-rail.ts'
import type { RailTables } from './rail-tables.ts'
import { simulatedRailMigrations } from './simulated-rail-migration.ts'
import { simulatedDebitRailMigration } from './debit-rail-migration.ts'

/** What the module builds: its members of the bank's Services. */
export interface RailServices {
  /** The payout rail (EFT and RTC to other banks); simulated until a real one comes. */
  rail: Rail
  /**
   * The debtors' banks: mandate authentication, collections, disputes (simulated until a real
   * one is given).
   */
  debitRail: DebitRail
}

// The rails and their simulated implementations (the simulated rails keep tables of their own).
export const railsModule: Module<RailServices, RailTables> = {
  name: 'rails',
  services: (_s, { db, clock }) => ({
    rail: new SimulatedRail(db, clock),
    debitRail: new SimulatedDebitRail(db, clock),
  }),
  migrations: {
    ...simulatedRailMigrations,
    '0011_simulated_debit_rail': simulatedDebitRailMigration,
  },
}
