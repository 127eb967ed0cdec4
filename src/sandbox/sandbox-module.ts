import type { Module } from '../module.ts'
import { SandboxService } from './sandbox-service.ts'
import type { SandboxTables } from './sandbox-tables.ts'
import { contract } from '../contract/index.ts'
import { endpoint, partnerOf } from '../transport/nats/endpoint.ts'
import { sandbox_advance_job_kind, sandbox_partner_advance_job_kind } from './sandbox-service.ts'
import { partnerClocksMigration, sandboxMigration } from './sandbox-migration.ts'
import { sandbox_advance_job_limits } from './sandbox-limits.ts'
import { moved_tables, SandboxReset } from './sandbox-reset.ts'

/** What the module builds: its members of the bank's Services. */
export interface SandboxServices {
  /** The sandbox's clock and messages (`ops.sandbox.*`); refuses everything in production. */
  sandbox: SandboxService
  /** A partner's sandbox reset (`svc.sandbox.<partner_id>.reset`, `ops.sandbox.reset`). */
  sandboxReset: SandboxReset
}

// The sandbox: a movable clock and test helpers.
export const sandboxModule: Module<SandboxServices, SandboxTables> = {
  name: 'sandbox',
  needs: ['jobs', 'notify', 'partners', 'accounts', 'ledger'],
  // A reset moves every row of a partner to its archive in one transaction (sandbox-reset.ts):
  // no module's service moves its rows to another partner, and one transaction must.
  reads: {
    ...Object.fromEntries(moved_tables.map((move) => [move.table,
      "a sandbox reset moves the partner's rows to its archive partner, in one transaction"])),
    partners: 'a sandbox reset locks the partner, and makes the archive partner in the ' +
      'transaction that moves the rows',
    entities: "a sandbox reset copies the root entity for the archive and reads its review",
    jobs: 'a sandbox reset runs the queued jobs of the retired data by the bank\'s clock, and ' +
      'is refused while an advance runs',
  },
  services: (s, { db, given }) => ({
    sandbox: new SandboxService(given.sandboxClock, s.jobRunner, s.simulatedNotifier,
      s.partners),
    sandboxReset: new SandboxReset({ db, clock: given.sandboxClock,
      openAccount: (trx, entity, kind) => s.accounts.open(trx, entity, kind),
      forgetAccounts: (ids) => s.ledgerWriter.known.forget(ids) }),
  }),
  migrations: {
    '0009_sandbox': sandboxMigration,
    '0045_sandbox_partner_clocks': partnerClocksMigration,
  },
  limits: { advance_job: sandbox_advance_job_limits },
  endpoints: (s) => [
    endpoint(contract.sandbox.clock, (r) => s.sandbox.now(r)),
    endpoint(contract.sandbox.partnerClock, (_r, c) => s.sandbox.partnerNow(partnerOf(c))),
    endpoint(contract.sandbox.partnerAdvance, (r, c) => s.sandbox.advancePartnerNow(partnerOf(c),
      r)),
    endpoint(contract.sandbox.advance, (r) => (r.detach ? s.sandbox.start(r) : s.sandbox.advance(r))),
    endpoint(contract.sandbox.messages, (r) => s.sandbox.messages(r)),
    endpoint(contract.sandbox.partnerReset, (r, c) => s.sandboxReset.partnerReset(partnerOf(c),
      r)),
    endpoint(contract.sandbox.reset, (r) => s.sandboxReset.reset(r.partner_id)),
  ],
  jobKinds: [sandbox_advance_job_kind, sandbox_partner_advance_job_kind],
}
