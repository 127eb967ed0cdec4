import type { Module } from '../module.ts'
import type { Rail } from './rail.ts'
import { SimulatedRail } from './simulated-rail.ts'
import type { DebitRail } from './debit-rail.ts'
import { SimulatedDebitRail } from './simulated-debit-rail.ts'
import type { RailTables } from './rail-tables.ts'
import { IsoRail } from './iso-rail.ts'
import { RailFolder } from './rail-folder.ts'
import { ClearingHouse } from './clearing-house/clearing-house.ts'
import { ClearingHouseSimulator } from './clearing-house/simulator.ts'
import { HttpGateway, SimulatorGateway } from './rtc-gateway.ts'
import { readSftpTarget, SftpCarrier } from './sftp-carrier.ts'
import { railMessagesMigration, simulatedRailMigrations } from './simulated-rail-migration.ts'
import { simulatedDebitRailMigration } from './debit-rail-migration.ts'
import { railOpsIndexesMigration } from './rail-ops-migration.ts'
import { RailsOps } from './rails-ops.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'

/** What the module builds: its members of the bank's Services. */
export interface RailServices {
  /** Returns recorded by the simulated rail of earlier versions, booked until none is left. */
  rail: Rail
  /** The ISO 20022 rail over files: EFT clearing files out, status reports and returns in. */
  isoRail: IsoRail
  /** The sandbox's clearing house answering those files; undefined in production. */
  clearingHouse: ClearingHouseSimulator | undefined
  /**
   * The debtors' banks: mandate authentication, collections, disputes (simulated until a real
   * one is given).
   */
  debitRail: DebitRail
  /** What operators see of the ISO rail: messages, refusals, unanswered payouts (ops.rails.*). */
  railsOps: RailsOps
}

// The rails and their simulated implementations (the simulated rails keep tables of their own).
export const railsModule: Module<RailServices, RailTables> = {
  name: 'rails',
  services: (_s, { db, clock, config, log }) => {
    const folder = new RailFolder(config.rail.dir)
    const house = new ClearingHouse({ settlement_account_id: config.rail.settlementAccount,
      bank_branch_code: config.rail.branchCode })
    const clearingHouse = config.rail.simulator
      ? new ClearingHouseSimulator(folder, house, clock, log) : undefined
    const { gatewayUrl, gatewayTimeoutMs } = config.rail
    const gateway = gatewayUrl ? new HttpGateway(gatewayUrl, gatewayTimeoutMs, log)
      : clearingHouse ? new SimulatorGateway(clearingHouse) : undefined
    // The clearing house's SFTP server (BANK_RAIL_SFTP_URL): the bank's key is read now.
    const carrier = config.rail.sftp
      ? new SftpCarrier(folder, readSftpTarget(config.rail.sftp), log) : undefined
    return {
      rail: new SimulatedRail(db, clock),
      isoRail: new IsoRail(db, folder, clock, config.rail.branchCode, log, clearingHouse, gateway,
        carrier),
      clearingHouse,
      debitRail: new SimulatedDebitRail(db, clock),
      railsOps: new RailsOps(db, clock, folder, config.rail.branchCode,
        config.railUnansweredAfterMinutes),
    }
  },
  migrations: {
    ...simulatedRailMigrations,
    '0011_simulated_debit_rail': simulatedDebitRailMigration,
    '0036_rail_messages': railMessagesMigration,
    '0039_rail_ops_indexes': railOpsIndexesMigration,
  },
  reads: {
    transactions: 'the operators\' list of unanswered payouts names each one\'s partner and ' +
      'account and filters by partner: a join on the transaction\'s primary key',
  },
  endpoints: (s) => [
    endpoint(contract.rails.messages, (r) => s.railsOps.messages(r)),
    endpoint(contract.rails.message, (r) => s.railsOps.message(r)),
    endpoint(contract.rails.refusals, (r) => s.railsOps.refusals(r)),
    endpoint(contract.rails.unanswered, (r) => s.railsOps.unanswered(r)),
  ],
}
