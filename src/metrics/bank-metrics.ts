import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { sql, type Kysely } from 'kysely'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { Database } from '../schema.ts'
import type { Logger } from '../logger.ts'
import { BusinessReader, businessGauges, emptied, type BusinessSource } from './business-gauges.ts'
import { checkReadiness, readinessText, type ReadinessCheck } from './readiness.ts'

// Prometheus metrics of one instance, with prom-client (the maintained Prometheus client
// for Node), in a registry of the bank's own. Counted where it happens: requests (per
// endpoint and reply code, with latency), ledger batches (size and commit time). Read from
// the database when scraped, so every instance reports the same shared truth: job queue
// depth and age by kind, webhook deliveries by state, and the business figures
// (business-gauges.ts). A read that fails leaves its gauges out of that scrape, never fails
// it. Served as text on BANK_METRICS_PORT (off by default) at /metrics, beside /healthz and
// /readyz (readiness.ts).

export class BankMetrics {
  readonly registry = new Registry()
  private readonly requests: Counter<'endpoint' | 'code'>
  private readonly latency: Histogram<'endpoint'>
  private readonly batchSize: Histogram<'committer'>
  private readonly batchSeconds: Histogram<'committer' | 'outcome'>
  private readonly batchStarts: Counter<'start'>
  private readonly cardGroupStarts: Counter<'start'>
  private db: Kysely<Database> | undefined
  private readonly business = new BusinessReader()
  /** Told when a scrape's database read fails (the metrics server logs it). */
  private readFailed: ((error: unknown) => void) | undefined

  private processMetrics = false

