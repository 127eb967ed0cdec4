import { Gauge } from 'prom-client'
import type { Kysely } from 'kysely'
import { bankNow, type Clock } from '../clock.ts'
import type { BankMetrics } from '../metrics/bank-metrics.ts'
import type { Database } from '../schema.ts'

// Transaction monitoring's gauges, read from its tables when scraped (an index of the open
// alerts): how many alerts are open, and how long the oldest has waited on the bank's clock.

export function monitoringGauges(metrics: BankMetrics, db: Kysely<Database>, clock: Clock): void {
  if (metrics.registry.getSingleMetric('bank_monitoring_alerts_open')) return
  const read = () => db.selectFrom('monitoring_alerts')
    .select([(eb) => eb.fn.countAll<string>().as('n'),
      (eb) => eb.fn.min('opened_at').as('oldest')])
    .where('status', '=', 'open').executeTakeFirstOrThrow()
  new Gauge({
    name: 'bank_monitoring_alerts_open',
    help: 'Transaction-monitoring alerts open (not yet decided with their case).',
    registers: [metrics.registry],
    async collect() {
      await metrics.tolerant(this, async () => this.set(Number((await read()).n)))
    },
  })
  new Gauge({
    name: 'bank_monitoring_oldest_open_alert_age_seconds',
    help: "How long the oldest open monitoring alert has waited, on the bank's clock (0 when " +
      'none is open).',
    registers: [metrics.registry],
    async collect() {
      await metrics.tolerant(this, async () => {
        const oldest = (await read()).oldest as Date | string | null
        const age = oldest === null ? 0
          : (bankNow(clock).getTime() - new Date(oldest).getTime()) / 1000
        this.set(Math.max(0, age))
      })
    },
  })
}
