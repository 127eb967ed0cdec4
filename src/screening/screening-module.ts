import type { Module } from '../module.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'
import { rescreen_job_kind, ScreeningService } from './screening-service.ts'
import { screeningMigration } from './screening-migration.ts'
import { screeningReviewMigration } from './screening-review-migration.ts'
import { ScreeningReviews } from './screening-reviews.ts'
import { Rescreening } from './rescreening.ts'
import { screeningMetrics } from './screening-metrics.ts'
import type { ScreeningTables } from './screening-tables.ts'

/** What the module builds: its members of the bank's Services. */
export interface ScreeningServices {
  /** The sanctions lists' loads and `screen`, for onboarding and payments to call. */
  screening: ScreeningService
  /** Hits held for an operator's decision; what onboarding and payments screen through. */
  screeningReviews: ScreeningReviews
}

// Sanctions screening (RULINGS, "Financial crime controls"): the UN Security Council's
// consolidated list and OFAC's SDN list loaded from their XML files as versions, and names
// screened against an in-memory index of the active ones (docs/operators/financial-crime.md).
export const screeningModule: Module<ScreeningServices, ScreeningTables> = {
  name: 'screening',
  needs: ['jobs'],
  reads: {
    entities: 'a read model: the re-screening after a list load reads every entity\'s names, ' +
      'page by page',
    users: 'a read model: the re-screening after a list load reads every user\'s names, ' +
      'page by page',
  },
  services: (s, { db, clock, config, log }) => {
    const screening = new ScreeningService(db, clock, config.screening, s.jobRunner, log,
      screeningMetrics(s.metrics, db, clock))
    // Built at start so that the first screening does not wait for it; a failure is logged
    // and the first screening builds it instead.
    screening.warm().catch((error: unknown) =>
      log.warn({ err: error }, 'screening: index not built at start'))
    const screeningReviews = new ScreeningReviews(db, clock, screening)
    new Rescreening(db, screeningReviews, s.jobRunner, log)
    return { screening, screeningReviews }
  },
  migrations: { '0051_screening': screeningMigration,
    '0052_screening_reviews': screeningReviewMigration },
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
      return { threshold, lists, hits: [...hits] }
    }),
    endpoint(contract.screening.screeningReviews, (r) => s.screeningReviews.list({ ...r,
      limit: r.limit ?? 50 })),
    endpoint(contract.screening.screeningReview, (r) => s.screeningReviews.get(r.review_id)),
    endpoint(contract.screening.screeningReviewDecide, (r, context) =>
      s.screeningReviews.decide(context.caller, r.review_id, r.decision, r.reason)),
  ],
}