  constructor() {
    this.requests = new Counter({
      name: 'bank_requests_total',
      help: 'Requests answered, by endpoint and reply code (200, or the error code).',
      labelNames: ['endpoint', 'code'],
      registers: [this.registry],
    })
    this.latency = new Histogram({
      name: 'bank_request_duration_seconds',
      help: 'Time from receiving a request to its reply, by endpoint.',
      labelNames: ['endpoint'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [this.registry],
    })
    this.batchSize = new Histogram({
      name: 'bank_ledger_batch_size',
      help: 'Payments written together in one ledger transaction (group commit), by committer.',
      labelNames: ['committer'],
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
      registers: [this.registry],
    })
    this.batchSeconds = new Histogram({
      name: 'bank_ledger_batch_seconds',
      help: 'Time to write one ledger batch, by committer and outcome.',
      labelNames: ['committer', 'outcome'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [this.registry],
    })
    this.batchStarts = new Counter({
      name: 'bank_ledger_batch_starts_total',
      help:
        'Payment (reserve) batches by how they read their accounts: remembered (from the states ' +
        'this instance last wrote, checked by the write), locked (read under lock first); stale ' +
          'counts the remembered ones found changed and written again under lock.',
      labelNames: ['start'],
      registers: [this.registry],
    })
    this.cardGroupStarts = new Counter({
      name: 'bank_card_authorization_groups_total',
      help:
        'Card authorization groups by how they read their cards and accounts: remembered ' +
        '(from what this instance last wrote, checked by the write), locked (locked and read ' +
        'first); stale counts the remembered ones found changed and decided again under lock.',
      labelNames: ['start'],
      registers: [this.registry],
    })
    const metrics = this
    new Gauge({
      name: 'bank_jobs',
      help: 'Background jobs by kind and state (queued, running, dead), across every instance.',
      labelNames: ['kind', 'state'],
      registers: [this.registry],
      async collect() {
        await metrics.tolerant(this, async () => {
          for (const row of await metrics.jobCounts()) this.set({ kind: row.kind,
            state: row.state }, Number(row.n))
        })
      },
    })
    new Gauge({
      name: 'bank_jobs_oldest_due_age_seconds',
      help: 'How long the oldest due, queued job of each kind has waited past its due time.',
      labelNames: ['kind'],
      registers: [this.registry],
      async collect() {
        await metrics.tolerant(this, async () => {
          for (const row of await metrics.oldestDue()) this.set({ kind: row.kind },
            Math.max(0, Number(row.age)))
        })
      },
    })
    new Gauge({
      name: 'bank_webhook_deliveries',
      help: 'Webhook deliveries by state (pending, delivered, failed), across every instance.',
      labelNames: ['state'],
      registers: [this.registry],
      async collect() {
        await metrics.tolerant(this, async () => {
          for (const row of await metrics.deliveryCounts()) this.set({ state: row.state },
            Number(row.n))
        })
      },
    })
    new Gauge({
      name: 'bank_webhook_endpoints',
      help: "Partners' webhook endpoints the circuit breaker holds, by state (failing, " +
        'backed_off, paused), across every instance; a healthy endpoint is not counted.',
      labelNames: ['state'],
      registers: [this.registry],
      async collect() {
        await metrics.tolerant(this, async () => {
          const counts = { failing: 0, backed_off: 0, paused: 0 }
          for (const row of await metrics.endpointCounts()) counts[row.state] = Number(row.n)
          for (const [state, n] of Object.entries(counts)) this.set({ state }, n)
        })
      },
    })
    this.railGauges()
    businessGauges(this.registry, this.business)
  }

  /**
   * Sets a database-read gauge by `read`, after emptying it. When the database does not
   * answer the gauge stays empty (absent from the scrape) instead of failing the scrape.
   */
  async tolerant(gauge: Gauge<string>, read: () => Promise<void>): Promise<void> {
    gauge.reset()
    try {
      await read()
    } catch (error) {
      emptied(gauge)
      this.readFailed?.(error)
    }
  }

  /**
   * `bank_ready{check}`: each readiness check (readiness.ts) run when scraped, 1 when it
   * passes, so that Prometheus sees what `/readyz` says. Once, when served.
   */
  readinessGauge(checks: Readonly<Record<string, ReadinessCheck>>): void {
    if (this.registry.getSingleMetric('bank_ready')) return
    new Gauge({
      name: 'bank_ready',
      help: 'Whether each readiness check of this instance passes (1) or not (0), as /readyz.',
      labelNames: ['check'],
      registers: [this.registry],
      async collect() {
        this.reset()
        const readiness = await checkReadiness(checks)
        for (const [check, outcome] of Object.entries(readiness.checks)) this.set({ check },
          outcome === 'ok' ? 1 : 0)
      },
    })
  }

  /** The business figures (business-gauges.ts), read by the summary module. */
  readBusinessFrom(source: BusinessSource): void {
    this.business.readFrom(source)
  }

  /** The ISO 20022 rail's figures, read from its tables when scraped. */
  private railGauges(): void {
    const metrics = this
    new Gauge({
      name: 'bank_rail_messages',
      help: 'ISO 20022 messages the bank wrote (out) or applied (in), by direction and kind.',
      labelNames: ['direction', 'kind'],
      registers: [this.registry],
      async collect() {
        await metrics.tolerant(this, async () => {
          for (const row of await metrics.railMessages()) this.set({ direction: row.direction,
            kind: row.kind }, Number(row.n))
        })
      },
    })
    new Gauge({
      name: 'bank_rail_refused_files',
      help: 'Inbound files the bank refused whole (see rail_refusals for the reasons).',
      registers: [this.registry],
      async collect() {
        await metrics.tolerant(this, async () => this.set(await metrics.railRefusals()))
      },
    })
    new Gauge({
      name: 'bank_rail_unanswered_payouts',
      help: 'Payouts sent to the clearing house with no final answer yet, and the age in ' +
        'seconds of the oldest (label age).',
      labelNames: ['measure'],
      registers: [this.registry],
      async collect() {
        await metrics.tolerant(this, async () => {
          const { n, oldest } = await metrics.unanswered()
          this.set({ measure: 'count' }, n)
          this.set({ measure: 'oldest_age_seconds' }, oldest)
        })
      },
    })
  }

  private async railMessages(): Promise<Array<{ direction: string; kind: string; n: string |
      number }>> {
    if (!this.db) return []
    return this.db.selectFrom('rail_messages').select(['direction', 'kind',
      (eb) => eb.fn.countAll<string>().as('n')]).groupBy(['direction', 'kind']).execute()
  }

  private async railRefusals(): Promise<number> {
    if (!this.db) return 0
    const row = await this.db.selectFrom('rail_refusals')
      .select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirst()
    return Number(row?.n ?? 0)
  }

  private async unanswered(): Promise<{ n: number; oldest: number }> {
    if (!this.db) return { n: 0, oldest: 0 }
    const row = await this.db.selectFrom('rail_submissions as s')
      .innerJoin('rail_messages as m', (join) => join.onRef('m.message_id', '=', 's.message_id')
        .on('m.direction', '=', 'out'))
      .select([(eb) => eb.fn.countAll<string>().as('n'),
        (eb) => eb.fn.min('m.created_at').as('oldest')])
      .where((eb) => eb.or([eb('s.status', 'is', null),
        eb('s.status', 'not in', ['ACSC', 'ACCC', 'RJCT'])]))
      .executeTakeFirst()
    const oldest = row?.oldest ? new Date(row.oldest as unknown as string).getTime() : undefined
    return { n: Number(row?.n ?? 0),
      oldest: oldest === undefined ? 0 : Math.max(0, (Date.now() - oldest) / 1000) }
  }

  /** Adds the process's own figures (CPU, memory, event-loop lag, GC); once, when served. */
  includeProcessMetrics(): void {
    if (this.processMetrics) return
    this.processMetrics = true
    collectDefaultMetrics({ register: this.registry, prefix: 'bank_' })
  }

  /** Where a failed read of a scrape is logged (once a read, as a warning). */
  logTo(log: Logger): void {
    this.readFailed = (error) => log.warn({ err: error },
      'metrics: a database read failed; its gauges are left out of this scrape')
    this.business.onError = this.readFailed
  }

  /** The database the scrape-time gauges read. */
  readFrom(db: Kysely<Database>): void {
    this.db = db
  }

  request(endpoint: string, code: number, seconds: number): void {
    this.requests.inc({ endpoint, code: String(code) })
    this.latency.observe({ endpoint }, seconds)
  }

  ledgerBatchStart(start: 'remembered' | 'locked' | 'stale'): void {
    this.batchStarts.inc({ start })
  }

  cardGroupStart(start: 'remembered' | 'locked' | 'stale'): void {
    this.cardGroupStarts.inc({ start })
  }

  ledgerBatch(committer: string, size: number, seconds: number, ok: boolean): void {
    this.batchSize.observe({ committer }, size)
    this.batchSeconds.observe({ committer, outcome: ok ? 'committed' : 'failed' }, seconds)
  }

  private async jobCounts(): Promise<Array<{ kind: string; state: string; n: string | number }>> {
    if (!this.db) return []
    return this.db
      .selectFrom('jobs')
      .select(['kind', 'state', (eb) => eb.fn.countAll<string>().as('n')])
      .where('state', '!=', 'done')
      .groupBy(['kind', 'state'])
      .execute()
  }

  private async oldestDue(): Promise<Array<{ kind: string; age: string | number }>> {
    if (!this.db) return []
    const now = new Date()
    const rows = await this.db
      .selectFrom('jobs')
      .select(['kind', (eb) => eb.fn.min('due_at').as('due')])
      .where('state', '=', 'queued')
      .where('due_at', '<=', now)
      .groupBy('kind')
      .execute()
    return rows.map((row) => ({ kind: row.kind,
      age: (now.getTime() - new Date(row.due as unknown as string).getTime()) / 1000 }))
  }

  /**
   * The breaker's endpoints by state (webhooks/webhook-breaker.ts): paused, else backed off
   * while it has a backoff, else failing below the threshold.
   */
  private async endpointCounts(): Promise<Array<{ state: 'failing' | 'backed_off' | 'paused'
      n: string | number }>> {
    if (!this.db) return []
    const state = sql<'failing' | 'backed_off' | 'paused'>`case when paused_at is not null
      then 'paused' when backoff_until is not null then 'backed_off' else 'failing' end`
    return this.db.selectFrom('webhook_endpoint_health')
      .select([state.as('state'), (eb) => eb.fn.countAll<string>().as('n')])
      .groupBy(state).execute()
  }

  private async deliveryCounts(): Promise<Array<{ state: string; n: string | number }>> {
    if (!this.db) return []
    return this.db.selectFrom('webhook_deliveries').select(
      ['state', (eb) => eb.fn.countAll<string>().as('n')]).groupBy('state').execute()
  }
}

/** What the metrics server answers besides /metrics: readiness, when the bank gives its checks. */
export interface MetricsServerOptions {
  /** The readiness checks `/readyz` runs (readiness.ts); without them it answers ready. */
  readiness?: Readonly<Record<string, ReadinessCheck>> | undefined
}

/**
 * Serves `/metrics` (Prometheus text format), `/healthz` (alive: always 200) and `/readyz`
 * (200 when every readiness check passes, else 503 naming those that do not) on
 * `host:port`; resolves once listening.
 */
export async function serveMetrics(metrics: BankMetrics, host: string, port: number,
    log: Logger, options: MetricsServerOptions = {}): Promise<{ port: number;
      close(): Promise<void> }> {
  metrics.includeProcessMetrics()
  metrics.logTo(log)
  if (options.readiness) metrics.readinessGauge(options.readiness)
  const server = http.createServer((req, res) => {
    const route = req.method === 'GET' ? routes[(req.url ?? '').split('?')[0]!] : undefined
    if (!route) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(
        'not found; metrics are at /metrics, liveness at /healthz, readiness at /readyz\n')
      return
    }
    route(res)
  })
  const routes: Record<string, (res: http.ServerResponse) => void> = {
    '/metrics': (res) => void scrape(metrics, res, log),
    '/healthz': (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('alive\n'),
    '/readyz': (res) => void ready(options.readiness ?? {}, res),
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve())
  })
  const bound = (server.address() as AddressInfo).port
  log.info({ host, port: bound }, 'metrics served at /metrics, /healthz and /readyz')
  return {
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

async function scrape(metrics: BankMetrics, res: http.ServerResponse, log: Logger) {
  try {
    const text = await metrics.registry.metrics()
    res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text)
  } catch (error) {
    // The database reads leave their gauges out rather than fail; this is anything else.
    log.error({ err: error }, 'metrics scrape failed')
    res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics scrape failed\n')
  }
}

async function ready(checks: Readonly<Record<string, ReadinessCheck>>, res: http.ServerResponse) {
  const readiness = await checkReadiness(checks)
  res.writeHead(readiness.ready ? 200 : 503, { 'content-type': 'text/plain' })
    .end(readinessText(readiness))
}
