import type { Module } from '../module.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'
import { rescreen_job_kind, ScreeningService } from './screening-service.ts'
import { screeningMigration } from './screening-migration.ts'
import type { ScreeningTables } from './screening-tables.ts'

/** What the module builds: its members of the bank's Services. */
export interface ScreeningServices {
  /** The sanctions lists' loads and `screen`, for onboarding and payments to call. */
  screening: ScreeningService
}

// Sanctions screening (RULINGS, "Financial crime controls"): the UN Security Council's
// consolidated list and OFAC's SDN list loaded from their XML files as versions, and names
// screened against an in-memory index of the active ones (docs/operators/financial-crime.md).
export const screeningModule: Module<ScreeningServices, ScreeningTables> = {
  name: 'screening',
  needs: ['jobs'],
  services: (s, { db, clock, config, log }) => {
    const screening = new ScreeningService(db, clock, config.screening, s.jobRunner, log)
    // Built at start so that the first screening does not wait for it; a failure is logged
    // and the first screening builds it instead.
    screening.warm().catch((error: unknown) =>
      log.warn({ err: error }, 'screening: index not built at start'))
    return { screening }
  },
  migrations: { '0051_screening': screeningMigration },
  jobKinds: [rescreen_job_kind],
  endpoints: (s) => [
    endpoint(contract.screening.screeningUpload,
      (r, context) => s.screening.receivePart(r, context.caller)),
    endpoint(contract.screening.screeningLists, async (r) => ({
      review_score: s.screening.settings.reviewScore,
      confirm_score: s.screening.settings.confirmScore,
      loads: await s.screening.lists(r.limit ?? 50),
    })),
    endpoint(contract.screening.screeningCheck, async (r) => {
      const threshold = r.threshold ?? s.screening.settings.reviewScore
      const hits = await s.screening.screen({ name: r.name, kind: r.kind ?? 'individual',
        dateOfBirth: r.date_of_birth, idNumber: r.id_number }, threshold)
      const lists = (await s.screening.activeLists()).map((l) =>
        ({ source: l.source, load_id: l.id, list_date: l.list_date }))
      return { threshold, lists, hits }
    }),
  ],
}
