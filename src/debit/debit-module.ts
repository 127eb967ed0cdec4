import type { Module } from '../module.ts'
import { takesCredits } from '../ledger/account-status.ts'
import { DebitService } from './debit-service.ts'
import { MandateService } from './mandate-service.ts'
import { DebitCollection } from './debit-collection.ts'
import { railAuthenticator } from './mandate-rail-authenticator.ts'
import type { DebitTables } from './debit-tables.ts'
import { contract } from '../contract/index.ts'
import { endpoint, partnerOf, subjectEntity } from '../transport/nats/endpoint.ts'
import { mandate_authentication_job_kind } from './mandate-service.ts'
import { debit_run_job_kind } from './debit-collection.ts'
import { debitOrdersMigration, debitRunIndexesMigration } from './debit-migration.ts'
import { debit_run_job_limits, mandate_authentication_attempts_max, mandate_authentication_job_limits } from './debit-limits.ts'

/** What the module builds: its members of the bank's Services. */
export interface DebitServices {
  /** Mandates (`svc.debit.<entity_id>.mandate.*`) and their authentication jobs. */
  mandates: MandateService
  /** Debit orders (`svc.debit.<entity_id>.create|list|cancel|status`). */
  debit: DebitService
  /**
   * Debit-order collection runs (`debit.collection_run` jobs, one per business day at 00:00
   * SAST).
   */
  debitCollection: DebitCollection
}

// Debit orders: mandates, collection runs, disputes.
export const debitModule: Module<DebitServices, DebitTables> = {
  name: 'debit',
  needs: ['rails', 'jobs', 'accounts', 'ledger'],
  services: (s, { db, clock, config, log, given }) => {
    const { accounts } = s
    const mandates = new MandateService(db, clock, s.jobRunner,
      given.mandateAuthenticator ?? railAuthenticator(s.debitRail))
    // A new order collects into the entity's oldest account that takes payments.
    const debit = new DebitService(db, clock, s.calendar, {
      accountIdsOf: async (entityId) => (await accounts.list(entityId))
        .filter((a) => takesCredits(a.status)).map((a) => a.id),
    })
    const debitCollection = new DebitCollection(db, clock, s.ledgerWriter, s.calendar,
      s.debitRail, s.jobRunner, {
        feeCents: config.debitOrderFeeCents,
        batchMax: config.debitBatchMax,
        schedule: config.debitSchedule,
        sandbox: config.sandbox,
      }, log)
    return { mandates, debit, debitCollection }
  },
  migrations: {
    '0010_debit_orders': debitOrdersMigration,
    '0014_debit_run_indexes': debitRunIndexesMigration,
  },
  limits: {
    mandate_authentication_attempts_max,
    mandate_authentication_job: mandate_authentication_job_limits,
    run_job: debit_run_job_limits,
  },
  endpoints: (s) => [
    endpoint(contract.debit.mandateCreate, (r, c) => s.mandates.create(c.caller, subjectEntity(r, c), r)),
    endpoint(contract.debit.mandateGet, (r, c) => s.mandates.get(subjectEntity(r, c), r.mandate_reference)),
    endpoint(contract.debit.mandateList, (r, c) => s.mandates.list(subjectEntity(r, c), r)),
    endpoint(contract.debit.mandateCancel, (r, c) => s.mandates.cancel(subjectEntity(r, c), r)),
    endpoint(contract.debit.create, (r, c) => s.debit.create(c.caller, subjectEntity(r, c), r)),
    endpoint(contract.debit.list, (r, c) => s.debit.list(subjectEntity(r, c), r)),
    endpoint(contract.debit.cancel, (r, c) => s.debit.cancel(partnerOf(c), subjectEntity(r, c), r)),
    endpoint(contract.debit.status, (r, c) => s.debit.status(partnerOf(c), subjectEntity(r, c), r.debit_order_id)),
    endpoint(contract.debit.operatorList, (r) => s.debit.listForOperator(r)),
    endpoint(contract.debitRuns.run, (r) => (r.detach ? s.debitCollection.start(r.date) : s.debitCollection.runNow(r.date))),
    endpoint(contract.debitRuns.dispute, (r) => s.debitCollection.dispute(r.debit_order_id)),
  ],
  jobKinds: [mandate_authentication_job_kind, debit_run_job_kind],
}
