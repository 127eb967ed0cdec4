import { Gauge, Histogram } from 'prom-client'
import type { Kysely } from 'kysely'
import { bankNow, type Clock } from '../clock.ts'
import type { BankMetrics } from '../metrics/bank-metrics.ts'
import type { Database } from '../schema.ts'

// Sanctions screening's metrics: how long a screening takes (each name against the index,
// the version check included), and the reviews waiting for an operator (how many, and how
// long the oldest has waited on the bank's clock), read from their table when scraped.

export interface ScreeningTiming {
  observe(seconds: number): void
}

export function screeningMetrics(metrics: BankMetrics, db: Kysely<Database>,
    clock: Clock): ScreeningTiming {
  const existing = metrics.registry.getSingleMetric('bank_screening_seconds')
  if (existing) return existing as Histogram
  const read = () => db.selectFrom('screening_reviews')
    .select([(eb) => eb.fn.countAll<string>().as('n'),
      (eb) => eb.fn.min('opened_at').as('oldest')])
    .where('status', 'in', ['open', 'clear_pending']).executeTakeFirstOrThrow()
  new Gauge({
    name: 'bank_screening_reviews_undecided',
    help: 'Screening reviews waiting for an operator (open or waiting for a second operator).',
    registers: [metrics.registry],
    async collect() {
      await metrics.tolerant(this, async () => this.set(Number((await read()).n)))
    },
  })
  new Gauge({
    name: 'bank_screening_oldest_undecided_review_age_seconds',
    help: "How long the oldest undecided screening review has waited, on the bank's clock " +
      '(0 when none is).',
    registers: [metrics.registry],
    async collect() {
      await metrics.tolerant(this, async () => {
        const oldest = (await read()).oldest as Date | string | null
        this.set(oldest === null ? 0
          : Math.max(0, (bankNow(clock).getTime() - new Date(oldest).getTime()) / 1000))
      })
    },
  })
  return new Histogram({
    name: 'bank_screening_seconds',
    help: 'How long screening one name against the sanctions lists took (the index, and the ' +
      'check of which lists are active).',
    buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25, 1],
    registers: [metrics.registry],
  })
}
