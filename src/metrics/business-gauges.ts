import { Gauge, type Registry } from 'prom-client'

// The bank's business figures as Prometheus gauges: money held, pending EFTs, the last
// clearing cycle, the last ledger verify, the review queues and each partner's webhook
// failure rate. They are read from the database when scraped, by the operators' summary
// (src/summary: indexed aggregates, milliseconds on any ledger), once for all the gauges of a
// scrape (scrapes at the same time share one read), within `business_read_timeout_ms`. A
// read that fails or times out (the database away) fails no scrape: the business gauges are
// then absent and `bank_business_metrics_up` is 0, while the process's own metrics are
// served as ever.

/** The figures the summary reads for the gauges; ages in seconds, amounts in cents. */
export interface BusinessFigures {
  held_cents: number
  pending_eft: { count: number; amount_cents: number; oldest_age_seconds: number }
  /** The newest clearing cycle that ended (done or dead), with its report when it has one. */
  clearing_last: {
    ended_age_seconds: number
    counts: { settled: number; failed: number; invalid: number; returned: number } | undefined
  } | undefined
  /** The last `ledger verify`, clean or not; undefined when none has run. */
  ledger_verify: { ok: boolean; problems: number; age_seconds: number } | undefined
  queues: Record<'kyc' | 'kyb' | 'approvals', { count: number; oldest_age_seconds: number }>
  /** Partners with deliveries that ended among their newest ones, and the share that failed. */
  webhook_failure_rate: Array<{ partner_id: string; rate: number }>
}

export type BusinessSource = () => Promise<BusinessFigures>

/** A read that takes longer is given up: the scrape answers without the business figures. */
export const business_read_timeout_ms = 5_000

/** Reads the figures once for every gauge of a scrape; never rejects (undefined: not read). */
export class BusinessReader {
  private source: BusinessSource | undefined
  private reading: Promise<BusinessFigures | undefined> | undefined
  /** Told when a read fails (the metrics server logs it). */
  onError: ((error: unknown) => void) | undefined

  readFrom(source: BusinessSource): void {
    this.source = source
  }

  figures(): Promise<BusinessFigures | undefined> {
    const source = this.source
    if (!source) return Promise.resolve(undefined)
    // Scrapes at once (several Prometheus servers, every gauge of one scrape) share a read.
    if (this.reading) return this.reading
    const reading = withTimeout(source(), business_read_timeout_ms)
      .catch((error: unknown) => {
        this.onError?.(error)
        return undefined
      })
      .finally(() => {
        if (this.reading === reading) this.reading = undefined
      })
    this.reading = reading
    return reading
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the business figures took over ${ms} ms`)), ms)
    timer.unref()
  })
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer))
}

type Collect = (gauge: Gauge<string>, figures: BusinessFigures) => void

/**
 * Empties a gauge: no samples until set again (prom-client's reset() leaves a gauge without
 * labels at 0, which would be read as a figure).
 */
export function emptied(gauge: Gauge<string>): void {
  gauge.reset()
  if ((gauge as unknown as { labelNames: string[] }).labelNames.length === 0) gauge.remove()
}

/** The business gauges, in `registry`, each set from the scrape's one read. */
export function businessGauges(registry: Registry, reader: BusinessReader): void {
  const gauge = (name: string, help: string, labelNames: string[], collect: Collect) =>
    new Gauge({
      name, help, labelNames, registers: [registry],
      async collect() {
        emptied(this)
        const figures = await reader.figures()
        if (figures) collect(this, figures)
      },
    })
  new Gauge({
    name: 'bank_business_metrics_up',
    help: 'Whether this scrape read the business figures (1) or the database did not answer (0).',
    registers: [registry],
    async collect() {
      this.set((await reader.figures()) ? 1 : 0)
    },
  })
  moneyAndPayments(gauge)
  clearingAndVerify(gauge)
  queuesAndWebhooks(gauge)
}

type Define = (name: string, help: string, labelNames: string[], collect: Collect) => Gauge

function moneyAndPayments(gauge: Define): void {
  gauge('bank_money_held_cents', 'Money held by pending payments, card authorizations and ' +
    'legal holds, in every account together (cents).', [], (g, f) => g.set(f.held_cents))
  gauge('bank_pending_eft_count', 'EFT payouts taken and waiting for a clearing cycle.', [],
    (g, f) => g.set(f.pending_eft.count))
  gauge('bank_pending_eft_amount_cents', 'The amount of the pending EFT payouts (cents).', [],
    (g, f) => g.set(f.pending_eft.amount_cents))
  gauge('bank_pending_eft_oldest_age_seconds', 'How long the oldest pending EFT has waited, on ' +
    "the bank's clock (0 when none waits).", [], (g, f) => g.set(f.pending_eft.oldest_age_seconds))
}

function clearingAndVerify(gauge: Define): void {
  gauge('bank_clearing_last_cycle_payments', 'Payments of the newest clearing cycle that ended, ' +
    'by outcome (settled, failed, invalid, returned).', ['outcome'], (g, f) => {
    for (const [outcome, n] of Object.entries(f.clearing_last?.counts ?? {})) g.set({ outcome }, n)
  })
  gauge('bank_clearing_last_cycle_age_seconds', 'Time since the newest clearing cycle ended, on ' +
    "the bank's clock (absent before the first).", [], (g, f) => {
    if (f.clearing_last) g.set(f.clearing_last.ended_age_seconds)
  })
  gauge('bank_ledger_verify_ok', 'Whether the last ledger verify was clean (1) or found ' +
    'problems (0); absent before the first.', [], (g, f) => {
    if (f.ledger_verify) g.set(f.ledger_verify.ok ? 1 : 0)
  })
  gauge('bank_ledger_verify_problems', 'Problems the last ledger verify found.', [], (g, f) => {
    if (f.ledger_verify) g.set(f.ledger_verify.problems)
  })
  gauge('bank_ledger_verify_age_seconds', 'Seconds since the last ledger verify ended, clean or ' +
    'not (+Inf when none has run).', [], (g, f) => g.set(f.ledger_verify?.age_seconds ?? Infinity))
}

function queuesAndWebhooks(gauge: Define): void {
  gauge('bank_review_queue', 'Waiting for an operator: KYC submissions (kyc), KYB submissions ' +
    '(kyb), deposits, reversals and releases above the dual-control threshold (approvals).',
    ['queue'], (g, f) => {
    for (const [queue, q] of Object.entries(f.queues)) g.set({ queue }, q.count)
  })
  gauge('bank_review_queue_oldest_age_seconds', 'How long the oldest item of each review queue ' +
    "has waited, on the bank's clock (0 when empty).", ['queue'], (g, f) => {
    for (const [queue, q] of Object.entries(f.queues)) g.set({ queue }, q.oldest_age_seconds)
  })
  gauge('bank_webhook_failure_rate', "Failed / (delivered + failed) over each partner's newest " +
    'webhook deliveries, for partners with any that ended.', ['partner_id'], (g, f) => {
    for (const p of f.webhook_failure_rate) g.set({ partner_id: p.partner_id }, p.rate)
  })
}
